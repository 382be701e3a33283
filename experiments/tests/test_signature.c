#include "signature.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>

/* A size whose four quantities are exact (CI 0). */
static size_result point(long bytes, double T, double o_s, double o_r, double g)
{
    size_result r = {0};
    r.bytes = bytes;
    r.T = (median_ci){T, 0, 20};
    r.o_s = (median_ci){o_s, 0, 20};
    r.o_r = (median_ci){o_r, 0, 20};
    r.g = (median_ci){g, 0, 20};
    r.L_us = T - o_s - o_r;
    return r;
}

Test(signature, departure_from_a_straight_line)
{
    /* on the line y = x: no departure */
    cr_expect_float_eq(bend_departure(1, 1, 2, 2, 4, 4, 0.3), 0.0, 1e-12);
    /* 4 B at 8 instead of 4: 50 % of the measured value */
    cr_expect_float_eq(bend_departure(1, 1, 2, 2, 4, 8, 0.3), 0.5, 1e-12);
    /* below the absolute floor: no departure */
    cr_expect_float_eq(bend_departure(1, 1, 2, 2, 4, 4.2, 0.3), 0.0, 1e-12);
}

Test(signature, finds_the_jump_of_a_protocol_switch)
{
    size_result r[6];
    long sizes[6] = {1024, 2048, 4096, 8192, 16384, 32768};
    for (int i = 0; i < 6; i++) {
        double T = 1.0 + sizes[i] * 1e-4 + (sizes[i] > 4096 ? 5.0 : 0.0);
        r[i] = point(sizes[i], T, 0.2, 0.3, 0.1 + sizes[i] * 1e-4);
    }
    int at[3];
    int n = find_bends(r, 6, at, 3);
    /* Both the first size past the jump and the next (whose line straddles it) bend. */
    cr_assert_eq(n, 2);
    cr_expect((at[0] == 3 && at[1] == 4) || (at[0] == 4 && at[1] == 3), "%d %d", at[0], at[1]);
    size_result smooth[6];
    for (int i = 0; i < 6; i++)
        smooth[i] = point(sizes[i], 1.0 + sizes[i] * 1e-4, 0.2, 0.3, 0.1);
    cr_expect_eq(find_bends(smooth, 6, at, 3), 0);
}

Test(signature, bisection_midpoints_are_aligned_and_inside)
{
    cr_expect_eq(bisection_midpoint(4096, 8192), 6144);
    cr_expect_eq(bisection_midpoint(4096, 4200), 4144); /* 4148 rounded down to a multiple of 8 */
    cr_expect_eq(bisection_midpoint(8, 16), 12);
    cr_expect_eq(bisection_midpoint(8, 9), -1);
    cr_expect_eq(bisection_midpoint(100, 104), -1); /* 102 -> 96, below lo */
    cr_expect(bend_in_lower_half(1.0, 5.0, 6.0));
    cr_expect_not(bend_in_lower_half(1.0, 2.0, 6.0));
}

Test(signature, G_is_the_slope_of_g_over_the_largest_sizes)
{
    size_result r[5];
    long sizes[5] = {1, 64, 65536, 262144, 1048576};
    for (int i = 0; i < 5; i++)
        r[i] = point(sizes[i], 1.0 + sizes[i] * 2e-4, 0.2, 0.3, 0.5 + sizes[i] * 1e-4);
    r[0].g.median = 50.0; /* a small size far off the line does not enter the fit */
    summary s = summarize_signature(r, 5, 1048576);
    cr_expect_float_eq(s.G_ns_per_byte, 0.1, 1e-9);
    cr_expect_float_eq(s.G_lo, 65536, 0);
    cr_expect_float_eq(s.G_hi, 1048576, 0);
    cr_expect_not(s.G_clamped);
    for (int i = 0; i < 5; i++)
        r[i].g.median = 10.0 - sizes[i] * 1e-6;
    s = summarize_signature(r, 5, 1048576);
    cr_expect(s.G_clamped);
    cr_expect_float_eq(s.G_ns_per_byte, 0.0, 0);
    cr_expect(s.G_raw < 0);
}

Test(signature, L_is_the_median_over_small_sizes_less_the_bytes)
{
    size_result r[4] = {point(1, 1.0, 0.2, 0.3, 0.4), point(8, 1.1, 0.2, 0.3, 0.4),
                        point(64, 1.3, 0.2, 0.3, 0.4), point(65536, 9.0, 8.0, 8.0, 0.4)};
    summary s = summarize_signature(r, 4, 65536);
    /* g is flat, so G = 0: L = median(0.5, 0.6, 0.8) */
    cr_expect_float_eq(s.L_us, 0.6, 1e-9);
}

Test(signature, rounds_combine_to_the_median_and_the_widest_ci)
{
    size_result a[1] = {point(8, 1.0, 0, 0, 0)}, b[1] = {point(8, 3.0, 0, 0, 0)}, c[1] = {point(8, 2.0, 0, 0, 0)};
    a[0].T.ci_half = 0.1;
    b[0].T.ci_half = 0.4;
    c[0].T.ci_half = 0.2;
    const size_result *rounds[3] = {a, b, c};
    median_ci m = combine_rounds(rounds, 3, 0, offsetof(size_result, T));
    cr_expect_float_eq(m.median, 2.0, 1e-12);
    cr_expect_float_eq(m.ci_half, 0.4, 1e-12);
    cr_expect_eq(m.n, 60);
    c[0].T.ci_half = NAN;
    cr_expect(isnan(combine_rounds(rounds, 3, 0, offsetof(size_result, T)).ci_half));
}
