/* The message path's clock (src/delay.c): the TSC extended from
 * CLOCK_MONOTONIC anchors, against the vDSO's CLOCK_MONOTONIC itself. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "delay.h"

Test(tsc_rate, is_ns_per_tick_from_two_readings)
{
    /* 2.6 GHz: 2.6e9 ticks in a second */
    uint64_t mult = loggp_tsc_rate(1000, 5000000, 1000 + 2600000000u, 5000000 + 1000000000u);
    cr_assert_eq(loggp_tsc_extend(0, 2600000000u, mult), 1000000000u - 1, "got %llu",
                 (unsigned long long)loggp_tsc_extend(0, 2600000000u, mult)); /* rounded down */
    cr_assert_eq(loggp_tsc_extend(777, 2600, mult), 777 + 999);
}

Test(tsc_rate, refuses_readings_too_close_or_out_of_order)
{
    cr_assert_eq(loggp_tsc_rate(1000, 5000, 1000 + 26000, 5000 + 9999), 0);
    cr_assert_eq(loggp_tsc_rate(2000, 5000, 1000, 5000 + 1000000), 0);
    cr_assert_eq(loggp_tsc_rate(1000, 5000000, 2000000, 4000000), 0);
}

Test(tsc_extend, carries_a_long_span_without_overflow)
{
    uint64_t mult = loggp_tsc_rate(0, 1, 3000000000u, 1 + 1000000000u); /* 3 GHz */
    uint64_t hour = 3600ull * 1000000000u;
    uint64_t got = loggp_tsc_extend(0, hour * 3, mult);
    cr_assert(got <= hour && got > hour - hour / 1000000, "an hour of ticks gave %llu ns", (unsigned long long)got);
}

Test(tsc_reanchor, never_puts_the_clock_back)
{
    uint64_t ghz = (uint64_t)1 << LOGGP_TSC_SHIFT; /* 1 ns per tick */
    loggp_tsc_anchor old = {1000, 5000, ghz, 100000};
    /* the old anchor gives 5100 at tick 1100; CLOCK_MONOTONIC said 5090 */
    loggp_tsc_anchor a = loggp_tsc_reanchor(&old, 1100, 5090, ghz);
    cr_assert_eq(a.ns, 5100);
    cr_assert_eq(a.tsc, 1100);
    cr_assert_eq(a.span, LOGGP_TSC_ANCHOR_NS);
    /* it ran slow: CLOCK_MONOTONIC is taken */
    a = loggp_tsc_reanchor(&old, 1100, 5130, ghz);
    cr_assert_eq(a.ns, 5130);
    /* a reading at the old anchor's own tick: still never behind it */
    a = loggp_tsc_reanchor(&old, 1000, 4990, ghz);
    cr_assert_eq(a.ns, 5000);
    a = loggp_tsc_reanchor(&old, 1000, 5010, ghz);
    cr_assert_eq(a.ns, 5010);
    /* no anchor yet */
    loggp_tsc_anchor none = {0};
    a = loggp_tsc_reanchor(&none, 1100, 77, ghz / 2);
    cr_assert_eq(a.ns, 77);
    cr_assert_eq(a.mult, ghz / 2);
    cr_assert_eq(a.span, 2 * LOGGP_TSC_ANCHOR_NS);
}

/* Every reading lies between two vDSO readings around it (within slack_ns),
 * over span_ns, and never goes back. */
static void agrees_with_the_vdso(uint64_t span_ns, uint64_t slack_ns)
{
    uint64_t start = loggp_vdso_ns(), last = 0, worst = 0;
    long n = 0;
    while (loggp_vdso_ns() - start < span_ns) {
        uint64_t before = loggp_vdso_ns();
        uint64_t t = loggp_now_ns();
        uint64_t after = loggp_vdso_ns();
        cr_assert_geq(t, last, "went back by %llu ns", (unsigned long long)(last - t));
        last = t;
        uint64_t off = t + slack_ns < before ? before - t : t > after + slack_ns ? t - after : 0;
        if (off > worst)
            worst = off;
        n++;
    }
    cr_assert_eq(worst, 0, "a reading %llu ns outside its vDSO bracket (+-%llu) in %ld", (unsigned long long)worst,
                 (unsigned long long)slack_ns, n);
}

Test(clock, agrees_with_clock_monotonic_across_many_anchors)
{
    cr_log_info("clock: %s", loggp_clock_uses_tsc() ? "TSC" : "vDSO");
    /* 50 ms is 500 anchors; the rate's error over one span is a few ns */
    agrees_with_the_vdso(50000000u, 200u);
}

static void *from_a_thread(void *arg)
{
    (void)arg;
    agrees_with_the_vdso(20000000u, 200u);
    return NULL;
}

Test(clock, agrees_in_a_second_thread_with_its_own_anchor)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, from_a_thread, NULL), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
}

Test(clock, uses_the_tsc_exactly_when_the_kernel_does)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char name[32] = {0};
    int kernel_tsc = f && fgets(name, sizeof name, f) && strcmp(name, "tsc\n") == 0;
    if (f)
        fclose(f);
#if defined(__x86_64__)
    cr_assert_eq(loggp_clock_uses_tsc(), kernel_tsc, "kernel clocksource %s", name);
#else
    cr_assert_eq(loggp_clock_uses_tsc(), 0);
#endif
}
