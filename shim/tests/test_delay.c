/* The gap arithmetic shared by both engines (src/delay.c). Waits are asserted
 * from below (a spin never ends early) or as exact zeros, never as upper time
 * bounds, so a busy machine cannot fail them. */
#include <criterion/criterion.h>
#include <time.h>

#include "delay.h"

#define US 1000u

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

Test(gap_due, adds_to_the_callers_own_time_within_the_window)
{
    /* back 500 ns after the injector was free: the gap follows that */
    cr_assert_eq(loggp_gap_due(1000000, 7 * US, 1000000 + 500), 1000000 + 500 + 7 * US);
}

Test(gap_due, overlaps_time_away_beyond_the_window)
{
    uint64_t free_at = 1000000;
    cr_assert_eq(loggp_gap_due(free_at, 7 * US, free_at + 50 * US), free_at + LOGGP_OWN_WORK_NS + 7 * US);
    /* continuous at the edge of the window */
    cr_assert_eq(loggp_gap_due(free_at, 7 * US, free_at + LOGGP_OWN_WORK_NS),
                 loggp_gap_due(free_at, 7 * US, free_at + LOGGP_OWN_WORK_NS + 1));
}

Test(pacer, nothing_owed_means_no_wait)
{
    loggp_pacer p = {0};
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, a_post_right_after_the_last_waits_the_whole_gap)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 200 * US, 0);
    uint64_t start = loggp_now_ns();
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_geq(loggp_now_ns() - start, 200 * US - LOGGP_OWN_WORK_NS);
    cr_assert_gt(w.g_ns, 0);
    cr_assert_eq(w.bytes_ns, 0);
}

Test(pacer, time_away_longer_than_gap_plus_window_leaves_nothing_to_wait)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 100 * US, 0);
    sleep_ns(100 * US + LOGGP_OWN_WORK_NS + 500 * US);
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, send_overhead_overlaps_the_gap)
{
    /* LogGP: o and g overlap, so an o_s longer than the gap leaves no wait */
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 100 * US, 0);
    loggp_gap_wait w = loggp_pacer_begin(&p, 300 * US);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, zero_knobs_forget_what_was_owed)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 500 * US, 0);
    loggp_pacer_done(&p, 0, 0);
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_eq(w.g_ns + w.bytes_ns, 0);
}

Test(pacer, splits_a_wait_between_g_and_per_byte_gap)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 100 * US, 300 * US);
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    uint64_t total = w.g_ns + w.bytes_ns;
    cr_assert_gt(total, 0);
    /* 1 : 3, up to rounding */
    cr_assert_leq(w.g_ns > total / 4 ? w.g_ns - total / 4 : total / 4 - w.g_ns, 1);
}

Test(pacer, the_gap_counts_from_a_later_send_completion)
{
    loggp_pacer p = {0};
    loggp_pacer_done(&p, 100 * US, 0);
    /* the injector stayed busy (a long transfer) until its completion, just now */
    sleep_ns(1000 * US);
    loggp_send_completed(loggp_now_ns());
    uint64_t start = loggp_now_ns();
    loggp_gap_wait w = loggp_pacer_begin(&p, 0);
    cr_assert_gt(w.g_ns, 0);
    cr_assert_geq(loggp_now_ns() - start, 100 * US - LOGGP_OWN_WORK_NS);
}
