/* The completion-queue hooks on a fake provider CQ (src/ofi/cq.c,
 * cq_hold.c, send_post.c): o_r spins per receive handed out, L holds a
 * receive, sends pass at once unless shm moves them by rendezvous. Times are
 * asserted from below only (a spin or a hold never ends early), so a loaded
 * machine cannot fail them; each knob is set far above any scheduling noise
 * so a knob doing half its job fails. */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "layer.h"
#include "ofi_test.h"


/* ---- a provider CQ that hands out what the test queued ---- */

static struct fi_cq_tagged_entry queued[64];
static size_t queued_head, queued_count;

static void queue_completion(void *context, uint64_t flags, size_t len, uint64_t data)
{
    struct fi_cq_tagged_entry e = {.op_context = context, .flags = flags, .len = len, .data = data};
    queued[(queued_head + queued_count++) % 64] = e;
}

static void queue_entry(uint64_t flags, size_t len, uint64_t data)
{
    queue_completion(NULL, flags, len, data);
}

static ssize_t fake_read(struct fid_cq *cq, void *buf, size_t count)
{
    (void)cq;
    size_t n = 0;
    for (; n < count && queued_count; n++, queued_count--, queued_head = (queued_head + 1) % 64)
        ((struct fi_cq_tagged_entry *)buf)[n] = queued[queued_head];
    return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t fake_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
    ssize_t n = fake_read(cq, buf, count);
    for (ssize_t i = 0; i < n; i++)
        src[i] = 1;
    return n;
}

static struct fi_ops_cq fake_cq_ops = {.size = sizeof(struct fi_ops_cq), .read = fake_read,
                                       .readfrom = fake_readfrom};
static struct fi_ops fake_fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close};
static struct fid_cq fake_cq;

static void open_cq(void)
{
    queued_head = queued_count = 0;
    memset(&fake_cq, 0, sizeof fake_cq);
    fake_cq.fid.fclass = FI_CLASS_CQ;
    fake_cq.fid.ops = &fake_fid_ops;
    fake_cq.ops = &fake_cq_ops;
    patch_cq(&fake_cq, FI_CQ_FORMAT_TAGGED);
}

static void close_cq(void)
{
    fi_close(&fake_cq.fid);
    loggp_knobs none = {0};
    loggp_live_publish(&none);
}

/* Reads until n entries came out; returns when the last did. */
static uint64_t read_all(size_t n, struct fi_cq_tagged_entry *out)
{
    size_t got = 0;
    uint64_t give_up = loggp_now_ns() + 10000u * MS;
    while (got < n) {
        ssize_t rc = fi_cq_read(&fake_cq, out + got, n - got);
        if (rc > 0)
            got += (size_t)rc;
        else
            cr_assert_eq(rc, -FI_EAGAIN, "read failed: %zd", rc);
        cr_assert(loggp_now_ns() < give_up, "only %zu of %zu entries came out", got, n);
    }
    return loggp_now_ns();
}

TestSuite(ofi_cq, .init = open_cq, .fini = close_cq);

Test(ofi_cq, o_r_spins_for_each_receive_handed_out)
{
    set_knob(LOGGP_KNOB_O_R, 20 * MS);
    for (int i = 0; i < 3; i++)
        queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[3];
    uint64_t start = loggp_now_ns();
    uint64_t end = read_all(3, out);
    cr_assert_geq(end - start, 3 * 20 * MS, "3 receives with o_r = 20 ms took %llu ns",
                  (unsigned long long)(end - start));
}

Test(ofi_cq, o_r_spares_sends)
{
    set_knob(LOGGP_KNOB_O_R, 200 * MS);
    queue_entry(FI_SEND | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[1];
    uint64_t start = loggp_now_ns();
    read_all(1, out);
    /* the spin would take 200 ms; handing one entry over takes microseconds */
    cr_assert_lt(loggp_now_ns() - start, 200 * MS);
}

Test(ofi_cq, L_holds_a_receive_until_it_is_due)
{
    set_knob(LOGGP_KNOB_LATENCY, 40 * MS);
    uint64_t start = loggp_now_ns();
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[1];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN, "an L = 40 ms receive came out at once");
    uint64_t end = read_all(1, out);
    cr_assert_geq(end - start, 40 * MS, "held %llu ns for L = 40 ms", (unsigned long long)(end - start));
}

Test(ofi_cq, a_stamped_receive_is_held_from_its_send_and_gets_its_data_back)
{
    set_knob(LOGGP_KNOB_LATENCY, 40 * MS);
    uint64_t sent = clock_ns();
    queue_entry(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 8, stamp_encode(0x1234, 1, sent, 0));
    struct fi_cq_tagged_entry out[1];
    uint64_t end = read_all(1, out);
    cr_assert_geq(end + 16, sent + 40 * MS);
    cr_assert_eq(out[0].data, 0x1234);
    cr_assert(out[0].flags & FI_REMOTE_CQ_DATA);
}

Test(ofi_cq, the_gap_spaces_receptions_handed_out_in_one_read)
{
    set_knob(LOGGP_KNOB_GAP, 20 * MS);
    for (int i = 0; i < 3; i++)
        queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[3];
    uint64_t start = loggp_now_ns();
    uint64_t end = read_all(3, out);
    cr_assert_geq(end - start, 2 * 20 * MS, "3 receptions with g = 20 ms took %llu ns",
                  (unsigned long long)(end - start));
}

Test(ofi_cq, a_backlog_the_gap_already_spaced_goes_in_one_read)
{
    set_knob(LOGGP_KNOB_GAP, 1 * MS);
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[3];
    read_all(1, out);
    struct fi_cq_tagged_entry none[1];
    cr_assert_eq(fi_cq_read(&fake_cq, none, 1), -FI_EAGAIN); /* found drained */
    /* away for 10 gaps: three receptions fitted in meanwhile */
    struct timespec away = {0, 10 * MS};
    nanosleep(&away, NULL);
    for (int i = 0; i < 3; i++)
        queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    cr_assert_eq(fi_cq_read(&fake_cq, out, 3), 3);
}

/* A receiver away (descheduled) while its sender, paced by g, sent four
 * more, takes them as MPICH does: one receive posted after each read found
 * the CQ drained, each finding its message waiting. Each was received g after
 * the one before while the receiver was away (g is a minimum spacing: the
 * absence overlaps the sender's gaps), so none waits again; a reception
 * counted when it was handed over would space them g apart once more. */
Test(ofi_cq, a_backlog_taken_one_posted_receive_at_a_time_goes_at_once)
{
    set_knob(LOGGP_KNOB_GAP, 20 * MS);
    cq_state *cs = cq_state_of(&fake_cq);
    int receive[5];
    struct fi_cq_tagged_entry out[4];
    uint64_t start = clock_ns();
    for (int i = 0; i < 5; i++) {
        note_receive_post_on(cs, &receive[i], 8);
        queue_completion(&receive[i], FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 8,
                         stamp_encode(0, 0, start + (uint64_t)i * 20 * MS, 0));
        cr_assert_eq(fi_cq_read(&fake_cq, out, 4), 1, "reception %d waited for a gap spent while away", i);
        cr_assert_eq(out[0].op_context, &receive[i]);
        cr_assert_eq(fi_cq_read(&fake_cq, out, 4), -FI_EAGAIN); /* found drained */
        if (i == 0) { /* away for five gaps */
            struct timespec away = {0, 100 * MS};
            nanosleep(&away, NULL);
        }
    }
}

/* ---- the zero-knob path: the provider's own table, nothing of ours ---- */

TestSuite(ofi_cq_switch, .init = open_cq, .fini = close_cq);

Test(ofi_cq_switch, zero_knobs_leave_the_providers_table_in_place)
{
    cr_assert_eq(fake_cq.ops, &fake_cq_ops, "with every knob zero MPICH must call the provider directly");
    set_knob(LOGGP_KNOB_O_R, 1000);
    cr_assert_neq(fake_cq.ops, &fake_cq_ops, "a nonzero knob switches to the layer's table");
    set_knob(LOGGP_KNOB_O_R, 0);
    cr_assert_eq(fake_cq.ops, &fake_cq_ops, "knobs back at zero switch back");
}

Test(ofi_cq_switch, a_cq_holding_completions_stays_patched_until_drained)
{
    set_knob(LOGGP_KNOB_LATENCY, 20 * MS);
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[1];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN);
    set_knob(LOGGP_KNOB_LATENCY, 0);
    cr_assert_neq(fake_cq.ops, &fake_cq_ops, "the held receive would be lost");
    /* a message already in flight keeps its L */
    read_all(1, out);
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN);
    cr_assert_eq(fake_cq.ops, &fake_cq_ops, "a drained CQ switches itself back");
}

Test(ofi_cq_switch, a_receive_held_before_a_suspension_keeps_its_hold)
{
    set_knob(LOGGP_KNOB_LATENCY, 30 * MS);
    uint64_t start = loggp_now_ns();
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[2];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN);
    loggp_live_suspend(); /* the library's own messages start: they pass, the program's stays held */
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN, "suspending flushed a held receive");
    uint64_t end = read_all(2, out);
    cr_assert_geq(end - start, 30 * MS);
    loggp_live_resume();
}

Test(ofi_cq_switch, a_receive_sent_before_the_switch_is_held_from_when_it_is_seen)
{
    /* its sender posted it through the provider's table: no stamp */
    queue_entry(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, 8, 0x7);
    set_knob(LOGGP_KNOB_LATENCY, 30 * MS);
    uint64_t start = loggp_now_ns();
    struct fi_cq_tagged_entry out[1];
    uint64_t end = read_all(1, out);
    cr_assert_geq(end - start, 30 * MS);
    cr_assert_lt(end - start, 5000u * MS, "waited for a stamp that never came");
    cr_assert_eq(out[0].data, 0x7);
}

/* ---- jitter: each receive its own L, the hold's order kept ---- */

#include <stdlib.h>

#include "jitter.h"

static void jitter_off(void)
{
    unsetenv("LOGGP_L_JITTER");
    char err[256];
    loggp_jitter_start(err, sizeof err);
    close_cq();
}

TestSuite(ofi_cq_jitter, .init = open_cq, .fini = jitter_off);

Test(ofi_cq_jitter, receives_come_out_in_the_order_they_arrived_whatever_their_draws)
{
    setenv("LOGGP_L_JITTER", "normal:2ms", 1);
    setenv("LOGGP_SEED", "5", 1);
    char err[256];
    cr_assert_eq(loggp_jitter_start(err, sizeof err), 0, "%s", err);
    unsetenv("LOGGP_SEED");
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    enum { N = 48 };
    struct fi_cq_tagged_entry out[N];
    size_t got = 0;
    /* arrivals spread over reads, so later ones with short draws meet earlier ones still held */
    for (size_t i = 0; i < N; i++) {
        queue_entry(FI_RECV | FI_TAGGED, 8, 0);
        queued[(queued_head + queued_count - 1) % 64].op_context = (void *)(i + 1);
        ssize_t rc = fi_cq_read(&fake_cq, out + got, N - got);
        if (rc > 0)
            got += (size_t)rc;
    }
    read_all(N - got, out + got);
    for (size_t i = 0; i < N; i++)
        cr_assert_eq((size_t)out[i].op_context, i + 1, "position %zu holds receive %zu", i,
                     (size_t)out[i].op_context);
}

/* ---- sends of rendezvous size (send_post.c, docs/protocols.md) ---- */

static void open_cq_on_shm(void)
{
    struct fi_fabric_attr fabric = {.prov_name = "shm"};
    struct fi_info info = {.fabric_attr = &fabric};
    ofi_note_provider(&info);
    cr_assert_str_eq(loggp_ofi_provider(), "shm");
    open_cq();
}

TestSuite(ofi_cq_send, .init = open_cq_on_shm, .fini = close_cq);

/* Files a send of `bytes` posted now with the knobs in force; returns when. */
static uint64_t post_send(void *context, uint64_t bytes)
{
    loggp_delays d;
    loggp_live_get(&d);
    uint64_t posted = clock_ns();
    note_send_post_on(cq_state_of(&fake_cq), context, posted, bytes, &d);
    return posted;
}

Test(ofi_cq_send, a_rendezvous_send_completes_two_flights_after_its_post)
{
    set_knob(LOGGP_KNOB_LATENCY, 20 * MS);
    int request;
    uint64_t posted = post_send(&request, 8192);
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[1];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN, "the send completed before its handshake");
    uint64_t end = read_all(1, out);
    cr_assert_eq(out[0].op_context, &request);
    cr_assert_geq(end - posted, 2 * 20 * MS, "completed %llu ns after its post, 2L = 40 ms",
                  (unsigned long long)(end - posted));
}

Test(ofi_cq_send, G_alone_holds_a_rendezvous_send_for_its_bytes)
{
    set_knob(LOGGP_KNOB_GAP_PER_BYTE, 5); /* 5 ns per byte: 8 MiB take 42 ms */
    int request;
    uint64_t posted = post_send(&request, 8u << 20);
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[1];
    uint64_t end = read_all(1, out);
    uint64_t owed = loggp_bytes_delay_ns(5000, 8u << 20);
    cr_assert_geq(end - posted, owed, "held %llu ns for (k-1)G = %llu", (unsigned long long)(end - posted),
                  (unsigned long long)owed);
}

Test(ofi_cq_send, an_eager_send_and_one_never_filed_pass_at_once)
{
    set_knob(LOGGP_KNOB_LATENCY, 200 * MS);
    int eager, unfiled;
    post_send(&eager, 4096); /* within shm's inject size: no rendezvous */
    queue_completion(&eager, FI_SEND | FI_TAGGED, 0, 0);
    queue_completion(&unfiled, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[2];
    uint64_t start = loggp_now_ns();
    cr_assert_eq(fi_cq_read(&fake_cq, out, 2), 2);
    cr_assert_lt(loggp_now_ns() - start, 200 * MS);
}

Test(ofi_cq_send, a_record_left_under_other_knobs_holds_no_later_send)
{
    set_knob(LOGGP_KNOB_LATENCY, 200 * MS);
    int request;
    post_send(&request, 65536);
    /* the knobs go to zero before its completion is read: it passes unheld
     * and its record stays behind */
    set_knob(LOGGP_KNOB_LATENCY, 0);
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[1];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), 1);
    /* armed again, a send that reuses the context but was never filed (posted
     * while the knobs were zero) completes */
    set_knob(LOGGP_KNOB_LATENCY, 200 * MS);
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    uint64_t start = loggp_now_ns();
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), 1, "held by the record another send left");
    cr_assert_lt(loggp_now_ns() - start, 200 * MS);
}

Test(ofi_cq_send, a_receive_behind_a_held_send_goes_at_its_own_time)
{
    set_knob(LOGGP_KNOB_LATENCY, 20 * MS);
    int request;
    uint64_t posted = post_send(&request, 65536);
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    queue_entry(FI_RECV | FI_TAGGED, 8, 0);
    struct fi_cq_tagged_entry out[2];
    read_all(1, out);
    cr_assert(out[0].flags & FI_RECV, "the receive (due L) waited behind the send (due 2L)");
    uint64_t second = read_all(1, out + 1);
    cr_assert_eq(out[1].op_context, &request);
    cr_assert_geq(second - posted, 2 * 20 * MS, "the send completed %llu ns after its post, 2L = 40 ms",
                  (unsigned long long)(second - posted));
}

/* Both ranks of an exchange send at once: each holds the peer's rendezvous
 * receive (3L after the peer's send) and its own send (2L after its post). A
 * send waiting behind that receive took 3L instead of 2L. */
Test(ofi_cq_send, a_held_send_does_not_wait_for_a_receive_held_before_it)
{
    loggp_knobs k = {0};
    k.ps[LOGGP_KNOB_LATENCY] = (int64_t)20 * MS * 1000;
    k.ps[LOGGP_KNOB_GAP_PER_BYTE] = 5000; /* 5 ns/B: 8 MiB owe 42 ms, 64 KiB 0.3 ms */
    loggp_live_publish(&k);
    int request;
    uint64_t posted = post_send(&request, 65536);  /* due 2L + 0.3 ms after its post */
    queue_entry(FI_RECV | FI_TAGGED, 8u << 20, 0); /* unstamped: due L + (k-1)G = 62 ms after it is seen */
    queue_completion(&request, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[2];
    uint64_t first = read_all(1, out);
    cr_assert_eq(out[0].op_context, &request, "the send waited behind the receive held before it");
    cr_assert_geq(first - posted, 2 * 20 * MS);
    uint64_t second = read_all(1, out + 1);
    cr_assert(out[1].flags & FI_RECV);
    cr_assert_geq(second - posted, 20 * MS + loggp_bytes_delay_ns(5000, 8u << 20), "the receive's hold was cut short");
}

/* Sends among themselves keep the order they completed in. */
Test(ofi_cq_send, held_sends_keep_their_order)
{
    set_knob(LOGGP_KNOB_LATENCY, 20 * MS);
    int first_req, second_req;
    post_send(&first_req, 65536);
    post_send(&second_req, 65536);
    queue_completion(&first_req, FI_SEND | FI_TAGGED, 0, 0);
    queue_completion(&second_req, FI_SEND | FI_TAGGED, 0, 0);
    struct fi_cq_tagged_entry out[2];
    read_all(2, out);
    cr_assert_eq(out[0].op_context, &first_req);
    cr_assert_eq(out[1].op_context, &second_req);
}

/* ---- shm's 4 KiB switch, both sides, without timing ---- */

Test(ofi_cq_send, a_send_is_filed_from_one_byte_past_shms_inject_size)
{
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    cr_assert_eq(rendezvous_above(), 4096u);
    int at_limit, past;
    post_send(&at_limit, 4096);
    uint64_t posted = post_send(&past, 4097);
    cq_state *cs = cq_state_of(&fake_cq);
    cr_assert_eq(send_completion_due(cs, &at_limit, posted), 0, "4096 B go eagerly: nothing owed");
    cr_assert_eq(send_completion_due(cs, &past, posted), posted + 2 * MS, "4097 B: two flights after the post");
}

Test(ofi_cq_send, a_completion_without_context_takes_no_filed_send)
{
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    int request;
    uint64_t posted = post_send(&request, 65536);
    cq_state *cs = cq_state_of(&fake_cq);
    cr_assert_eq(atomic_load(&cs->sends_filed), 1);
    /* context 0 is an empty slot's: it must not take one, nor the count */
    cr_assert_eq(send_completion_due(cs, NULL, posted), 0);
    cr_assert_eq(atomic_load(&cs->sends_filed), 1);
    cr_assert_eq(send_completion_due(cs, &request, posted), posted + 2 * MS);
    cr_assert_eq(atomic_load(&cs->sends_filed), 0, "taken: the hold need not look any more");
}

Test(ofi_cq_send, a_receive_keeps_its_post_time_from_one_byte_past_4_KiB)
{
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    cq_state *cs = cq_state_of(&fake_cq);
    int at_limit, past;
    cr_assert_null(note_receive_post_on(cs, &at_limit, 4096));
    post_slot *slot = note_receive_post_on(cs, &past, 4097);
    cr_assert_not_null(slot);
    uint64_t at_limit_ns = 7, past_ns = 0, at_limit_post = 7, past_post = 7;
    receive_posted_before_drain(cs, &at_limit, 0, &at_limit_ns, &at_limit_post);
    receive_posted_before_drain(cs, &past, 0, &past_ns, &past_post);
    cr_assert_eq(at_limit_ns, 0, "a 4096 B receive needs no post time");
    cr_assert_gt(past_ns, 0, "a 4097 B receive keeps its post time");
    cr_assert_eq(past_post, 0, "a post call whose return was not noted took no known time");
}

Test(ofi_cq_send, a_receive_keeps_how_long_its_post_call_took)
{
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    cq_state *cs = cq_state_of(&fake_cq);
    int receive, other;
    post_slot *slot = note_receive_post_on(cs, &receive, 1 << 20);
    uint64_t before = clock_ns();
    while (clock_ns() - before < 200 * 1000) /* the provider copying inside the post */
        ;
    note_receive_posted(slot, &other); /* another context: not this slot's */
    uint64_t posted_at = 0, post_ns = 7;
    receive_posted_before_drain(cs, &receive, 0, &posted_at, &post_ns);
    cr_assert_eq(post_ns, 0, "a return noted for another receive is not this one's");
    slot = note_receive_post_on(cs, &receive, 1 << 20);
    before = clock_ns();
    while (clock_ns() - before < 200 * 1000)
        ;
    note_receive_posted(slot, &receive);
    uint64_t after = clock_ns();
    receive_posted_before_drain(cs, &receive, 0, &posted_at, &post_ns);
    cr_assert_geq(post_ns, 200 * 1000, "the post call's 200 us are its own");
    cr_assert_leq(post_ns, after - before + 200 * 1000);
}

Test(ofi_cq, no_provider_but_shm_moves_a_send_by_rendezvous)
{
    struct fi_fabric_attr fabric = {.prov_name = "tcp"};
    struct fi_info info = {.fabric_attr = &fabric};
    ofi_note_provider(&info);
    cr_assert_eq(rendezvous_above(), UINT64_MAX);
    set_knob(LOGGP_KNOB_LATENCY, 1 * MS);
    int request;
    loggp_delays d;
    loggp_live_get(&d);
    note_send_post_on(cq_state_of(&fake_cq), &request, clock_ns(), 1u << 20, &d);
    cr_assert_eq(send_completion_due(cq_state_of(&fake_cq), &request, clock_ns()), 0);
}

/* The median of n reads of 64 receives at once, with L = 1 ns (so the holding read runs)
 * and o_r as given: ns from the read's start to its return. */
static uint64_t median_read_of_64(uint64_t o_r_ns, int n)
{
    uint64_t took[64];
    cr_assert(n <= 64);
    loggp_knobs k = {0};
    k.ps[LOGGP_KNOB_LATENCY] = 1000;
    k.ps[LOGGP_KNOB_O_R] = (int64_t)o_r_ns * 1000;
    loggp_live_publish(&k);
    struct fi_cq_tagged_entry out[64];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < 64; j++)
            queue_entry(FI_RECV | FI_TAGGED, 8, 0);
        uint64_t start = loggp_now_ns();
        read_all(64, out);
        took[i] = loggp_now_ns() - start;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && took[j] < took[j - 1]; j--) {
            uint64_t t = took[j];
            took[j] = took[j - 1];
            took[j - 1] = t;
        }
    return took[n / 2];
}

Test(ofi_cq, o_r_adds_itself_over_the_layers_own_work)
{
    /* readings are taken against the armed knobs, so o_r must add whole on top of the layer's
     * work on a read, not swallow it: 64 receives at o_r = 2 us take the armed read's time (64
     * receives at 1 ns) and 128 us less 64 ns more. Swallowed, the work (most of the armed read)
     * would be missing: the limit sits half an armed read below. Two medians apart can stray
     * either way by a few hundred ns on a busy machine, so a miss is measured again. */
    uint64_t armed = 0, spun = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        armed = median_read_of_64(1, 41);
        spun = median_read_of_64(2000, 41);
        if (spun + armed / 2 >= armed + 64 * 2000 - 64)
            return;
    }
    cr_assert_fail("armed read %llu ns, with o_r = 2 us %llu ns: o_r added %lld ns over 64 receives, "
                   "not 127,936", (unsigned long long)armed, (unsigned long long)spun,
                   (long long)spun - (long long)armed);
}

/* ---- the receive side of the switch: which hold a held receive gets, read from its due time ---- */

/* The due time of a stamped receive of `len` bytes sent at `sent`, as the hold files it
 * (nothing waited for: the time is read, not spent); *seen_by: the clock after the read. */
static uint64_t held_receive_due(size_t len, uint64_t sent, uint64_t *seen_by)
{
    cq_state *cs = cq_state_of(&fake_cq);
    size_t before = cs->count;
    queue_entry(FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA, len, stamp_encode(0, 0, sent, 0));
    struct fi_cq_tagged_entry out[1];
    cr_assert_eq(fi_cq_read(&fake_cq, out, 1), -FI_EAGAIN, "a %zu B receive under L came out at once", len);
    *seen_by = clock_ns();
    cr_assert_eq(cs->count, before + 1);
    return cs->ring[ring_index(cs->head, before, cs->cap)].due;
}

Test(ofi_cq_send, a_receive_is_held_as_rendezvous_from_one_byte_past_4_KiB)
{
    const uint64_t L = 100 * MS;
    set_knob(LOGGP_KNOB_LATENCY, L);
    uint64_t sent = clock_ns() & ~(uint64_t)15, seen_by; /* a stamp keeps 16 ns units */
    /* at shm's inject size: eager, L after its arrival (which is no later than it was seen) */
    uint64_t at_limit = held_receive_due(4096, sent, &seen_by);
    cr_assert_geq(at_limit, sent + L);
    cr_assert_leq(at_limit, seen_by + L, "4096 B held %llu ns past its send: not eager's L",
                  (unsigned long long)(at_limit - sent));
    /* one byte more: the request, the pull and the data, three flights after the send */
    uint64_t past = held_receive_due(4097, sent, &seen_by);
    cr_assert_geq(past, sent + 3 * L, "4097 B held %llu ns past its send, not 3L", (unsigned long long)(past - sent));
}

Test(ofi_cq, a_provider_other_than_shm_holds_a_large_receive_as_eager)
{
    struct fi_fabric_attr fabric = {.prov_name = "tcp"};
    struct fi_info info = {.fabric_attr = &fabric};
    ofi_note_provider(&info);
    const uint64_t L = 100 * MS;
    set_knob(LOGGP_KNOB_LATENCY, L);
    uint64_t sent = clock_ns() & ~(uint64_t)15, seen_by; /* a stamp keeps 16 ns units */
    uint64_t due = held_receive_due(1u << 20, sent, &seen_by);
    cr_assert_geq(due, sent + L);
    cr_assert_leq(due, seen_by + L, "1 MiB over tcp held %llu ns past its send: not eager's L",
                  (unsigned long long)(due - sent));
}

/* ---- the profile's share of a receive gap: g's and (k-1)G's, in their ratio ---- */

Test(ofi_cq, a_reception_gap_is_counted_to_g_and_G_in_their_ratio)
{
    loggp_knobs k = {0};
    k.ps[LOGGP_KNOB_LATENCY] = 1000;                   /* 1 ns: the hold is L's, not G's */
    k.ps[LOGGP_KNOB_GAP] = (int64_t)10 * MS * 1000;     /* g = 10 ms */
    k.ps[LOGGP_KNOB_GAP_PER_BYTE] = (int64_t)30 * 1000000; /* 1001 B owe (k-1)G = 30 ms: g : G = 1 : 3 */
    loggp_live_publish(&k);
    loggp_counters *c = loggp_my_counters();
    uint64_t g0 = c->injected_ns[LOGGP_INJ_GAP], G0 = c->injected_ns[LOGGP_INJ_GAP_PER_BYTE];
    for (int i = 0; i < 3; i++)
        queue_entry(FI_RECV | FI_TAGGED, 1001, 0);
    struct fi_cq_tagged_entry out[3];
    read_all(3, out);
    uint64_t g = c->injected_ns[LOGGP_INJ_GAP] - g0, G = c->injected_ns[LOGGP_INJ_GAP_PER_BYTE] - G0;
    cr_assert_gt(g + G, 0, "the second and third receptions waited for the gap");
    /* each wait is split as waited * g / (g + (k-1)G), rounded down: within a ns per wait */
    cr_assert_leq(g * 4, g + G, "g counted %llu ns of %llu, over a quarter", (unsigned long long)g,
                  (unsigned long long)(g + G));
    cr_assert_geq(g * 4 + 8, g + G, "g counted %llu ns of %llu, under a quarter", (unsigned long long)g,
                  (unsigned long long)(g + G));
}
