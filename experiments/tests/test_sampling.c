#include "sampling.h"

#include <criterion/criterion.h>
#include <math.h>

Test(sampling, batches_double_up_to_64_and_stop_at_the_cap)
{
    cr_expect_eq(next_batch_size(4, 4, 2000), 8);
    cr_expect_eq(next_batch_size(32, 100, 2000), 64);
    cr_expect_eq(next_batch_size(64, 500, 2000), 64);
    cr_expect_eq(next_batch_size(64, 1990, 2000), 10);
    cr_expect_eq(next_batch_size(8, 2000, 2000), 0);
}

Test(sampling, stops_when_precise_with_enough_samples)
{
    sampling_target t = {0.02, 0.02, 11, 2000, 1.0};
    median_ci precise = {10.0, 0.1, 12};
    cr_expect(sampling_done(precise, 12, 0.0, &t));
    cr_expect_not(sampling_done(precise, 8, 0.0, &t), "min_samples wins over a narrow CI");
    cr_expect(sampling_done(precise, 11, 0.0, &t), "exactly min_samples is enough");
    cr_expect_not(sampling_done(precise, 10, 0.0, &t), "one short of min_samples is not");
    median_ci wide = {10.0, 1.0, 12};
    cr_expect_not(sampling_done(wide, 12, 0.5, &t));
    cr_expect(sampling_done(wide, 12, 1.5, &t), "budget spent");
    cr_expect_not(sampling_done(wide, 8, 1.5, &t), "budget never cuts below min_samples");
    cr_expect(sampling_done(wide, 2000, 0.0, &t), "cap reached");
}

Test(sampling, gap_is_the_burst_difference_per_extra_message)
{
    median_ci burst = {31.0, 0.3, 20}, single = {1.0, 0.4, 20};
    median_ci g = gap_from_bursts(burst, single, 16, 20);
    cr_expect_float_eq(g.median, 2.0, 1e-12);
    cr_expect_float_eq(g.ci_half, 0.5 / 15.0, 1e-12);
    cr_expect_eq(g.n, 20);
}

Test(sampling, only_a_ci_wider_than_ten_percent_is_retried)
{
    cr_expect_not(phase_needs_retry((median_ci){10.0, 0.9, 50}, 0.02));
    cr_expect(phase_needs_retry((median_ci){10.0, 1.1, 50}, 0.02));
    cr_expect_not(phase_needs_retry((median_ci){0.5, 0.15, 50}, 0.02), "10 x abs floor");
    cr_expect(phase_needs_retry((median_ci){0.5, INFINITY, 5}, 0.02));
}

Test(sampling, pace_and_receive_wait)
{
    cr_expect_float_eq(pace_for_gap(4.0), 8.0, 1e-12);
    cr_expect_float_eq(pace_for_gap(-1.0), PACE_SLACK_US, 1e-12);
    cr_expect_float_eq(receive_wait_us(1.0, 3.0, 4.0, 0.5), 12.5, 1e-12);
}

static loggp_knobs knobs_us(double o_s, double o_r, double g, double G_ns, double L)
{
    loggp_knobs k = {0};
    k.ps[LOGGP_KNOB_O_S] = (int64_t)(o_s * 1e6);
    k.ps[LOGGP_KNOB_O_R] = (int64_t)(o_r * 1e6);
    k.ps[LOGGP_KNOB_GAP] = (int64_t)(g * 1e6);
    k.ps[LOGGP_KNOB_GAP_PER_BYTE] = (int64_t)(G_ns * 1e3);
    k.ps[LOGGP_KNOB_LATENCY] = (int64_t)(L * 1e6);
    return k;
}

Test(sampling, knob_idle_follows_the_receive_wait)
{
    loggp_knobs zero = knobs_us(0, 0, 0, 0, 0);
    cr_expect_float_eq(knob_idle_us(&zero, 1024), 0.0, 1e-12);
    loggp_knobs L10 = knobs_us(0, 0, 0, 0, 10);
    cr_expect_float_eq(knob_idle_us(&L10, 8), 30.0, 1e-9); /* 1.5 x (T(0) + T(m)): 1.5 x 2 L */
    loggp_knobs g4 = knobs_us(0, 0, 4, 0, 0);
    cr_expect_float_eq(knob_idle_us(&g4, 8), 5.0, 1e-9); /* 1.25 g */
    loggp_knobs G1 = knobs_us(0, 0, 0, 1, 0);
    /* (m-1)G = 1.023 us: 1.5 of it in T(m), 1.25 of it in the pace. */
    cr_expect_float_eq(knob_idle_us(&G1, 1024), 2.75 * 1.023, 1e-9);
}

Test(sampling, knob_idle_counts_both_overheads_and_logps_gap)
{
    /* T(0) + T(m) holds o_s and o_r twice each; the pace is LogP's gap
     * max(g, o_s, o_r), as a burst can go no faster than either overhead */
    loggp_knobs os2 = knobs_us(2, 0, 0, 0, 0);
    cr_expect_float_eq(knob_idle_us(&os2, 8), 1.5 * 4 + 1.25 * 2, 1e-9);
    loggp_knobs or3_g1 = knobs_us(0, 3, 1, 0, 0);
    cr_expect_float_eq(knob_idle_us(&or3_g1, 8), 1.5 * 6 + 1.25 * 3, 1e-9);
    loggp_knobs g4_os1 = knobs_us(1, 0, 4, 0, 0);
    cr_expect_float_eq(knob_idle_us(&g4_os1, 8), 1.5 * 2 + 1.25 * 4, 1e-9);
}

Test(sampling, every_set_idles_as_long_as_the_longest)
{
    loggp_knobs sets[2] = {knobs_us(0, 0, 0, 0, 0), knobs_us(0, 0, 0, 0, 10)};
    cr_expect_float_eq(idle_equalizer_us(sets, 2, 0, 8), 30.0, 1e-9);
    cr_expect_float_eq(idle_equalizer_us(sets, 2, 1, 8), 0.0, 1e-9);
    cr_expect_float_eq(idle_equalizer_us(sets, 2, -1, 8), 0.0, 1e-9);
}
