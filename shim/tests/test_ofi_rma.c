/* RMA, atomics and counters through the layer (src/ofi/rma.c, atomic.c,
 * cntr.c): an origin's completion a round trip and its bytes after its post,
 * an atomic's bytes from its datatype's own size, a counter that counts an
 * operation once the provider and its due time both say so. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "ofi_test.h"

/* ---- RMA: the origin's completion, filed on the right counter ---- */

static cntr_state *tracked_on(cntr_state *cs)
{
    cr_assert_gt(cs->count, 0, "nothing tracked on this counter");
    return cs;
}

Test(ofi_rma, an_operation_completes_a_round_trip_and_its_bytes_after_its_post)
{
    ep_state s;
    cntr_state reads, writes;
    memset(&s, 0, sizeof s);
    memset(&reads, 0, sizeof reads);
    memset(&writes, 0, sizeof writes);
    atomic_store(&s.read_cntr, &reads);
    atomic_store(&s.write_cntr, &writes);
    loggp_delays d = {.L = 7000, .G_ps_per_byte = 3000}; /* 7 us, 3 ns per byte */
    rma_track(&s, 1, &d, 0, 1000000, 101);
    cr_assert_eq(writes.count, 0, "a read completes on the read counter only");
    cr_assert_eq(tracked_on(&reads)->due[reads.head], 1000000 + 2 * 7000 + 100 * 3,
                 "post + 2L + (k-1)G, got %llu", (unsigned long long)reads.due[reads.head]);
    rma_track(&s, 0, &d, 0, 2000000, 1);
    cr_assert_eq(reads.count, 1, "a write completes on the write counter only");
    cr_assert_eq(tracked_on(&writes)->due[writes.head], 2000000 + 2 * 7000, "one byte owes no G");
    /* a refused post owes nothing; no knobs: done already (counted, not held) */
    rma_track(&s, 0, &d, -FI_EAGAIN, 3000000, 8);
    cr_assert_eq(writes.count, 1);
    cr_assert_eq(writes.due_count, 0);
    loggp_delays none = {0};
    rma_track(&s, 0, &none, 0, 3000000, 8);
    cr_assert_eq(writes.count, 1);
    cr_assert_eq(writes.due_count, 1);
    free(reads.due);
    free(writes.due);
}

/* ---- atomics: their bytes from the datatype's own size, for (k-1)G ---- */

#include <complex.h>

static ssize_t fake_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest,
                                 uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    (void)ep, (void)buf, (void)count, (void)desc, (void)dest, (void)addr, (void)key, (void)type, (void)op, (void)ctx;
    return 0;
}

static ssize_t fake_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
                                     void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                                     enum fi_datatype type, enum fi_op op, void *ctx)
{
    (void)ep, (void)buf, (void)count, (void)desc, (void)result, (void)result_desc, (void)dest, (void)addr;
    (void)key, (void)type, (void)op, (void)ctx;
    return 0;
}

/* ns from just before an atomic of `count` elements of `type` (a write, else a fetch) to its
 * tracked origin completion, on a fresh endpoint (nothing owed to its pacer); *took: the call's length. */
static uint64_t atomic_due_after(enum fi_datatype type, size_t count, int write, uint64_t *took)
{
    static struct fi_ops fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close};
    static struct fi_ops_atomic atomic_ops = {.size = sizeof(struct fi_ops_atomic), .write = fake_atomic_write,
                                             .readwrite = fake_atomic_readwrite};
    struct fid_ep *ep = calloc(1, sizeof *ep);
    cntr_state *cs = calloc(1, sizeof *cs);
    cr_assert(ep && cs);
    ep->fid.fclass = FI_CLASS_EP;
    ep->fid.ops = &fid_ops;
    ep->atomic = &atomic_ops;
    patch_ep(ep, 0);
    ep_state *s = ep_state_of(ep);
    atomic_store(write ? &s->write_cntr : &s->read_cntr, cs);
    char buf[1];
    uint64_t before = loggp_now_ns();
    ssize_t rc = write ? fi_atomic(ep, buf, count, NULL, 0, 0, 0, type, FI_SUM, NULL)
                       : fi_fetch_atomic(ep, buf, count, NULL, buf, NULL, 0, 0, 0, type, FI_SUM, NULL);
    *took = loggp_now_ns() - before;
    cr_assert_eq(rc, 0);
    cr_assert_eq(cs->count, 1, "the atomic was not tracked on its counter");
    return cs->due[cs->head] - before;
}

Test(ofi_rma, an_atomic_owes_G_for_its_datatypes_own_size)
{
    static const struct {
        enum fi_datatype type;
        size_t size;
    } types[] = {{FI_INT8, sizeof(int8_t)},   {FI_UINT16, sizeof(uint16_t)},
                 {FI_INT32, sizeof(int32_t)}, {FI_FLOAT, sizeof(float)},
                 {FI_UINT64, sizeof(uint64_t)}, {FI_DOUBLE, sizeof(double)},
                 {FI_FLOAT_COMPLEX, sizeof(float complex)}, {FI_DOUBLE_COMPLEX, sizeof(double complex)},
                 {FI_LONG_DOUBLE, sizeof(long double)}, {FI_LONG_DOUBLE_COMPLEX, sizeof(long double complex)}};
    set_knob(LOGGP_KNOB_GAP_PER_BYTE, 1); /* 1 ns per byte (set_knob takes ns): bytes - 1 ns owed */
    const size_t count = 10000;           /* each byte of an element's size: 10 us */
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        for (int write = 0; write < 2; write++) {
            uint64_t took, owed = count * types[i].size - 1;
            uint64_t due = atomic_due_after(types[i].type, count, write, &took);
            cr_expect(due >= owed && due <= owed + took, "%s of %zu x type %d: due %llu ns on, not (k-1)G = %llu",
                      write ? "write" : "fetch", count, (int)types[i].type, (unsigned long long)due,
                      (unsigned long long)owed);
        }
}

/* ---- the counter as the emulated network has it: the provider's value, held back by due times ---- */

static uint64_t provider_count;

static uint64_t fake_cntr_read(struct fid_cntr *cntr)
{
    (void)cntr;
    return provider_count;
}

static int fake_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
    (void)cntr;
    provider_count += value;
    return 0;
}

static int fake_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
    (void)cntr;
    provider_count = value;
    return 0;
}

Test(ofi_rma, a_counter_counts_an_operation_once_both_the_provider_and_its_due_time_say_so)
{
    static struct fi_ops fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close};
    static struct fi_ops_cntr ops = {.size = sizeof(struct fi_ops_cntr), .read = fake_cntr_read,
                                     .add = fake_cntr_add, .set = fake_cntr_set};
    static struct fid_cntr cntr;
    cntr.fid.fclass = FI_CLASS_CNTR;
    cntr.fid.ops = &fid_ops;
    cntr.ops = &ops;
    provider_count = 5; /* counted before the layer saw the counter */
    patch_cntr(&cntr);
    cntr_state *cs = cntr_state_of(&cntr);
    cr_assert_not_null(cs);
    set_knob(LOGGP_KNOB_LATENCY, 1000 * MS);
    cr_assert_eq(fi_cntr_read(&cntr), 5, "what the provider counted before stays counted");
    uint64_t now = loggp_now_ns();
    cntr_track(cs, now - 1);            /* due already */
    cntr_track(cs, now + 1000 * MS);    /* due in a second */
    cr_assert_eq(fi_cntr_read(&cntr), 5, "due, but the provider has not done it: not counted");
    provider_count = 7;
    cr_assert_eq(fi_cntr_read(&cntr), 6, "both done by the provider, one due: one counted");
    /* the caller's own additions count at once, on both sides */
    cr_assert_eq(fi_cntr_add(&cntr, 3), 0);
    cr_assert_eq(fi_cntr_read(&cntr), 9);
    /* a set counts from its value, everything tracked before done */
    cr_assert_eq(fi_cntr_set(&cntr, 100), 0);
    cr_assert_eq(fi_cntr_read(&cntr), 100);
    cr_assert_eq(atomic_load(&cs->pending), 0, "the operation tracked before the set still pends");
    cntr_track(cs, loggp_now_ns() + 1000 * MS);
    provider_count = 101;
    cr_assert_eq(fi_cntr_read(&cntr), 100, "an operation after the set, not due yet, is not counted");
}
