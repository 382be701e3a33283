/* The gap arithmetic shared by both engines (src/delay.c): LogP's g as a
 * minimum spacing. The examples run on a virtual clock through the same pure
 * functions the pacer and the receive gap use, so their intervals are exact:
 * each is asserted from below and from above. Only the last tests spin on
 * the real clock, and those assert from below (a spin never ends early). */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "delay.h"

#define US 1000u

/* ---- the pure rules ------------------------------------------------------- */

Test(bytes_delay, a_message_of_k_bytes_owes_k_minus_1_times_G)
{
    /* LogGP's (k-1)G: nothing for 0 or 1 byte, one G from the second on */
    cr_assert_eq(loggp_bytes_delay_ns(1000, 0), 0);
    cr_assert_eq(loggp_bytes_delay_ns(1000, 1), 0);
    cr_assert_eq(loggp_bytes_delay_ns(1000, 2), 1);
    cr_assert_eq(loggp_bytes_delay_ns(1000, 16384), 16383);
    cr_assert_eq(loggp_bytes_delay_ns(0, 1u << 30), 0);
    cr_assert_eq(loggp_bytes_delay_ns(-1, 1u << 30), 0);
}

Test(bytes_delay, picoseconds_round_to_the_nearest_ns_half_up)
{
    /* 1 ps per byte: (k-1) ps, rounded; both sides of each half ns */
    cr_assert_eq(loggp_bytes_delay_ns(1, 500), 0);  /* 499 ps */
    cr_assert_eq(loggp_bytes_delay_ns(1, 501), 1);  /* 500 ps */
    cr_assert_eq(loggp_bytes_delay_ns(1, 1500), 1); /* 1499 ps */
    cr_assert_eq(loggp_bytes_delay_ns(1, 1501), 2); /* 1500 ps */
    /* no overflow at the largest G (10 s per byte) over a large message */
    cr_assert_eq(loggp_bytes_delay_ns(INT64_C(10000000000000), UINT64_C(1) << 32),
                 ((UINT64_C(1) << 32) - 1) * UINT64_C(10000000000));
}

Test(bytes_delay, the_64_bit_path_agrees_with_128_bit_arithmetic_at_its_edges)
{
    /* either side of the largest product done in 64 bits */
    uint64_t sizes[] = {UINT64_C(1) << 32, (UINT64_C(1) << 32) + 1, (UINT64_C(1) << 32) + 2, 3000000001u};
    int64_t rates[] = {INT32_MAX, (int64_t)INT32_MAX + 1, 999, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof rates / sizeof *rates; j++) {
            unsigned __int128 ps = (unsigned __int128)(sizes[i] - 1) * (uint64_t)rates[j] + 500;
            cr_assert_eq(loggp_bytes_delay_ns(rates[j], sizes[i]), (uint64_t)(ps / 1000), "k=%llu G=%lld",
                         (unsigned long long)sizes[i], (long long)rates[j]);
        }
}

Test(gap_next, counts_from_when_the_injector_was_free)
{
    cr_assert_eq(loggp_gap_next(1000000, 7 * US), 1000000 + 7 * US);
    cr_assert_eq(loggp_gap_next(1000000, 0), 0); /* nothing owed: never waits */
}

Test(injector_free_at, a_later_send_completion_that_has_happened)
{
    cr_assert_eq(loggp_injector_free_at(100, 400, 500), 400);
    /* a completion stamped in the future (another clock's reading) is ignored */
    cr_assert_eq(loggp_injector_free_at(100, 600, 500), 100);
    /* an older completion does not move the free time back */
    cr_assert_eq(loggp_injector_free_at(100, 50, 500), 100);
    /* a completion at this very ns has happened: both sides of now */
    cr_assert_eq(loggp_injector_free_at(100, 500, 500), 500);
    cr_assert_eq(loggp_injector_free_at(100, 501, 500), 100);
}

Test(post_go, o_s_and_the_gap_overlap)
{
    cr_assert_eq(loggp_post_go(1000, 300, 5000), 5000); /* gap longer: the gap */
    cr_assert_eq(loggp_post_go(1000, 7000, 5000), 8000); /* o_s longer: o_s only */
    cr_assert_eq(loggp_post_go(1000, 0, 0), 1000);
}

Test(receive_gap_due, g_counts_from_the_last_release_plus_the_providers_hand_over)
{
    cr_assert_eq(loggp_receive_gap_due(10000, 5 * US, 0, 120, 4000), 10000 + 120 + 5 * US);
    cr_assert_eq(loggp_receive_gap_due(10000, 0, 0, 120, 4000), 0);
    cr_assert_eq(loggp_receive_gap_due(0, 5 * US, 0, 120, 4000), 0); /* first reception */
    /* no G: a read slower than hand-over plus g (a copy inside it) owes nothing for bytes */
    cr_assert_eq(loggp_receive_gap_due(10000, 1 * US, 0, 120, 4000), 10000 + 120 + 1 * US);
}

Test(receive_gap_due, bytes_add_to_the_machines_own_time_for_the_message)
{
    /* (k-1)G after the machine's own share of the read (a copy inside it), not its hand-over */
    cr_assert_eq(loggp_receive_gap_due(10000, 0, 1 * US, 120, 5 * US), 10000 + 6 * US);
    /* g and (k-1)G overlap: the longer spacing wins */
    cr_assert_eq(loggp_receive_gap_due(10000, 10 * US, 1 * US, 120, 5 * US), 10000 + 120 + 10 * US);
    cr_assert_eq(loggp_receive_gap_due(10000, 1 * US, 1 * US, 120, 5 * US), 10000 + 6 * US);
}

Test(receive_gap_due, G_alone_owes_no_hand_over)
{
    /* no g: a hand-over slower than the read's share plus (k-1)G adds nothing */
    cr_assert_eq(loggp_receive_gap_due(10000, 0, 100, 5 * US, 200), 10000 + 300);
    cr_assert_eq(loggp_receive_gap_due(10000, 1, 100, 5 * US, 200), 10000 + 5 * US + 1);
}

/* ---- the LogP examples on a virtual clock --------------------------------- */

#define POST_NS 100u /* the machine's own post call */

/* A sender that posts `n` messages: each post call lasts POST_NS, and the
 * caller comes back `away_ns` after a post ends (MPI's processing, a round
 * trip, computation) and spends o_s_ns in the next call before posting.
 * Returns the interval between the last two post starts. */
static uint64_t send_interval(uint64_t g_ns, uint64_t o_s_ns, uint64_t away_ns, int n)
{
    loggp_pacer p;
    memset(&p, 0, sizeof p);
    uint64_t called = 1000000, start = 0, prev_start = 0;
    for (int i = 0; i < n; i++) {
        loggp_post_plan plan = loggp_pacer_plan(&p, called, o_s_ns);
        prev_start = start;
        start = plan.go_ns;
        uint64_t end = start + POST_NS;
        loggp_pacer_done_at(&p, end, g_ns, 0);
        called = end + away_ns;
    }
    return start - prev_start;
}

Test(logp_pingpong, round_trip_shorter_than_g_takes_g_total)
{
    /* rank 0 is away for the rest of a 1.3 us round trip; g = 5 us */
    uint64_t rtt = 1300;
    cr_assert_eq(send_interval(5 * US, 0, rtt - POST_NS, 5), POST_NS + 5 * US);
}

Test(logp_pingpong, round_trip_longer_than_g_is_unaffected)
{
    uint64_t rtt = 8 * US;
    cr_assert_eq(send_interval(5 * US, 0, rtt - POST_NS, 5), rtt);
    /* the edge: a round trip of exactly g_total */
    cr_assert_eq(send_interval(5 * US, 0, 5 * US, 5), POST_NS + 5 * US);
}

Test(logp_stream, natural_interval_shorter_than_g_becomes_g_total)
{
    /* back after 400 ns of MPI's own work: natural interval 0.5 us */
    cr_assert_eq(send_interval(20 * US, 0, 400, 8), POST_NS + 20 * US);
}

Test(logp_stream, natural_interval_longer_than_g_is_kept)
{
    cr_assert_eq(send_interval(20 * US, 0, 30 * US, 8), POST_NS + 30 * US);
    cr_assert_eq(send_interval(0, 0, 400, 8), POST_NS + 400); /* no knob: natural */
}

Test(logp_stream, send_overhead_overlaps_the_gap)
{
    /* o_s = 3 us inside g = 5 us: the interval stays g_total */
    cr_assert_eq(send_interval(5 * US, 3 * US, 200, 6), POST_NS + 5 * US);
    /* o_s = 7 us beyond it: the interval is o_s + the natural, no gap on top */
    cr_assert_eq(send_interval(5 * US, 7 * US, 200, 6), POST_NS + 200 + 7 * US);
}

Test(logp_stream, computation_overlaps_the_gap)
{
    /* 3 us of computation between sends inside g = 5 us */
    cr_assert_eq(send_interval(5 * US, 0, 200 + 3 * US, 6), POST_NS + 5 * US);
    /* 12 us of computation: unaffected */
    cr_assert_eq(send_interval(5 * US, 0, 200 + 12 * US, 6), POST_NS + 200 + 12 * US);
}

Test(logp_stream, per_byte_gap_is_part_of_the_per_message_gap)
{
    loggp_pacer p;
    memset(&p, 0, sizeof p);
    loggp_pacer_done_at(&p, 1000000, 2 * US, 6 * US);
    /* called 1 us after the end: owes g + (k-1)G = 8 us from the end, 7 us of it waited */
    loggp_post_plan plan = loggp_pacer_plan(&p, 1000000 + 1 * US, 0);
    cr_assert_eq(plan.go_ns, 1000000 + 8 * US);
    cr_assert_eq(plan.waits.g_ns + plan.waits.bytes_ns, 7 * US);
    cr_assert_eq(plan.waits.g_ns, 7 * US / 4); /* 1 : 3 */
}

Test(reception_at, the_later_of_arrival_and_gap_due_never_after_now)
{
    cr_assert_eq(loggp_reception_at(7000, 9000, 20000), 9000);
    cr_assert_eq(loggp_reception_at(9500, 9000, 20000), 9500);
    cr_assert_eq(loggp_reception_at(0, 0, 20000), 20000); /* nothing known: now */
    cr_assert_eq(loggp_reception_at(30000, 0, 20000), 20000);
}

/* A receiver whose messages arrive every `arrival_ns` from 1 ms on; it last
 * found its queue empty just before 1 ms, is away (computing) until
 * away_until, then polls without pause, taking one message per poll.
 * Messages arriving while it polls are bounded by their arrival, those that
 * arrived while it was away only by the last empty poll. Returns the
 * interval between the last two hand-overs, and the last one in *last. */
static uint64_t receive_interval_after(uint64_t g_ns, uint64_t take_ns, uint64_t arrival_ns, int n,
                                       uint64_t away_until, uint64_t *last)
{
    const uint64_t first = 1000000, last_empty = first - 1;
    uint64_t received = 0, handed = 0, prev = 0, t = away_until;
    for (int i = 0; i < n; i++) {
        uint64_t arrives = first + (uint64_t)i * arrival_ns;
        uint64_t bound = arrives > away_until ? arrives : last_empty;
        uint64_t due = loggp_receive_gap_due(received, g_ns, 0, take_ns, take_ns);
        prev = handed;
        handed = t > arrives ? t : arrives;
        if (due > handed)
            handed = due;
        received = loggp_reception_at(bound, due, handed);
        t = handed;
    }
    if (last)
        *last = handed;
    return handed - prev;
}

static uint64_t receive_interval(uint64_t g_ns, uint64_t take_ns, uint64_t arrival_ns, int n)
{
    return receive_interval_after(g_ns, take_ns, arrival_ns, n, 0, NULL);
}

Test(logp_receive, arrivals_closer_than_g_are_spaced_g_total)
{
    /* two senders' messages every 1 us into one receiver */
    cr_assert_eq(receive_interval(5 * US, 150, 1 * US, 6), 150 + 5 * US);
}

Test(logp_receive, arrivals_further_apart_than_g_are_unaffected)
{
    cr_assert_eq(receive_interval(5 * US, 150, 9 * US, 6), 9 * US);
    /* a stream paced by the sender's gap (g_total = post + g) is not slowed
     * again by the receiver's when the provider's take is no longer than the post */
    cr_assert_eq(receive_interval(5 * US, POST_NS, POST_NS + 5 * US, 6), POST_NS + 5 * US);
}

Test(logp_receive, computation_overlaps_the_receive_gap)
{
    /* six messages paced by the sender's gap arrive while the receiver
     * computes for 40 us: they were received meanwhile, so all are handed
     * over the moment it comes back, not one per g after that */
    uint64_t away_until = 1000000 + 40 * US, last = 0;
    cr_assert_eq(receive_interval_after(5 * US, POST_NS, POST_NS + 5 * US, 6, away_until, &last), 0);
    cr_assert_eq(last, away_until);
    /* a backlog closer than g (two senders) still drains at g_total, counted
     * from the receptions the gap allowed while it was away */
    receive_interval_after(5 * US, 150, 1 * US, 20, away_until, &last);
    cr_assert_eq(last, 1000000 - 1 + 19 * (150 + 5 * US));
}

/* ---- rendezvous under L ---------------------------------------------------- */

Test(rendezvous_due, a_pre_posted_receive_pays_three_flights)
{
    /* posted before the message arrived at 1 ms: RTS, pull, data */
    cr_assert_eq(loggp_rendezvous_due(1000000, 900000, 10 * US, 0, 0), 1000000 + 30 * US);
    /* unknown post time (a multi-receive buffer): posted all along */
    cr_assert_eq(loggp_rendezvous_due(1000000, 0, 10 * US, 0, 0), 1000000 + 30 * US);
}

Test(rendezvous_due, a_late_receive_pays_two_flights_after_its_post)
{
    cr_assert_eq(loggp_rendezvous_due(1000000, 1500000, 10 * US, 0, 0), 1500000 + 20 * US);
    /* posted while the RTS is in flight: the handshake waits for it */
    cr_assert_eq(loggp_rendezvous_due(1000000, 1000000 + 4 * US, 10 * US, 0, 0), 1000000 + 30 * US);
}

Test(rendezvous_due, a_late_receive_keeps_the_machines_own_handshake)
{
    /* the provider took 3 us after the post: the held flights come on top */
    cr_assert_eq(loggp_rendezvous_due(1000000, 1500000, 10 * US, 8 * US, 3 * US), 1500000 + 31 * US);
}

Test(rendezvous_due, the_data_carries_its_per_byte_time)
{
    cr_assert_eq(loggp_rendezvous_due(1000000, 1500000, 10 * US, 8 * US, 0), 1500000 + 28 * US);
    cr_assert_eq(loggp_rendezvous_due(1000000, 1500000, 0, 8 * US, 0), 1500000 + 8 * US);
}

Test(rendezvous_due, a_blocking_burst_runs_at_two_flights_per_message)
{
    /* rank 1 posts receive i+1 when receive i is released; rank 0's blocking
     * send i+1 leaves when rank 1's provider matched send i (shm completes
     * it at the copy) and arrives 700 ns later */
    uint64_t L = 10 * US, posted = 1000000, arrival = posted + 300, released = 0, prev = 0;
    for (int i = 0; i < 6; i++) {
        uint64_t matched = posted > arrival ? posted : arrival;
        prev = released;
        released = loggp_rendezvous_due(arrival, posted, L, 0, 0);
        arrival = matched + 700;
        posted = released;
    }
    cr_assert_eq(released - prev, 2 * L); /* a real network's 2L, not L/2 */
}

Test(rendezvous_send_due, a_prompt_copy_completes_two_flights_after_the_post)
{
    /* the receiver copied 3 us after the post: the handshake's two flights decide */
    cr_assert_eq(loggp_rendezvous_send_due(1000000, 1000000 + 3 * US, 10 * US, 0), 1000000 + 20 * US);
}

Test(rendezvous_send_due, a_late_copy_completes_one_flight_after_it)
{
    /* the receiver posted late and copied 50 us after the send */
    cr_assert_eq(loggp_rendezvous_send_due(1000000, 1000000 + 50 * US, 10 * US, 0), 1000000 + 60 * US);
}

Test(rendezvous_send_due, the_data_carries_its_per_byte_time)
{
    cr_assert_eq(loggp_rendezvous_send_due(1000000, 1000000 + 3 * US, 10 * US, 983), 1000000 + 20 * US + 983);
    /* G alone: the natural completion plus (k-1)G, as the receiver's */
    cr_assert_eq(loggp_rendezvous_send_due(1000000, 1000000 + 7 * US, 0, 983), 1000000 + 7 * US + 983);
}

/* ---- the pacer on the real clock ------------------------------------------ */

Test(pacer, nothing_owed_means_no_wait)
{
    loggp_pacer p = {0};
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, a_post_right_after_the_last_waits_the_whole_gap)
{
    loggp_pacer p = {0};
    uint64_t before_done = loggp_now_ns();
    loggp_pacer_done(&p, 200 * US, 0);
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_geq(loggp_now_ns() - before_done, 200 * US);
    /* the charged wait is what was owed less the time already gone */
    cr_assert_leq(w.g_ns, 200 * US);
    cr_assert_gt(w.g_ns, 0);
    cr_assert_eq(w.bytes_ns, 0);
}

Test(pacer, zero_knobs_forget_what_was_owed)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 500 * US, 0);
    loggp_pacer_done(&p, 0, 0);
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, the_gap_counts_from_a_later_send_completion)
{
    loggp_pacer p = {0};
    loggp_pacer_done_at(&p, 1000000, 100 * US, 0);
    /* the injector stayed busy (a long transfer) until its completion at 3 ms */
    loggp_send_completed(3000000);
    loggp_post_plan plan = loggp_pacer_plan(&p, 3000000 + 10 * US, 0);
    cr_assert_eq(plan.go_ns, 3000000 + 100 * US);
    cr_assert_eq(plan.waits.g_ns, 90 * US);
}

Test(pacer, an_older_send_completion_handed_later_keeps_the_latest)
{
    loggp_pacer p = {0};
    loggp_pacer_done_at(&p, 1000000, 100 * US, 0);
    /* two sends' completions handed over out of order (another CQ, another thread) */
    loggp_send_completed(3000000);
    loggp_send_completed(2000000);
    loggp_post_plan plan = loggp_pacer_plan(&p, 3000000 + 10 * US, 0);
    cr_assert_eq(plan.go_ns, 3000000 + 100 * US, "the injector was busy until 3 ms, not 2 ms");
}

/* ---- the o spins' credit for time the host took past their ends ---- */

Test(spin_credit, a_preempted_spin_is_given_back_by_the_next_ones)
{
    uint64_t credit = loggp_credit_after(0, 10000, 10000 + 50000); /* a 10 us spin ended 50 us late */
    cr_assert_eq(credit, 50000);
    /* the next five 10 us spins end where they begin */
    uint64_t now = 100000;
    for (int i = 0; i < 5; i++, now += 10000) {
        uint64_t target = loggp_credit_target(now + 10000, now, &credit);
        cr_assert_eq(target, now, "spin %d ends at %llu", i, (unsigned long long)target);
    }
    cr_assert_eq(credit, 0);
    cr_assert_eq(loggp_credit_target(now + 10000, now, &credit), now + 10000, "nothing owed: the whole o");
}

Test(spin_credit, part_of_a_spin_pays_what_is_left)
{
    uint64_t credit = 4000;
    cr_assert_eq(loggp_credit_target(20000, 10000, &credit), 16000);
    cr_assert_eq(credit, 0);
    credit = 4000;
    cr_assert_eq(loggp_credit_target(12000, 10000, &credit), 10000, "never before now");
    cr_assert_eq(credit, 2000);
    credit = 4000;
    cr_assert_eq(loggp_credit_target(9000, 10000, &credit), 9000, "a target already past uses nothing");
    cr_assert_eq(credit, 0, "and a spin too short to pay anything back drops what was owed");
    credit = 4000;
    cr_assert_eq(loggp_credit_target(10000, 10000, &credit), 10000);
    cr_assert_eq(credit, 0, "a target at now leaves no room either");
}

Test(spin_credit, the_loops_own_granularity_is_not_owed)
{
    cr_assert_eq(loggp_credit_after(0, 10000, 10000 + LOGGP_SPIN_CREDIT_MIN_NS - 1), 0);
    cr_assert_eq(loggp_credit_after(0, 10000, 9000), 0, "a spin that ended early owes nothing");
    cr_assert_eq(loggp_credit_after(300, 10000, 10000 + LOGGP_SPIN_CREDIT_MIN_NS), 300 + LOGGP_SPIN_CREDIT_MIN_NS);
}

Test(spin_credit, at_most_the_cap_is_owed)
{
    cr_assert_eq(loggp_credit_after(LOGGP_SPIN_CREDIT_MAX_NS - 10, 0, 5000), LOGGP_SPIN_CREDIT_MAX_NS);
}

Test(spin_overhead, ns_from_now_spins_at_least_that_long)
{
    /* a fresh thread owes nothing: the spin lasts its whole length, from below */
    uint64_t start = loggp_now_ns();
    uint64_t end = loggp_spin_overhead_ns(2000000);
    cr_assert_geq(end - start, 2000000u, "a 2 ms spin took %llu ns", (unsigned long long)(end - start));
    cr_assert_geq(loggp_now_ns(), end, "it returns the time it reached, not a later one");
    /* a spin of 0 ns spins nothing and returns at once */
    start = loggp_now_ns();
    cr_assert_lt(loggp_spin_overhead_ns(0) - start, 1000000u);
}
