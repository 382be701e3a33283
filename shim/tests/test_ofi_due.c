/* When a held receive is due (src/ofi/due.c): natural arrival from the send
 * stamp, the least transit seen and the CQ's drained reads, plus L + (k-1)G. */
#include <criterion/criterion.h>

#include "due.h"
#include "stamp.h"

#define US 1000u

Test(receive_hold, is_L_plus_k_minus_1_G)
{
    loggp_delays d = {.L = 10 * US};
    cr_assert_eq(receive_hold_ns(&d, 8), 10 * US);
    d.G_ps_per_byte = 2000; /* 2 ns per byte */
    cr_assert_eq(receive_hold_ns(&d, 101), 10 * US + 200);
    loggp_delays none = {0};
    cr_assert_eq(receive_hold_ns(&none, 4096), 0);
}

Test(receive_arrival, send_time_plus_least_transit)
{
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 1, 0, 0), 102 * US);
}

Test(receive_arrival, never_later_than_now)
{
    cr_assert_eq(receive_arrival(100 * US, 80 * US, 150 * US, 1, 0, 0), 150 * US);
}

Test(receive_arrival, not_before_a_drained_read_after_the_post)
{
    /* posted before the CQ was found drained at 120: the message came after 120 */
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 1, 120 * US, 0), 120 * US);
    /* the caller kept polling the drained CQ: it arrived just now */
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 1, 120 * US, 1), 150 * US);
}

Test(receive_arrival, a_drained_read_before_the_send_moves_nothing)
{
    /* found drained at 90 us, before the message was sent at 100 us: it still came at 102 us */
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 1, 90 * US, 0), 102 * US);
    /* and at the arrival itself, the same */
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 1, 102 * US, 0), 102 * US);
}

Test(receive_arrival, a_receive_posted_after_the_drained_read_may_have_found_it_waiting)
{
    cr_assert_eq(receive_arrival(100 * US, 2 * US, 150 * US, 0, 120 * US, 1), 102 * US);
}

Test(receive_due, from_a_stamp_the_least_transit_and_the_knobs)
{
    /* what cq_hold.c composes for a stamped receive seen at `now` */
    uint64_t sent = 1000000 * 16, now = sent + 7 * US;
    uint64_t data = stamp_encode(0, 1, sent, 0);
    transit_min t;
    transit_min_init(&t, now - 1000);
    uint64_t decoded = stamp_send_time(data, now);
    transit_min_update(&t, 3, 1500, now - 500, UINT64_MAX); /* an earlier, faster message */
    uint64_t least = transit_min_update(&t, 3, now - decoded, now, UINT64_MAX);
    loggp_delays d = {.L = 20 * US};
    uint64_t due = receive_arrival(decoded, least, now, 1, 0, 0) + receive_hold_ns(&d, 8);
    cr_assert_eq(due, sent + 1500 + 20 * US);
}

Test(transit_least, a_receive_that_waited_for_its_message_is_a_sample)
{
    transit_min t;
    transit_min_init(&t, 0);
    /* the class's first pays the provider's first touch: not taken */
    cr_assert_eq(transit_least(&t, 10, 130 * US, 1, 10, UINT64_MAX), 0);
    cr_assert_eq(transit_least(&t, 10, 3 * US, 1, 20, UINT64_MAX), 3 * US);
    cr_assert_eq(transit_least(&t, 10, 2 * US, 1, 30, UINT64_MAX), 2 * US);
    cr_assert_eq(transit_least(&t, 10, 5 * US, 1, 40, UINT64_MAX), 2 * US);
    /* each class has its own first */
    cr_assert_eq(transit_least(&t, 11, 4 * US, 1, 50, UINT64_MAX), 0);
}

Test(transit_least, a_first_touch_then_only_late_posts_leaves_the_send_time)
{
    /* a rank whose first 1 KiB receive waited 131 us (first touch) and
     * whose later ones all came late: their arrival is their send */
    transit_min t;
    transit_min_init(&t, 0);
    transit_least(&t, 11, 131 * US, 1, 10, UINT64_MAX);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(transit_least(&t, 11, 200 * US, 0, 20 + i, UINT64_MAX), 0);
}

Test(transit_least, late_posts_before_it_do_not_make_a_first_touch_a_sample)
{
    /* the class's first receives came late (read only); the first that waited
     * is still the class's first such sample, and pays the first touch */
    transit_min t;
    transit_min_init(&t, 0);
    cr_assert_eq(transit_least(&t, 12, 200 * US, 0, 10, UINT64_MAX), 0);
    cr_assert_eq(transit_least(&t, 12, 200 * US, 0, 20, UINT64_MAX), 0);
    cr_assert_eq(transit_least(&t, 12, 130 * US, 1, 30, UINT64_MAX), 0);
    cr_assert_eq(transit_least(&t, 12, 200 * US, 0, 40, UINT64_MAX), 0, "late ones still see no transit");
    cr_assert_eq(transit_least(&t, 12, 2 * US, 1, 50, UINT64_MAX), 2 * US);
}

Test(transit_least, a_late_post_reads_the_least_but_adds_nothing)
{
    /* a rank that always posts after its peer sent: each message waited
     * about L = 200 us for its post; that wait is no transit */
    transit_min t;
    transit_min_init(&t, 0);
    cr_assert_eq(transit_least(&t, 10, 200 * US, 0, 10, UINT64_MAX), 0);
    cr_assert_eq(transit_least(&t, 10, 201 * US, 0, 20, UINT64_MAX), 0);
    /* receives that did wait give the class its transit (past the first), which late ones then read */
    transit_least(&t, 10, 6 * US, 1, 25, UINT64_MAX);
    cr_assert_eq(transit_least(&t, 10, 4 * US, 1, 30, UINT64_MAX), 4 * US);
    cr_assert_eq(transit_least(&t, 10, 199 * US, 0, 40, UINT64_MAX), 4 * US);
    /* other size classes keep their own */
    cr_assert_eq(transit_least(&t, 11, 150 * US, 0, 50, UINT64_MAX), 0);
}

Test(receive_due, a_late_post_of_a_message_sent_L_before_is_due_at_once)
{
    /* eager: sent at 100 us, posted and seen at 300 us with L = 200 us; its
     * arrival is the send (no transit known), so it is due at 300 us, not a
     * second L later */
    transit_min t;
    transit_min_init(&t, 0);
    uint64_t sent = 100 * US, now = 300 * US;
    loggp_delays d = {.L = 200 * US};
    uint64_t least = transit_least(&t, 10, now - sent, 0, now, UINT64_MAX);
    cr_assert_eq(receive_arrival(sent, least, now, 0, now - 1, 1) + receive_hold_ns(&d, 1024), now);
    /* rendezvous (delay.h): the pull and the data, 2L from the post, not from a second L */
    cr_assert_eq(loggp_rendezvous_due(receive_arrival(sent, least, now, 0, now - 1, 1), now, d.L, 0, 0),
                 now + 2 * d.L);
}

Test(receive_due, a_late_rendezvous_counts_from_its_send_whatever_transit_was_seen)
{
    /* the receives of 8 KiB that waited were the burst's first (120 us and more);
     * the next, sent at 100 us and posted at 140 us with L = 20 us, found its
     * request there: the pull and the data, 2L from the post */
    transit_min t;
    transit_min_init(&t, 0);
    uint64_t L = 20 * US, sent = 100 * US, posted = 140 * US, now = posted + US;
    transit_least(&t, 14, 130 * US, 1, 40 * US, UINT64_MAX);
    transit_least(&t, 14, 120 * US, 1, 50 * US, UINT64_MAX);
    uint64_t least = transit_least(&t, 14, now - sent, 0, now, UINT64_MAX);
    cr_assert_eq(least, 120 * US);
    uint64_t arrival = receive_arrival(sent, arrival_transit(least, 1), now, 0, now - 1, 1);
    transit_min handshake;
    transit_min_init(&handshake, 0);
    cr_assert_eq(loggp_rendezvous_due(arrival, posted, L, 0,
                                      rendezvous_handshake_ns(&handshake, 14, now, posted, arrival, 0, UINT64_MAX)),
                 now + 2 * L);
    /* an eager message still counts its size class's least */
    cr_assert_eq(receive_arrival(sent, arrival_transit(30 * US, 0), now, 0, 0, 0), sent + 30 * US);
}

Test(rendezvous_handshake, the_least_a_late_receive_of_its_size_took_after_its_post)
{
    transit_min t;
    transit_min_init(&t, 0);
    /* posted at 140 us, its request there since 100 us, completed at 143 us */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 140 * US, 100 * US, 0, UINT64_MAX), 3 * US);
    /* a caller that computed after its post and read at 200 us: the least stands */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 200 * US, 150 * US, 120 * US, 0, UINT64_MAX), 3 * US);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 302 * US, 300 * US, 250 * US, 0, UINT64_MAX), 2 * US);
    /* another size has its own */
    cr_assert_eq(rendezvous_handshake_ns(&t, 14, 401 * US, 400 * US, 350 * US, 0, UINT64_MAX), 1 * US);
}

Test(rendezvous_handshake, a_late_receive_whose_copy_took_longer_than_the_least_pays_its_own)
{
    transit_min t;
    transit_min_init(&t, 0);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 140 * US, 100 * US, 3 * US, UINT64_MAX), 3 * US);
    /* its post and read took 9 us (a first touch, a copy beside another): all of it, not the least's 3 */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 211 * US, 200 * US, 150 * US, 9 * US, UINT64_MAX), 9 * US);
    /* the calls' time bounds it, not the post to now: a caller that computed in between pays no more */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 400 * US, 300 * US, 250 * US, 4 * US, UINT64_MAX), 4 * US);
    /* nor more than its post to now, nor less than the least */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 505 * US, 500 * US, 450 * US, 8 * US, UINT64_MAX), 5 * US);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 620 * US, 600 * US, 550 * US, 1 * US, UINT64_MAX), 3 * US);
    /* a pre-posted one seen by a polling caller pays none: its arrival is its completion */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 743 * US, 690 * US, 743 * US, 9 * US, UINT64_MAX), 0);
}

Test(rendezvous_handshake, a_pre_posted_receive_whose_request_came_before_the_next_read_pays_its_copy)
{
    transit_min t;
    transit_min_init(&t, 0);
    /* posted at 90 us, its request there at 100 us, copied inside the read that saw it at 143 us */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 90 * US, 100 * US, 9 * US, UINT64_MAX), 9 * US);
    /* no more than since the request came, and no least of late receives: a pre-posted one has none */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 90 * US, 100 * US, 60 * US, UINT64_MAX), 43 * US);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 300 * US, 200 * US, 250 * US, 0, UINT64_MAX), 0);
    /* nor with its post unknown (posted long ago) */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 0, 100 * US, 9 * US, UINT64_MAX), 9 * US);
}

Test(rendezvous_handshake, none_when_the_arrival_is_the_completion)
{
    transit_min t;
    transit_min_init(&t, 0);
    /* pre-posted (the arrival is the completion), or its post time unknown */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 90 * US, 143 * US, 0, UINT64_MAX), 0);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 0, 100 * US, 0, UINT64_MAX), 0);
    /* and neither adds a sample: a late one afterwards reads only its own */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 205 * US, 200 * US, 100 * US, 0, UINT64_MAX), 5 * US);
}

Test(rendezvous_handshake, none_at_the_edges_and_no_zero_sample)
{
    transit_min t;
    transit_min_init(&t, 0);
    /* posted at the arrival itself: not after it, so not late */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 143 * US, 100 * US, 100 * US, 0, UINT64_MAX), 0);
    /* completed at its post (no time taken): no sample, least of all a 0 that would stand for the window */
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 140 * US, 140 * US, 100 * US, 0, UINT64_MAX), 0);
    cr_assert_eq(rendezvous_handshake_ns(&t, 16, 205 * US, 200 * US, 150 * US, 0, UINT64_MAX), 5 * US);
}

Test(transit_min, keeps_the_least_per_size_class)
{
    transit_min t;
    transit_min_init(&t, 0);
    cr_assert_eq(transit_min_update(&t, 0, 900, 10, 1000000), 900);
    cr_assert_eq(transit_min_update(&t, 0, 700, 20, 1000000), 700);
    cr_assert_eq(transit_min_update(&t, 0, 800, 30, 1000000), 700);
    /* another size class has its own minimum */
    cr_assert_eq(transit_min_update(&t, 5, 3000, 40, 1000000), 3000);
}

Test(transit_min, forgets_a_minimum_two_windows_old)
{
    transit_min t;
    transit_min_init(&t, 0);
    uint64_t w = 1000;
    transit_min_update(&t, 2, 100, 10, w);
    /* next window: the last one's minimum still counts */
    cr_assert_eq(transit_min_update(&t, 2, 500, 1500, w), 100);
    /* the window after that: only the last window's 500 and the new sample */
    cr_assert_eq(transit_min_update(&t, 2, 600, 3000, w), 500);
    cr_assert_eq(transit_min_update(&t, 2, 650, 4500, w), 600);
}

Test(transit_min, a_window_lasts_its_whole_length_and_not_a_ns_more)
{
    uint64_t w = 1000;
    transit_min t;
    transit_min_init(&t, 0);
    transit_min_update(&t, 2, 100, 10, w);
    /* exactly a window after its start: still the first window */
    cr_assert_eq(transit_min_update(&t, 2, 500, w, w), 100);
    /* so at 2w the first window is the last one and its 100 still counts */
    cr_assert_eq(transit_min_update(&t, 2, 600, 2 * w, w), 100);
    /* 2w was past the first window's end, so a second began there: at 4w + 2 that one (600)
     * is the last, and the first one's 100 is gone */
    cr_assert_eq(transit_min_update(&t, 2, 700, 4 * w + 2, w), 600);
}
