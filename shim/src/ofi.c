/* libloggp.so, libfabric layer: every message the MPI library moves through
 * a libfabric reliable-datagram endpoint gets o, g, G and L.
 *
 * How it attaches: fi_fabric is interposed (LD_PRELOAD); the objects it and
 * its descendants return stay the provider's own, but their ops-table
 * pointers are swapped for copies whose entries call in here first. Copies
 * are made with the table's run-time size, so a newer libfabric's longer
 * tables keep their tail. Each copy sits behind a small header holding the
 * original table and the object's state, so a hook finds both in O(1).
 *
 * What each knob does here:
 *  o_s  busy-wait in every posting call (sends, injects, RMA, atomics)
 *  o_r  busy-wait for every receive completion handed to the caller
 *  g,G  an endpoint's next injection waits until g + (k-1)G after the last
 *  L    receive completions are held in a FIFO per CQ until
 *       natural arrival + L + (k-1)G; the send time rides in the upper 32
 *       bits of remote CQ data, which MPICH leaves free
 *  RMA  origin counters count an operation only after post + 2L + (k-1)G */
#include "ofi.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "live.h"
#include "profile.h"
#include "reqtable.h"

/* ---- layer state ---------------------------------------------------------- */

static _Atomic int layer_enabled;
static _Atomic int layer_active;
static char provider_name[64];
/* Creation calls nested inside a wrapped creation call belong to a layered
 * provider's inner objects (rxm over tcp): leave those alone, so each message
 * is inflated once. */
static __thread int creation_depth __attribute__((tls_model("initial-exec")));
/* A provider may implement one entry through another of its own table
 * (read through readfrom, send through sendmsg): inside a hook, calls that come
 * back through a patched table go straight to the provider, so nothing is
 * delayed twice and nothing recurses. */
static __thread int in_hook __attribute__((tls_model("initial-exec")));

static _Atomic int64_t clock_correction;
/* Set from MPI_Finalize on: everything held is handed out at once, since the
 * MPI library may poll only until the completions it waits for are out, and a
 * freed request's completion held behind them would never reach it. */
static _Atomic int flushing;
/* Receive completions held across all CQs, for the flush. */
static _Atomic long held_total;
/* Longest break between two reads that still counts as polling. */
#define POLL_GAP_NS 2000u
/* A held entry due within this is waited for inside the read (about one
 * polling period of MPICH's progress loop over a fast provider). */
#define SPIN_AHEAD_NS 1500u

/* How long a natural-transit minimum is trusted: forever when all ranks read
 * one clock, a few seconds across hosts, where clocks drift apart. */
static _Atomic uint64_t transit_window_ns = 10000000000u;

void loggp_ofi_set_clock(int64_t correction_ns, int clocks_shared)
{
    atomic_store(&clock_correction, correction_ns);
    atomic_store(&transit_window_ns, clocks_shared ? UINT64_MAX : 10000000000u);
}

static inline uint64_t clock_ns(void)
{
    return loggp_now_ns() + (uint64_t)atomic_load_explicit(&clock_correction, memory_order_relaxed);
}

/* A clock_ns() time on this host's own clock (loggp_now_ns). */
static inline uint64_t local_ns(uint64_t clock_time)
{
    return clock_time - (uint64_t)atomic_load_explicit(&clock_correction, memory_order_relaxed);
}

void loggp_ofi_flush(void)
{
    atomic_store(&flushing, 1);
}

long loggp_ofi_held(void)
{
    return atomic_load(&held_total);
}

void loggp_ofi_enable(int on)
{
    atomic_store(&layer_enabled, on);
}

int loggp_ofi_active(void)
{
    return atomic_load(&layer_active);
}

const char *loggp_ofi_provider(void)
{
    return provider_name;
}

/* ---- patched ops tables --------------------------------------------------- */

typedef struct {
    void *orig;  /* the provider's table */
    void *state; /* the object's state */
} table_header;

#define HEADER(table) ((table_header *)(table) - 1)
#define ORIG(table, type) ((const type *)HEADER(table)->orig)
#define STATE(table, type) ((type *)HEADER(table)->state)

/* Does a provider table of run-time size `size` hold a non-NULL `member`? */
#define HAS_ENTRY(table, type, member) \
    ((table) && offsetof(type, member) < ((const type *)(table))->size && ((const type *)(table))->member)

/* Replaces *slot (a table pointer inside a provider object) by a copy. */
static void *patch_table(void *slot_ptr, size_t known_size, void *state)
{
    void **slot = slot_ptr;
    void *orig = *slot;
    if (!orig)
        return NULL;
    size_t size = *(const size_t *)orig;
    size_t bytes = size > known_size ? size : known_size;
    table_header *h = calloc(1, sizeof *h + bytes);
    if (!h)
        return NULL;
    h->orig = orig;
    h->state = state;
    memcpy(h + 1, orig, size);
    *slot = h + 1;
    return h + 1;
}

static void free_table(void *table)
{
    if (table)
        free(HEADER(table));
}

/* ---- send timestamps in remote CQ data ------------------------------------ */

/* Bits 0-31 stay the MPI library's. Bit 63 marks a stamp; bit 62 says the
 * sender gave no CQ data of its own; bits 32-61 hold the send time in 16 ns
 * units, which wraps every 17 s (more than the largest L). */
#define STAMP_MARK (UINT64_C(1) << 63)
#define STAMP_NO_DATA (UINT64_C(1) << 62)
#define STAMP_SHIFT 32
#define STAMP_BITS 30
#define STAMP_UNIT_SHIFT 4

static inline uint64_t stamp(uint64_t data, int had_data)
{
    uint64_t t = (clock_ns() >> STAMP_UNIT_SHIFT) & ((UINT64_C(1) << STAMP_BITS) - 1);
    return (data & 0xffffffffu) | STAMP_MARK | (had_data ? 0 : STAMP_NO_DATA) | (t << STAMP_SHIFT);
}

/* The send time of a stamp, as the latest time <= now with those bits. */
static inline uint64_t stamp_time(uint64_t data, uint64_t now)
{
    uint64_t t = (data >> STAMP_SHIFT) & ((UINT64_C(1) << STAMP_BITS) - 1);
    uint64_t now_units = now >> STAMP_UNIT_SHIFT;
    uint64_t age = (now_units - t) & ((UINT64_C(1) << STAMP_BITS) - 1);
    return (now_units - age) << STAMP_UNIT_SHIFT;
}

static inline int is_stamped(uint64_t flags, uint64_t data)
{
    return (flags & FI_REMOTE_CQ_DATA) && (data & STAMP_MARK);
}

/* Gives a receive entry back the sender's own CQ data (or none). */
static inline void strip_stamp(uint64_t *flags, uint64_t *data)
{
    if (*data & STAMP_NO_DATA) {
        *data = 0;
        *flags &= ~(uint64_t)FI_REMOTE_CQ_DATA;
    } else {
        *data &= 0xffffffffu;
    }
}

/* ---- counters: RMA completion at the origin ------------------------------- */

typedef struct {
    atomic_flag lock;
    uint64_t *due; /* FIFO of due times of tracked operations */
    size_t cap, head, count;
    uint64_t due_count; /* operations counted as done by time */
    uint64_t base;      /* value the counter started from */
    _Atomic size_t pending;
    void *fid_ops, *ops;
} cntr_state;

static void lock(atomic_flag *f)
{
    while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
        ;
}

static void unlock(atomic_flag *f)
{
    atomic_flag_clear_explicit(f, memory_order_release);
}

/* Grows a full FIFO ring of `elem` bytes per entry, moving its entries to the
 * front of the new ring (so *head becomes 0); -1 if memory ran out. */
static int ring_reserve(void **ring, size_t *cap, size_t *head, size_t count, size_t elem)
{
    if (count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    char *n = malloc(ncap * elem);
    if (!n)
        return -1;
    for (size_t i = 0; i < count; i++)
        memcpy(n + i * elem, (char *)*ring + ((*head + i) % *cap) * elem, elem);
    free(*ring);
    *ring = n;
    *cap = ncap;
    *head = 0;
    return 0;
}

/* Records an operation that will bump cs; due == 0 means done already. */
static void cntr_track(cntr_state *cs, uint64_t due)
{
    lock(&cs->lock);
    if (due && ring_reserve((void **)&cs->due, &cs->cap, &cs->head, cs->count, sizeof *cs->due) == 0) {
        cs->due[(cs->head + cs->count) % cs->cap] = due;
        cs->count++;
        atomic_store_explicit(&cs->pending, cs->count, memory_order_relaxed);
    } else {
        cs->due_count++;
    }
    unlock(&cs->lock);
}

/* The counter as the emulated network has it: operations complete in order,
 * and one counts only once both the real counter and its due time say so. */
static uint64_t cntr_virtual(cntr_state *cs, uint64_t real_value)
{
    lock(&cs->lock);
    uint64_t now = atomic_load_explicit(&flushing, memory_order_relaxed) ? UINT64_MAX : loggp_now_ns();
    while (cs->count && cs->due[cs->head] <= now) {
        cs->head = (cs->head + 1) % cs->cap;
        cs->count--;
        cs->due_count++;
    }
    atomic_store_explicit(&cs->pending, cs->count, memory_order_relaxed);
    uint64_t allowed = cs->base + cs->due_count;
    unlock(&cs->lock);
    return real_value < allowed ? real_value : allowed;
}

static uint64_t h_cntr_read(struct fid_cntr *cntr)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    uint64_t v = ORIG(cntr->ops, struct fi_ops_cntr)->read(cntr);
    if (!atomic_load_explicit(&cs->pending, memory_order_relaxed) && !loggp_live_active())
        return v;
    return cntr_virtual(cs, v);
}

static int h_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout_ms)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    const struct fi_ops_cntr *o = ORIG(cntr->ops, struct fi_ops_cntr);
    if (!atomic_load_explicit(&cs->pending, memory_order_relaxed))
        return o->wait(cntr, threshold, timeout_ms);
    uint64_t end = timeout_ms < 0 ? UINT64_MAX : loggp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        if (h_cntr_read(cntr) >= threshold)
            return 0;
        if (o->readerr(cntr))
            return -FI_EAVAIL;
        if (loggp_now_ns() >= end)
            return -FI_ETIMEDOUT;
    }
}

static int h_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    lock(&cs->lock);
    cs->base += value;
    unlock(&cs->lock);
    return ORIG(cntr->ops, struct fi_ops_cntr)->add(cntr, value);
}

static int h_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    lock(&cs->lock);
    /* From here on, count from `value` with everything tracked so far done. */
    cs->base = value;
    cs->due_count = 0;
    cs->head = cs->count = 0;
    atomic_store_explicit(&cs->pending, 0, memory_order_relaxed);
    unlock(&cs->lock);
    return ORIG(cntr->ops, struct fi_ops_cntr)->set(cntr, value);
}

static int h_cntr_close(struct fid *fid)
{
    struct fid_cntr *cntr = (struct fid_cntr *)fid;
    cntr_state *cs = STATE(fid->ops, cntr_state);
    void *ops = cntr->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(cs->fid_ops);
        free_table(ops);
        free(cs->due);
        free(cs);
    }
    return rc;
}

static void patch_cntr(struct fid_cntr *cntr)
{
    if (cntr->ops && cntr->ops->read == h_cntr_read)
        return; /* already ours (preloaded and loaded as a hook at once) */
    cntr_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return;
    atomic_flag_clear(&cs->lock);
    struct fi_ops_cntr *ops = patch_table(&cntr->ops, sizeof(struct fi_ops_cntr), cs);
    struct fi_ops *fops = patch_table(&cntr->fid.ops, sizeof(struct fi_ops), cs);
    if (!ops || !fops) {
        /* Leave the counter as the provider made it. */
        if (ops) {
            cntr->ops = HEADER(ops)->orig;
            free_table(ops);
        }
        if (fops) {
            cntr->fid.ops = HEADER(fops)->orig;
            free_table(fops);
        }
        free(cs);
        return;
    }
    cs->ops = ops;
    cs->fid_ops = fops;
    const struct fi_ops_cntr *o = HEADER(ops)->orig;
    cs->base = o->read ? o->read(cntr) : 0;
    if (HAS_ENTRY(o, struct fi_ops_cntr, read))
        ops->read = h_cntr_read;
    if (HAS_ENTRY(o, struct fi_ops_cntr, wait) && HAS_ENTRY(o, struct fi_ops_cntr, readerr))
        ops->wait = h_cntr_wait;
    if (HAS_ENTRY(o, struct fi_ops_cntr, add))
        ops->add = h_cntr_add;
    if (HAS_ENTRY(o, struct fi_ops_cntr, set))
        ops->set = h_cntr_set;
    fops->close = h_cntr_close;
}

/* ---- receive post times ---------------------------------------------------- */

/* When each tagged receive was posted, by its context: a receive seen after
 * the CQ was found drained since its post arrived after that read. */
static loggp_table receive_posts = LOGGP_TABLE_INIT(0);

static inline void note_receive_post(void *context)
{
    if (!context || !loggp_live_active())
        return;
    loggp_delays d;
    loggp_live_get(&d);
    if (d.L || d.G_ps) /* only a hold needs it */
        loggp_table_put(&receive_posts, (uint64_t)(uintptr_t)context, 1, clock_ns());
}

/* ---- completion queues: holding receives for L ---------------------------- */

typedef struct {
    struct fi_cq_tagged_entry e;
    fi_addr_t src;
    uint64_t due;
    uint64_t gap_ns;  /* g + (k-1)G this receive owes after the previous one */
    uint64_t gap_g_ns; /* the g in it */
    uint64_t take_ns; /* the provider's own time to hand it over (its share of a read) */
} held_entry;

#define TRANSIT_BUCKETS 48

typedef struct {
    atomic_flag lock;
    size_t entry_size;
    int has_flags, has_data;
    held_entry *ring;
    size_t cap, head;
    _Atomic size_t count;
    /* Natural transit time (first seen - send time) per size class: a windowed
     * minimum, which also absorbs a constant clock offset between hosts. */
    uint64_t transit_now[TRANSIT_BUCKETS], transit_prev[TRANSIT_BUCKETS];
    uint64_t window_start;
    /* End of the last read through this layer that left the CQ drained
     * (0: unknown). A receive posted before then and seen later was not there
     * yet, which bounds its natural arrival from below even when transit times
     * vary widely; reads this layer skips (zero knobs) cannot make it wrong. */
    _Atomic uint64_t drained_at;
    /* When the last read returned to the caller: a caller back within
     * POLL_GAP_NS was polling, so without the layer it would have seen a
     * message no earlier than now. */
    _Atomic uint64_t returned_at;
    /* The receive gap: when the last receive was handed to the caller, the
     * o_r spent on it (which the gap overlaps), and when the caller came back
     * for more (0: not yet). */
    uint64_t gap_released_at, gap_overhead_ns, gap_back_at;
    uint64_t gap_waited_ns[2]; /* this read's waits for g and for (k-1)G, for the counters */
    void *fid_ops, *ops;
} cq_state;

static uint64_t natural_transit(cq_state *cs, int bucket, uint64_t observed, uint64_t now)
{
    if (now - cs->window_start > atomic_load_explicit(&transit_window_ns, memory_order_relaxed)) {
        memcpy(cs->transit_prev, cs->transit_now, sizeof cs->transit_prev);
        for (int i = 0; i < TRANSIT_BUCKETS; i++)
            cs->transit_now[i] = UINT64_MAX;
        cs->window_start = now;
    }
    if (observed < cs->transit_now[bucket])
        cs->transit_now[bucket] = observed;
    uint64_t best = cs->transit_now[bucket] < cs->transit_prev[bucket] ? cs->transit_now[bucket]
                                                                         : cs->transit_prev[bucket];
    return best;
}

static inline int is_receive(uint64_t flags)
{
    return (flags & (FI_RECV | FI_MULTI_RECV)) && !(flags & FI_PEEK);
}

/* Strips the stamp from a receive entry and returns its due time: its
 * natural arrival plus L + (k-1)G. If the receive was posted and the caller
 * has polled the drained CQ ever since, the natural arrival is now; otherwise
 * it is bounded below by send time + the least transit seen for its size and
 * by the last drained read after the post. */
static uint64_t receive_due(cq_state *cs, struct fi_cq_tagged_entry *e, const loggp_delays *d, uint64_t now,
                            uint64_t drained_at, int polling)
{
    if (!(e->flags & FI_RECV))
        return 0; /* a multi-receive buffer's release: no message, it only keeps its place */
    uint64_t extra = d->L + loggp_bytes_delay_ns(d->G_ps, e->len);
    if (!cs->has_data || !is_stamped(e->flags, e->data))
        return extra ? now + extra : 0;
    uint64_t sent = stamp_time(e->data, now);
    loggp_req_info posted;
    uint64_t posted_at = 0; /* unknown: posted long ago (a multi-receive buffer) */
    if ((e->flags & FI_TAGGED) && !loggp_table_empty(&receive_posts) &&
        loggp_table_take(&receive_posts, (uint64_t)(uintptr_t)e->op_context, &posted))
        posted_at = posted.bytes;
    strip_stamp(&e->flags, &e->data);
    if (!extra)
        return 0;
    /* Measured from the send even when the receive came later: a late post
     * only lengthens a sample, so the minimum stays a true transit. */
    uint64_t observed = now > sent ? now - sent : 0;
    int bucket = loggp_bucket(e->len);
    if (bucket >= TRANSIT_BUCKETS)
        bucket = TRANSIT_BUCKETS - 1;
    uint64_t arrival = sent + natural_transit(cs, bucket, observed, now);
    /* posted before the CQ was last found drained, so it was not there then;
     * a receive posted later may have found its message already waiting */
    if (drained_at > posted_at) {
        if (polling || drained_at > arrival)
            arrival = polling ? now : drained_at;
    }
    if (arrival > now)
        arrival = now;
    return arrival + extra;
}

/* The earliest a receive owing gap_ns may be handed over: counted from when
 * the caller came back for it after the previous release (less the o_r
 * spent, which the gap overlaps; delay.h caps the caller's own time), plus
 * the provider's own time to hand it over. So g and (k-1)G add to a
 * receiver-bound stream's natural interval. */
static inline uint64_t gap_floor(const cq_state *cs, uint64_t gap_ns, uint64_t take_ns)
{
    if (!gap_ns || !cs->gap_released_at || !cs->gap_back_at)
        return 0;
    uint64_t wanted = cs->gap_back_at - cs->gap_released_at > cs->gap_overhead_ns
                          ? cs->gap_back_at - cs->gap_overhead_ns
                          : cs->gap_released_at;
    return loggp_gap_due(cs->gap_released_at, gap_ns + take_ns, wanted);
}

static void copy_out(cq_state *cs, void *buf, size_t index, const struct fi_cq_tagged_entry *e)
{
    memcpy((char *)buf + index * cs->entry_size, e, cs->entry_size);
}

/* When an entry due at `due` (L, (k-1)G) and owing gap_ns may go, given the
 * receives this read has already handed out. */
static inline uint64_t entry_due(const cq_state *cs, uint64_t due, uint64_t gap_ns, uint64_t take_ns,
                                 size_t receives)
{
    if (atomic_load_explicit(&flushing, memory_order_relaxed))
        return 0;
    if (!gap_ns)
        return due;
    if (receives)
        return UINT64_MAX; /* its gap counts from a release in this read: next read */
    uint64_t floor = gap_floor(cs, gap_ns, take_ns);
    return floor > due ? floor : due;
}

static inline uint64_t head_due(const cq_state *cs, size_t receives)
{
    const held_entry *h = &cs->ring[cs->head];
    return entry_due(cs, h->due, h->gap_ns, h->take_ns, receives);
}

/* Hands out held entries due by now, in order, into buf[out..count). */
static size_t release_due(cq_state *cs, void *buf, size_t count, size_t out, fi_addr_t *src, uint64_t now,
                          size_t *receives)
{
    while (out < count && cs->count) {
        uint64_t due = head_due(cs, *receives);
        if (due > now)
            break;
        held_entry *h = &cs->ring[cs->head];
        if (due > h->due) { /* held longer for the gap than for L and (k-1)G */
            uint64_t waited = due - h->due < h->gap_ns ? due - h->due : h->gap_ns;
            uint64_t for_g = (uint64_t)((unsigned __int128)waited * h->gap_g_ns / h->gap_ns);
            cs->gap_waited_ns[0] += for_g;
            cs->gap_waited_ns[1] += waited - for_g;
        }
        copy_out(cs, buf, out, &h->e);
        if (src)
            src[out] = h->src;
        *receives += (h->e.flags & FI_RECV) != 0;
        out++;
        cs->head = (cs->head + 1) % cs->cap;
        atomic_store_explicit(&cs->count, cs->count - 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&held_total, 1, memory_order_relaxed);
    }
    return out;
}

static inline ssize_t inner_read(const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count,
                                 int from, fi_addr_t *src)
{
    return from ? o->readfrom(cq, buf, count, src) : o->read(cq, buf, count);
}

static ssize_t cq_read_held(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count,
                            int from, fi_addr_t *src, const loggp_delays *knobs);

/* Only o_s / o_r set and nothing held: nothing to time or hold, so the read costs
 * no lock and no clock beyond the o_r spin, counted from when the entries were taken. */
static ssize_t cq_read_overhead_only(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf,
                                     size_t count, int from, fi_addr_t *src, uint64_t o_r)
{
    ssize_t rc = inner_read(o, cq, buf, count, from, src);
    if (rc <= 0)
        return rc;
    uint64_t returned = loggp_now_ns();
    size_t receives = 0;
    for (ssize_t i = 0; i < rc; i++) {
        /* the formats with CQ data start like fi_cq_data_entry */
        char *entry = (char *)buf + (size_t)i * cs->entry_size;
        uint64_t flags, data;
        memcpy(&flags, entry + offsetof(struct fi_cq_data_entry, flags), sizeof flags);
        if (cs->has_data && (flags & FI_RECV)) {
            memcpy(&data, entry + offsetof(struct fi_cq_data_entry, data), sizeof data);
            if (is_stamped(flags, data)) {
                strip_stamp(&flags, &data);
                memcpy(entry + offsetof(struct fi_cq_data_entry, flags), &flags, sizeof flags);
                memcpy(entry + offsetof(struct fi_cq_data_entry, data), &data, sizeof data);
            }
        }
        receives += is_receive(flags) && (flags & FI_RECV);
    }
    if (receives && o_r) {
        loggp_spin_until(returned + o_r * receives);
        loggp_my_counters()->injected_ns[LOGGP_INJ_OR] += o_r * receives;
    }
    return rc;
}

/* The read path shared by read and readfrom. */
static ssize_t cq_read_common(struct fid_cq *cq, void *buf, size_t count, int from, fi_addr_t *src)
{
    cq_state *cs = STATE(cq->ops, cq_state);
    const struct fi_ops_cq *o = ORIG(cq->ops, struct fi_ops_cq);
    if (!cs->has_flags || in_hook ||
        (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()))
        return inner_read(o, cq, buf, count, from, src);
    loggp_delays d;
    loggp_live_get(&d);
    in_hook++;
    ssize_t rc = !d.L && !d.G_ps && !d.g && !atomic_load_explicit(&cs->count, memory_order_relaxed)
                     ? cq_read_overhead_only(cs, o, cq, buf, count, from, src, d.o_r)
                     : cq_read_held(cs, o, cq, buf, count, from, src, &d);
    in_hook--;
    return rc;
}

static ssize_t cq_read_held(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count,
                            int from, fi_addr_t *src, const loggp_delays *knobs)
{
    /* Clock reads cost ~25 ns each and this runs on every poll: an empty poll
     * reads the clock once. */
    loggp_delays d = *knobs;
    size_t out = 0, receives = 0;
    uint64_t held_ns = 0;
    ssize_t inner_rc = 0;
    int gapped = d.g || d.G_ps;
    lock(&cs->lock);
    uint64_t start = clock_ns(), now = start, returned = start;
    if (gapped && cs->gap_released_at && !cs->gap_back_at)
        cs->gap_back_at = start;
    /* 1. entries whose time has come, in order */
    if (cs->count)
        out = release_due(cs, buf, count, 0, src, now, &receives);
    /* 2. new entries: at most as many as there is room for, so anything that
     * need not wait can be handed out at once */
    if (out < count) {
        enum { BATCH = 64 };
        struct fi_cq_tagged_entry fresh[BATCH];
        fi_addr_t fresh_src[BATCH];
        size_t want = count - out < BATCH ? count - out : BATCH;
        uint64_t drained_at = atomic_load_explicit(&cs->drained_at, memory_order_relaxed);
        int polling = drained_at && start - atomic_load_explicit(&cs->returned_at, memory_order_relaxed) <= POLL_GAP_NS;
        inner_rc = inner_read(o, cq, fresh, want, from, src ? fresh_src : NULL);
        int drained = inner_rc == -FI_EAGAIN || (inner_rc >= 0 && (size_t)inner_rc < want);
        if (inner_rc > 0)
            now = returned = clock_ns();
        /* an empty read found the CQ drained as of its start: a safe (early) bound */
        atomic_store_explicit(&cs->drained_at, drained ? now : 0, memory_order_relaxed);
        uint64_t take_ns = inner_rc > 0 ? (now - start) / (uint64_t)inner_rc : 0;
        for (ssize_t i = 0; i < inner_rc; i++) {
            struct fi_cq_tagged_entry e;
            memset(&e, 0, sizeof e);
            memcpy(&e, (char *)fresh + (size_t)i * cs->entry_size, cs->entry_size);
            uint64_t due = 0;
            if (e.flags & (FI_RECV | FI_MULTI_RECV)) {
                due = receive_due(cs, &e, &d, now, drained_at, polling);
                if (!is_receive(e.flags))
                    due = 0; /* a peek reports without waiting, so Iprobe never blocks */
            }
            uint64_t gap_ns = 0;
            if (e.flags & FI_RECV)
                gap_ns = d.g + loggp_bytes_delay_ns(d.G_ps, e.len);
            int must_wait = is_receive(e.flags) &&
                            (cs->count || entry_due(cs, due, gap_ns, take_ns, receives) > now);
            if (!must_wait) {
                if (gapped && (e.flags & FI_SEND) && !(e.flags & FI_RECV)) {
                    /* the injector was busy until the send naturally completed (delay.h) */
                    loggp_send_completed(local_ns(polling || !drained_at ? now : drained_at));
                }
                copy_out(cs, buf, out, &e);
                if (src)
                    src[out] = fresh_src[i];
                receives += is_receive(e.flags) && (e.flags & FI_RECV);
                out++;
                continue;
            }
            if (ring_reserve((void **)&cs->ring, &cs->cap, &cs->head, cs->count, sizeof *cs->ring) != 0) {
                /* No memory to hold it: deliver now rather than lose it. */
                copy_out(cs, buf, out, &e);
                if (src)
                    src[out] = fresh_src[i];
                out++;
                continue;
            }
            held_entry *h = &cs->ring[(cs->head + cs->count) % cs->cap];
            h->e = e;
            h->src = src ? fresh_src[i] : FI_ADDR_NOTAVAIL;
            h->due = due;
            h->gap_ns = gap_ns;
            h->gap_g_ns = gap_ns ? d.g : 0;
            h->take_ns = take_ns;
            if (due > now)
                held_ns += due - now;
            atomic_store_explicit(&cs->count, cs->count + 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&held_total, 1, memory_order_relaxed);
        }
    }
    /* 3. a head entry due sooner than the caller would poll again is waited
     * for here: releasing it on the next poll would add half a polling
     * period to every message on average */
    if (!out && cs->count) {
        uint64_t due = head_due(cs, receives);
        if (due <= now + SPIN_AHEAD_NS) {
            while ((now = clock_ns()) < due)
                ;
            out = release_due(cs, buf, count, 0, src, now, &receives);
            returned = now;
        }
    }
    int queue_empty = cs->count == 0;
    if (receives) {
        cs->gap_released_at = returned;
        cs->gap_overhead_ns = d.o_r * receives;
        cs->gap_back_at = 0;
    }
    uint64_t gap_waited_g = cs->gap_waited_ns[0], gap_waited_bytes = cs->gap_waited_ns[1];
    cs->gap_waited_ns[0] = cs->gap_waited_ns[1] = 0;
    unlock(&cs->lock);

    if (held_ns || gap_waited_g || gap_waited_bytes || (receives && d.o_r)) {
        loggp_counters *c = loggp_my_counters();
        /* a hold is L's if L is set, else (k-1)G's */
        c->injected_ns[d.L ? LOGGP_INJ_L : LOGGP_INJ_GBYTE] += held_ns;
        c->injected_ns[LOGGP_INJ_G] += gap_waited_g;
        c->injected_ns[LOGGP_INJ_GBYTE] += gap_waited_bytes;
        if (receives && d.o_r) {
            /* from when the completions were taken, so the layer's own work is inside o_r */
            uint64_t spun_to = loggp_spin_until(local_ns(returned) + d.o_r * receives);
            returned += spun_to - local_ns(returned);
            c->injected_ns[LOGGP_INJ_OR] += d.o_r * receives;
        }
    }
    atomic_store_explicit(&cs->returned_at, returned, memory_order_relaxed);
    if (out)
        return (ssize_t)out;
    /* An error waits behind held entries, so errors keep their place in the queue. */
    if (inner_rc == -FI_EAVAIL && !queue_empty)
        return -FI_EAGAIN;
    return inner_rc < 0 ? inner_rc : -FI_EAGAIN;
}

static ssize_t h_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
    return cq_read_common(cq, buf, count, 0, NULL);
}

static ssize_t h_cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
    return cq_read_common(cq, buf, count, 1, src);
}

/* Blocking reads: wait by polling the held queue and the provider. */
static ssize_t cq_sread_common(struct fid_cq *cq, void *buf, size_t count, int from, fi_addr_t *src,
                               int timeout_ms)
{
    uint64_t end = timeout_ms < 0 ? UINT64_MAX : loggp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        ssize_t rc = cq_read_common(cq, buf, count, from, src);
        if (rc != -FI_EAGAIN)
            return rc;
        if (loggp_now_ns() >= end)
            return -FI_EAGAIN;
    }
}

static ssize_t h_cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout)
{
    cq_state *cs = STATE(cq->ops, cq_state);
    if (in_hook || (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()))
        return ORIG(cq->ops, struct fi_ops_cq)->sread(cq, buf, count, cond, timeout);
    return cq_sread_common(cq, buf, count, 0, NULL, timeout);
}

static ssize_t h_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src, const void *cond,
                              int timeout)
{
    cq_state *cs = STATE(cq->ops, cq_state);
    if (in_hook || (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()))
        return ORIG(cq->ops, struct fi_ops_cq)->sreadfrom(cq, buf, count, src, cond, timeout);
    return cq_sread_common(cq, buf, count, 1, src, timeout);
}

static int h_cq_close(struct fid *fid)
{
    struct fid_cq *cq = (struct fid_cq *)fid;
    cq_state *cs = STATE(fid->ops, cq_state);
    void *ops = cq->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        atomic_fetch_sub_explicit(&held_total, (long)cs->count, memory_order_relaxed);
        free_table(cs->fid_ops);
        free_table(ops);
        free(cs->ring);
        free(cs);
    }
    return rc;
}

static void patch_cq(struct fid_cq *cq, enum fi_cq_format format)
{
    size_t entry_size;
    switch (format) {
    case FI_CQ_FORMAT_MSG:
        entry_size = sizeof(struct fi_cq_msg_entry);
        break;
    case FI_CQ_FORMAT_DATA:
        entry_size = sizeof(struct fi_cq_data_entry);
        break;
    case FI_CQ_FORMAT_TAGGED:
        entry_size = sizeof(struct fi_cq_tagged_entry);
        break;
    default:
        return; /* no flags to tell receives from the rest: leave it alone */
    }
    if (cq->ops && cq->ops->read == h_cq_read)
        return;
    cq_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return;
    atomic_flag_clear(&cs->lock);
    cs->entry_size = entry_size;
    cs->has_flags = 1;
    cs->has_data = format != FI_CQ_FORMAT_MSG;
    for (int i = 0; i < TRANSIT_BUCKETS; i++)
        cs->transit_now[i] = cs->transit_prev[i] = UINT64_MAX;
    cs->window_start = clock_ns();
    struct fi_ops_cq *ops = patch_table(&cq->ops, sizeof(struct fi_ops_cq), cs);
    if (!ops) {
        free(cs);
        return;
    }
    struct fi_ops *fops = patch_table(&cq->fid.ops, sizeof(struct fi_ops), cs);
    if (!fops) {
        cq->ops = HEADER(ops)->orig;
        free_table(ops);
        free(cs);
        return;
    }
    cs->ops = ops;
    cs->fid_ops = fops;
    const struct fi_ops_cq *o = HEADER(ops)->orig;
    if (HAS_ENTRY(o, struct fi_ops_cq, read))
        ops->read = h_cq_read;
    if (HAS_ENTRY(o, struct fi_ops_cq, readfrom))
        ops->readfrom = h_cq_readfrom;
    if (HAS_ENTRY(o, struct fi_ops_cq, sread))
        ops->sread = h_cq_sread;
    if (HAS_ENTRY(o, struct fi_ops_cq, sreadfrom))
        ops->sreadfrom = h_cq_sreadfrom;
    fops->close = h_cq_close;
}

/* ---- endpoints: o_s, g, G, stamps, RMA due times --------------------------- */

typedef struct ep_state {
    loggp_pacer pacer;
    _Atomic int os_prepaid; /* o_s already spent on a post the provider refused with -FI_EAGAIN */
    int stamps;             /* remote CQ data is 8 bytes: stamps fit */
    _Atomic(cntr_state *) write_cntr, read_cntr;
    void *fid_ops, *msg, *tagged, *rma, *atomic, *ep_ops;
} ep_state;

/* Before a post: o_s and the wait for the gap the last injection left. */
static void post_begin(ep_state *s, loggp_delays *d)
{
    loggp_live_get(d);
    loggp_counters *c = loggp_my_counters();
    uint64_t o_s = d->o_s && !atomic_exchange_explicit(&s->os_prepaid, 0, memory_order_relaxed) ? d->o_s : 0;
    loggp_gap_wait w = loggp_pacer_begin(&s->pacer, o_s);
    c->injected_ns[LOGGP_INJ_OS] += o_s;
    c->injected_ns[LOGGP_INJ_G] += w.g_ns;
    c->injected_ns[LOGGP_INJ_GBYTE] += w.bytes_ns;
}

/* After a post: a refused post keeps its o_s; an accepted one leaves the
 * injector owing g + (k-1)G. */
static void post_end(ep_state *s, const loggp_delays *d, ssize_t rc, uint64_t bytes)
{
    if (rc == -FI_EAGAIN) {
        if (d->o_s)
            atomic_store_explicit(&s->os_prepaid, 1, memory_order_relaxed);
        return;
    }
    if (rc < 0)
        return;
    loggp_pacer_done(&s->pacer, d->g, loggp_bytes_delay_ns(d->G_ps, bytes));
}

/* An RMA or atomic operation posted at post_time completes at the origin no
 * earlier than a round trip through the emulated network. */
static void rma_track(ep_state *s, int is_read, const loggp_delays *d, ssize_t rc, uint64_t post_time, uint64_t bytes)
{
    if (rc != 0)
        return;
    cntr_state *cs = atomic_load_explicit(is_read ? &s->read_cntr : &s->write_cntr, memory_order_relaxed);
    if (!cs)
        return;
    uint64_t extra = 2 * d->L + loggp_bytes_delay_ns(d->G_ps, bytes);
    cntr_track(cs, extra ? post_time + extra : 0);
}

static uint64_t iov_bytes(const struct iovec *iov, size_t count)
{
    uint64_t n = 0;
    for (size_t i = 0; iov && i < count; i++)
        n += iov[i].iov_len;
    return n;
}

static uint64_t atomic_type_size(enum fi_datatype type)
{
    switch (type) {
    case FI_INT8: case FI_UINT8: return 1;
    case FI_INT16: case FI_UINT16: return 2;
    case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
    case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX: return 8;
    case FI_DOUBLE_COMPLEX: case FI_LONG_DOUBLE: return 16;
    case FI_LONG_DOUBLE_COMPLEX: return 32;
    default: return 8;
    }
}

static uint64_t ioc_bytes(const struct fi_ioc *ioc, size_t count, enum fi_datatype type)
{
    uint64_t n = 0;
    for (size_t i = 0; ioc && i < count; i++)
        n += ioc[i].count;
    return n * atomic_type_size(type);
}

/* Sends: the table pointer names the state; `call` posts with the knobs in d. */
#define SEND_HOOK(table, type, bytes_expr, call, plain_call)            \
    ep_state *s = STATE(ep->table, ep_state);                           \
    const type *o = ORIG(ep->table, type);                              \
    if (!loggp_live_active() || in_hook)                                \
        return plain_call;                                              \
    loggp_delays d;                                                     \
    post_begin(s, &d);                                                  \
    int stamping = s->stamps && (d.L || d.G_ps); /* only the holds for L, G read them */ \
    (void)stamping;                                                     \
    in_hook++;                                                          \
    ssize_t rc = call;                                                  \
    in_hook--;                                                          \
    post_end(s, &d, rc, (bytes_expr));                                  \
    return rc;

/* ---- tagged messages (MPI point-to-point) ---- */

static ssize_t h_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t tag,
                       void *ctx)
{
    SEND_HOOK(tagged, struct fi_ops_tagged, len,
              stamping ? o->senddata(ep, buf, len, desc, stamp(0, 0), dest, tag, ctx)
                        : o->send(ep, buf, len, desc, dest, tag, ctx),
              o->send(ep, buf, len, desc, dest, tag, ctx))
}

static ssize_t h_tsendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                        uint64_t tag, void *ctx)
{
    /* Not stamped: turning it into sendmsg would change its completion flags. */
    SEND_HOOK(tagged, struct fi_ops_tagged, iov_bytes(iov, count), o->sendv(ep, iov, desc, count, dest, tag, ctx),
              o->sendv(ep, iov, desc, count, dest, tag, ctx))
}

static ssize_t tsendmsg_stamped(const struct fi_ops_tagged *o, struct fid_ep *ep, const struct fi_msg_tagged *msg,
                                uint64_t flags)
{
    struct fi_msg_tagged m = *msg;
    int had = (flags & FI_REMOTE_CQ_DATA) != 0;
    if (had && (m.data >> 32))
        return o->sendmsg(ep, msg, flags); /* the caller uses the upper bits itself */
    m.data = stamp(had ? m.data : 0, had);
    return o->sendmsg(ep, &m, flags | FI_REMOTE_CQ_DATA);
}

static ssize_t h_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    SEND_HOOK(tagged, struct fi_ops_tagged, iov_bytes(msg->msg_iov, msg->iov_count),
              stamping ? tsendmsg_stamped(o, ep, msg, flags) : o->sendmsg(ep, msg, flags),
              o->sendmsg(ep, msg, flags))
}

static ssize_t h_tinject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
    SEND_HOOK(tagged, struct fi_ops_tagged, len,
              stamping ? o->injectdata(ep, buf, len, stamp(0, 0), dest, tag) : o->inject(ep, buf, len, dest, tag),
              o->inject(ep, buf, len, dest, tag))
}

static ssize_t h_tsenddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
                           fi_addr_t dest, uint64_t tag, void *ctx)
{
    SEND_HOOK(tagged, struct fi_ops_tagged, len,
              o->senddata(ep, buf, len, desc, stamping && !(data >> 32) ? stamp(data, 1) : data, dest, tag, ctx),
              o->senddata(ep, buf, len, desc, data, dest, tag, ctx))
}

static ssize_t h_tinjectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                             uint64_t tag)
{
    SEND_HOOK(tagged, struct fi_ops_tagged, len,
              o->injectdata(ep, buf, len, stamping && !(data >> 32) ? stamp(data, 1) : data, dest, tag),
              o->injectdata(ep, buf, len, data, dest, tag))
}

static ssize_t h_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
                       uint64_t ignore, void *ctx)
{
    note_receive_post(ctx);
    return ORIG(ep->tagged, struct fi_ops_tagged)->recv(ep, buf, len, desc, src, tag, ignore, ctx);
}

static ssize_t h_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
                        uint64_t tag, uint64_t ignore, void *ctx)
{
    note_receive_post(ctx);
    return ORIG(ep->tagged, struct fi_ops_tagged)->recvv(ep, iov, desc, count, src, tag, ignore, ctx);
}

static ssize_t h_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    if (!(flags & FI_PEEK))
        note_receive_post(msg->context);
    return ORIG(ep->tagged, struct fi_ops_tagged)->recvmsg(ep, msg, flags);
}

/* ---- untagged messages (MPICH's active messages) ---- */

static ssize_t h_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, len,
              stamping ? o->senddata(ep, buf, len, desc, stamp(0, 0), dest, ctx) : o->send(ep, buf, len, desc, dest, ctx),
              o->send(ep, buf, len, desc, dest, ctx))
}

static ssize_t h_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                       void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, iov_bytes(iov, count), o->sendv(ep, iov, desc, count, dest, ctx),
              o->sendv(ep, iov, desc, count, dest, ctx))
}

static ssize_t sendmsg_stamped(const struct fi_ops_msg *o, struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    struct fi_msg m = *msg;
    int had = (flags & FI_REMOTE_CQ_DATA) != 0;
    if (had && (m.data >> 32))
        return o->sendmsg(ep, msg, flags);
    m.data = stamp(had ? m.data : 0, had);
    return o->sendmsg(ep, &m, flags | FI_REMOTE_CQ_DATA);
}

static ssize_t h_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    SEND_HOOK(msg, struct fi_ops_msg, iov_bytes(msg->msg_iov, msg->iov_count),
              stamping ? sendmsg_stamped(o, ep, msg, flags) : o->sendmsg(ep, msg, flags),
              o->sendmsg(ep, msg, flags))
}

static ssize_t h_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
    SEND_HOOK(msg, struct fi_ops_msg, len,
              stamping ? o->injectdata(ep, buf, len, stamp(0, 0), dest) : o->inject(ep, buf, len, dest),
              o->inject(ep, buf, len, dest))
}

static ssize_t h_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                          void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, len,
              o->senddata(ep, buf, len, desc, stamping && !(data >> 32) ? stamp(data, 1) : data, dest, ctx),
              o->senddata(ep, buf, len, desc, data, dest, ctx))
}

static ssize_t h_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
    SEND_HOOK(msg, struct fi_ops_msg, len,
              o->injectdata(ep, buf, len, stamping && !(data >> 32) ? stamp(data, 1) : data, dest),
              o->injectdata(ep, buf, len, data, dest))
}

/* ---- RMA and atomics: o_s, pacing, and origin completion after 2L ---- */

#define RMA_HOOK(table, type, is_read, bytes_expr, call)                \
    ep_state *s = STATE(ep->table, ep_state);                           \
    const type *o = ORIG(ep->table, type);                              \
    if (in_hook || (!loggp_live_active() && !atomic_load_explicit(      \
            (is_read) ? &s->read_cntr : &s->write_cntr, memory_order_relaxed))) \
        return call;                                                    \
    loggp_delays d;                                                     \
    uint64_t bytes = (bytes_expr);                                      \
    post_begin(s, &d);                                                  \
    uint64_t posted = loggp_now_ns();                                   \
    in_hook++;                                                          \
    ssize_t rc = call;                                                  \
    in_hook--;                                                          \
    post_end(s, &d, rc, bytes);                                         \
    rma_track(s, is_read, &d, rc, posted, bytes);                       \
    return rc;

static ssize_t h_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
                      uint64_t key, void *ctx)
{
    RMA_HOOK(rma, struct fi_ops_rma, 1, len, o->read(ep, buf, len, desc, src, addr, key, ctx))
}

static ssize_t h_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
                       uint64_t addr, uint64_t key, void *ctx)
{
    RMA_HOOK(rma, struct fi_ops_rma, 1, iov_bytes(iov, count), o->readv(ep, iov, desc, count, src, addr, key, ctx))
}

static ssize_t h_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    RMA_HOOK(rma, struct fi_ops_rma, 1, iov_bytes(msg->msg_iov, msg->iov_count), o->readmsg(ep, msg, flags))
}

static ssize_t h_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t addr,
                       uint64_t key, void *ctx)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, len, o->write(ep, buf, len, desc, dest, addr, key, ctx))
}

static ssize_t h_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                        uint64_t addr, uint64_t key, void *ctx)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, iov_bytes(iov, count), o->writev(ep, iov, desc, count, dest, addr, key, ctx))
}

static ssize_t h_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, iov_bytes(msg->msg_iov, msg->iov_count), o->writemsg(ep, msg, flags))
}

static ssize_t h_inject_write(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
                              uint64_t key)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, len, o->inject(ep, buf, len, dest, addr, key))
}

static ssize_t h_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                           uint64_t addr, uint64_t key, void *ctx)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, len, o->writedata(ep, buf, len, desc, data, dest, addr, key, ctx))
}

static ssize_t h_inject_writedata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                                  uint64_t addr, uint64_t key)
{
    RMA_HOOK(rma, struct fi_ops_rma, 0, len, o->injectdata(ep, buf, len, data, dest, addr, key))
}

static ssize_t h_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest,
                              uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 0, count * atomic_type_size(type),
             o->write(ep, buf, count, desc, dest, addr, key, type, op, ctx))
}

static ssize_t h_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                               fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op,
                               void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 0, ioc_bytes(iov, count, type),
             o->writev(ep, iov, desc, count, dest, addr, key, type, op, ctx))
}

static ssize_t h_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 0, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype),
             o->writemsg(ep, msg, flags))
}

static ssize_t h_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest, uint64_t addr,
                               uint64_t key, enum fi_datatype type, enum fi_op op)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 0, count * atomic_type_size(type),
             o->inject(ep, buf, count, dest, addr, key, type, op))
}

static ssize_t h_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
                                  void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                                  enum fi_datatype type, enum fi_op op, void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, count * atomic_type_size(type),
             o->readwrite(ep, buf, count, desc, result, result_desc, dest, addr, key, type, op, ctx))
}

static ssize_t h_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                                   struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
                                   uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, ioc_bytes(iov, count, type),
             o->readwritev(ep, iov, desc, count, resultv, result_desc, result_count, dest, addr, key, type, op, ctx))
}

static ssize_t h_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv,
                                     void **result_desc, size_t result_count, uint64_t flags)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype),
             o->readwritemsg(ep, msg, resultv, result_desc, result_count, flags))
}

static ssize_t h_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare,
                                  void *compare_desc, void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
                                  uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, count * atomic_type_size(type),
             o->compwrite(ep, buf, count, desc, compare, compare_desc, result, result_desc, dest, addr, key, type,
                          op, ctx))
}

static ssize_t h_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                                   const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
                                   struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
                                   uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, ioc_bytes(iov, count, type),
             o->compwritev(ep, iov, desc, count, comparev, compare_desc, compare_count, resultv, result_desc,
                           result_count, dest, addr, key, type, op, ctx))
}

static ssize_t h_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                                     const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
                                     struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
    RMA_HOOK(atomic, struct fi_ops_atomic, 1, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype),
             o->compwritemsg(ep, msg, comparev, compare_desc, compare_count, resultv, result_desc, result_count,
                             flags))
}

/* ---- endpoint objects ---- */

static void patch_ep(struct fid_ep *ep, int stamps);

static int h_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    ep_state *s = STATE(fid->ops, ep_state);
    int rc = ORIG(fid->ops, struct fi_ops)->bind(fid, bfid, flags);
    if (rc == 0 && bfid && bfid->fclass == FI_CLASS_CNTR) {
        struct fid_cntr *cntr = (struct fid_cntr *)bfid;
        /* only counters this layer wraps can be virtualised */
        if (cntr->fid.ops && ORIG(cntr->fid.ops, struct fi_ops)->close && cntr->fid.ops->close == h_cntr_close) {
            cntr_state *cs = STATE(cntr->ops, cntr_state);
            if (flags & FI_WRITE)
                atomic_store(&s->write_cntr, cs);
            if (flags & FI_READ)
                atomic_store(&s->read_cntr, cs);
        }
    }
    return rc;
}

static int h_ep_close(struct fid *fid)
{
    struct fid_ep *ep = (struct fid_ep *)fid;
    ep_state *s = STATE(fid->ops, ep_state);
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        (void)ep;
        free_table(s->fid_ops);
        free_table(s->msg);
        free_table(s->tagged);
        free_table(s->rma);
        free_table(s->atomic);
        free_table(s->ep_ops);
        free(s);
    }
    return rc;
}

/* Re-attaches to any table a provider swapped in while enabling the endpoint. */
static void repatch_tables(struct fid_ep *ep, ep_state *s);

static int h_ep_control(struct fid *fid, int command, void *arg)
{
    ep_state *s = STATE(fid->ops, ep_state);
    int rc = ORIG(fid->ops, struct fi_ops)->control(fid, command, arg);
    if (rc == 0 && command == FI_ENABLE)
        repatch_tables((struct fid_ep *)fid, s);
    return rc;
}

#define HOOK(tbl, type, member, fn)                   \
    do {                                              \
        if (HAS_ENTRY(HEADER(tbl)->orig, type, member)) \
            (tbl)->member = (fn);                     \
    } while (0)

static void *patch_tagged(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_tagged *t = patch_table(&ep->tagged, sizeof *t, s);
    if (!t)
        return NULL;
    const struct fi_ops_tagged *o = HEADER(t)->orig;
    int data_ok = s->stamps && HAS_ENTRY(o, struct fi_ops_tagged, senddata) &&
                  HAS_ENTRY(o, struct fi_ops_tagged, injectdata);
    HOOK(t, struct fi_ops_tagged, recv, h_trecv);
    HOOK(t, struct fi_ops_tagged, recvv, h_trecvv);
    HOOK(t, struct fi_ops_tagged, recvmsg, h_trecvmsg);
    HOOK(t, struct fi_ops_tagged, send, h_tsend);
    HOOK(t, struct fi_ops_tagged, sendv, h_tsendv);
    HOOK(t, struct fi_ops_tagged, sendmsg, h_tsendmsg);
    HOOK(t, struct fi_ops_tagged, inject, h_tinject);
    HOOK(t, struct fi_ops_tagged, senddata, h_tsenddata);
    HOOK(t, struct fi_ops_tagged, injectdata, h_tinjectdata);
    if (!data_ok)
        s->stamps = 0;
    return t;
}

static void *patch_msg(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_msg *m = patch_table(&ep->msg, sizeof *m, s);
    if (!m)
        return NULL;
    HOOK(m, struct fi_ops_msg, send, h_send);
    HOOK(m, struct fi_ops_msg, sendv, h_sendv);
    HOOK(m, struct fi_ops_msg, sendmsg, h_sendmsg);
    HOOK(m, struct fi_ops_msg, inject, h_inject);
    HOOK(m, struct fi_ops_msg, senddata, h_senddata);
    HOOK(m, struct fi_ops_msg, injectdata, h_injectdata);
    return m;
}

static void *patch_rma(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_rma *r = patch_table(&ep->rma, sizeof *r, s);
    if (!r)
        return NULL;
    HOOK(r, struct fi_ops_rma, read, h_read);
    HOOK(r, struct fi_ops_rma, readv, h_readv);
    HOOK(r, struct fi_ops_rma, readmsg, h_readmsg);
    HOOK(r, struct fi_ops_rma, write, h_write);
    HOOK(r, struct fi_ops_rma, writev, h_writev);
    HOOK(r, struct fi_ops_rma, writemsg, h_writemsg);
    HOOK(r, struct fi_ops_rma, inject, h_inject_write);
    HOOK(r, struct fi_ops_rma, writedata, h_writedata);
    HOOK(r, struct fi_ops_rma, injectdata, h_inject_writedata);
    return r;
}

static void *patch_atomic(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_atomic *a = patch_table(&ep->atomic, sizeof *a, s);
    if (!a)
        return NULL;
    HOOK(a, struct fi_ops_atomic, write, h_atomic_write);
    HOOK(a, struct fi_ops_atomic, writev, h_atomic_writev);
    HOOK(a, struct fi_ops_atomic, writemsg, h_atomic_writemsg);
    HOOK(a, struct fi_ops_atomic, inject, h_atomic_inject);
    HOOK(a, struct fi_ops_atomic, readwrite, h_atomic_readwrite);
    HOOK(a, struct fi_ops_atomic, readwritev, h_atomic_readwritev);
    HOOK(a, struct fi_ops_atomic, readwritemsg, h_atomic_readwritemsg);
    HOOK(a, struct fi_ops_atomic, compwrite, h_atomic_compwrite);
    HOOK(a, struct fi_ops_atomic, compwritev, h_atomic_compwritev);
    HOOK(a, struct fi_ops_atomic, compwritemsg, h_atomic_compwritemsg);
    return a;
}

static void repatch_tables(struct fid_ep *ep, ep_state *s)
{
    /* A table the provider replaced is no longer our copy: copy the new one. */
    if (ep->tagged && ep->tagged != s->tagged) {
        free_table(s->tagged);
        s->tagged = patch_tagged(ep, s);
    }
    if (ep->msg && ep->msg != s->msg) {
        free_table(s->msg);
        s->msg = patch_msg(ep, s);
    }
    if (ep->rma && ep->rma != s->rma) {
        free_table(s->rma);
        s->rma = patch_rma(ep, s);
    }
    if (ep->atomic && ep->atomic != s->atomic) {
        free_table(s->atomic);
        s->atomic = patch_atomic(ep, s);
    }
}

/* Scalable endpoints: each transmit context is an endpoint of its own. */
static int h_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx, void *ctx)
{
    ep_state *s = STATE(sep->ops, ep_state);
    int rc = ORIG(sep->ops, struct fi_ops_ep)->tx_ctx(sep, index, attr, tx, ctx);
    if (rc == 0)
        patch_ep(*tx, s->stamps);
    return rc;
}

static void patch_ep(struct fid_ep *ep, int stamps)
{
    if (ep->fid.ops && ep->fid.ops->close == h_ep_close)
        return;
    ep_state *s = calloc(1, sizeof *s);
    if (!s)
        return;
    s->stamps = stamps;
    struct fi_ops *f = patch_table(&ep->fid.ops, sizeof *f, s);
    if (!f) {
        free(s);
        return;
    }
    s->fid_ops = f;
    HOOK(f, struct fi_ops, bind, h_ep_bind);
    HOOK(f, struct fi_ops, control, h_ep_control);
    f->close = h_ep_close;
    s->tagged = patch_tagged(ep, s);
    s->msg = patch_msg(ep, s);
    s->rma = patch_rma(ep, s);
    s->atomic = patch_atomic(ep, s);
    if (ep->ops && HAS_ENTRY(ep->ops, struct fi_ops_ep, tx_ctx)) {
        struct fi_ops_ep *e = patch_table(&ep->ops, sizeof *e, s);
        if (e) {
            s->ep_ops = e;
            e->tx_ctx = h_tx_ctx;
        }
    }
}

/* ---- domains and fabrics ---- */

typedef struct {
    int stamps;
    void *fid_ops, *ops;
} domain_state;

static int is_rdm(const struct fi_info *info)
{
    return info && info->ep_attr && info->ep_attr->type == FI_EP_RDM;
}

static void note_provider(const struct fi_info *info)
{
    if (provider_name[0] || !info || !info->fabric_attr || !info->fabric_attr->prov_name)
        return;
    snprintf(provider_name, sizeof provider_name, "%s", info->fabric_attr->prov_name);
}

static int h_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq, void *ctx)
{
    int nested = creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->cq_open(domain, attr, cq, ctx);
    creation_depth--;
    if (rc == 0 && !nested && attr)
        patch_cq(*cq, attr->format);
    return rc;
}

static int h_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr, void *ctx)
{
    int nested = creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->cntr_open(domain, attr, cntr, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        patch_cntr(*cntr);
    return rc;
}

static void endpoint_opened(domain_state *ds, struct fi_info *info, struct fid_ep *ep)
{
    if (!is_rdm(info) || !atomic_load(&layer_enabled))
        return;
    patch_ep(ep, ds->stamps);
    note_provider(info);
    atomic_store(&layer_active, 1);
}

static int h_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->endpoint(domain, info, ep, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *ep);
    return rc;
}

static int h_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, uint64_t flags, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->endpoint2(domain, info, ep, flags, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *ep);
    return rc;
}

static int h_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->scalable_ep(domain, info, sep, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *sep);
    return rc;
}

static int h_domain_close(struct fid *fid)
{
    struct fid_domain *domain = (struct fid_domain *)fid;
    domain_state *ds = STATE(fid->ops, domain_state);
    void *ops = domain->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(ds->fid_ops);
        free_table(ops);
        free(ds);
    }
    return rc;
}

static void patch_domain(struct fid_domain *domain, const struct fi_info *info)
{
    if (domain->fid.ops && domain->fid.ops->close == h_domain_close)
        return;
    domain_state *ds = calloc(1, sizeof *ds);
    if (!ds)
        return;
    ds->stamps = info->domain_attr && info->domain_attr->cq_data_size >= 8;
    struct fi_ops_domain *d = patch_table(&domain->ops, sizeof *d, ds);
    if (!d) {
        free(ds);
        return;
    }
    struct fi_ops *f = patch_table(&domain->fid.ops, sizeof *f, ds);
    if (!f) {
        domain->ops = HEADER(d)->orig;
        free_table(d);
        free(ds);
        return;
    }
    ds->ops = d;
    ds->fid_ops = f;
    f->close = h_domain_close;
    HOOK(d, struct fi_ops_domain, cq_open, h_cq_open);
    HOOK(d, struct fi_ops_domain, cntr_open, h_cntr_open);
    HOOK(d, struct fi_ops_domain, endpoint, h_endpoint);
    HOOK(d, struct fi_ops_domain, endpoint2, h_endpoint2);
    HOOK(d, struct fi_ops_domain, scalable_ep, h_scalable_ep);
}

static void domain_opened(struct fi_info *info, struct fid_domain *domain)
{
    if (is_rdm(info) && atomic_load(&layer_enabled))
        patch_domain(domain, info);
}

static int h_fabric_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domain, void *ctx)
{
    int nested = creation_depth++ > 0;
    int rc = ORIG(fabric->ops, struct fi_ops_fabric)->domain(fabric, info, domain, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        domain_opened(info, *domain);
    return rc;
}

static int h_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domain,
                            uint64_t flags, void *ctx)
{
    int nested = creation_depth++ > 0;
    int rc = ORIG(fabric->ops, struct fi_ops_fabric)->domain2(fabric, info, domain, flags, ctx);
    creation_depth--;
    if (rc == 0 && !nested)
        domain_opened(info, *domain);
    return rc;
}

static int h_fabric_close(struct fid *fid)
{
    struct fid_fabric *fabric = (struct fid_fabric *)fid;
    void *fops = fid->ops, *ops = fabric->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(fops);
        free_table(ops);
    }
    return rc;
}

static void patch_fabric(struct fid_fabric *fabric)
{
    if (fabric->fid.ops && fabric->fid.ops->close == h_fabric_close)
        return;
    struct fi_ops_fabric *ops = patch_table(&fabric->ops, sizeof *ops, NULL);
    if (!ops)
        return;
    struct fi_ops *f = patch_table(&fabric->fid.ops, sizeof *f, NULL);
    if (!f) {
        fabric->ops = HEADER(ops)->orig;
        free_table(ops);
        return;
    }
    f->close = h_fabric_close;
    HOOK(ops, struct fi_ops_fabric, domain, h_fabric_domain);
    HOOK(ops, struct fi_ops_fabric, domain2, h_fabric_domain2);
}

/* ---- the entry points ---- */

/* As a libfabric hook provider (FI_HOOK=loggp, FI_PROVIDER_PATH naming the
 * folder with libloggp-fi.so): libfabric hands over each fabric it opens.
 * Without the PMPI layer nobody loaded the knobs yet: load them here. */
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

static void hook_start(void)
{
    char err[1024];
    if (loggp_live_start(err, sizeof err) != 0) {
        fprintf(stderr, "loggp: libfabric hook: %s; the hook stays off\n", err);
        return;
    }
    atomic_store(&layer_enabled, 1);
}

static int hook_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    (void)context;
    if (!attr || !attr->fabric)
        return -FI_EINVAL;
    if (!atomic_load(&layer_enabled))
        pthread_once(&hook_once, hook_start);
    if (atomic_load(&layer_enabled))
        patch_fabric(attr->fabric);
    *fabric = attr->fabric; /* patched in place: the hooked fabric is the fabric */
    return 0;
}

static void hook_cleanup(void)
{
}

static struct fi_provider hook_provider = {
    .version = FI_VERSION(0, 1),
    .fi_version = FI_VERSION(1, 3),
    .name = "loggp",
    .getinfo = NULL, /* what makes libfabric treat it as a hook */
    .fabric = hook_fabric,
    .cleanup = hook_cleanup,
};

struct fi_provider *fi_prov_ini(void);
struct fi_provider *fi_prov_ini(void)
{
    return &hook_provider;
}

typedef int (*fi_fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    static _Atomic(fi_fabric_fn) real;
    fi_fabric_fn next = atomic_load(&real);
    if (!next) {
        void *f = dlvsym(RTLD_NEXT, "fi_fabric", "FABRIC_1.1");
        if (!f)
            f = dlsym(RTLD_NEXT, "fi_fabric");
        if (!f)
            return -FI_ENOSYS;
        memcpy(&next, &f, sizeof f);
        atomic_store(&real, next);
    }
    int nested = creation_depth++ > 0;
    int rc = next(attr, fabric, context);
    creation_depth--;
    if (rc == 0 && !nested && atomic_load(&layer_enabled))
        patch_fabric(*fabric);
    return rc;
}
