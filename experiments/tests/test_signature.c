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

Test(signature, G_is_fitted_on_one_side_of_the_protocol_switch)
{
    /* L = 10 us, as `loggp probe --L 10us --sizes 8,4K,8K,64K` measured it: g(m) steps by
     * the rendezvous's flights (about 2L) at the switch; 0.094 ns/B on each side of it */
    size_result r[4];
    long sizes[4] = {8, 4096, 8192, 65536};
    double T[4] = {11.8, 12.5, 34.6, 40.3}, o_s[4] = {0.35, 0.65, 20.9, 21.2}, o_r[4] = {1.54, 1.73, 21.1, 21.2};
    for (int i = 0; i < 4; i++)
        r[i] = point(sizes[i], T[i], o_s[i], o_r[i], (i < 2 ? 1.3 : 22.8) + sizes[i] * 0.094e-3);
    summary s = summarize_signature(r, 4, 65536);
    cr_assert_eq(s.switch_index, 2);
    cr_expect_float_eq(s.G_ns_per_byte, 0.094, 1e-9, "G %g: the step of the switch read as bytes", s.G_ns_per_byte);
    cr_expect_float_eq(s.G_lo, 8192, 0);
    cr_expect_float_eq(s.G_hi, 65536, 0);
    /* one size past the switch: the fit stays before it */
    summary before = summarize_signature(r, 3, 8192);
    cr_expect_float_eq(before.G_ns_per_byte, 0.094, 1e-9);
    cr_expect_float_eq(before.G_hi, 4096, 0);
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

/* Medians measured here (MPICH 5.0.2 ch4:ofi shm, np=2, blocking send and receive):
 * bytes, T, o_s, o_r. Past 4 KiB the send and the receive both hold the transfer. */
static const double measured_blocking[][4] = {
    {1024, 0.921, 0.100, 0.701}, {2048, 0.941, 0.120, 0.721}, {4096, 1.197, 0.180, 0.726},
    {8192, 3.630, 3.795, 3.776}, {16384, 3.883, 4.147, 3.475}, {65536, 13.405, 7.215, 6.655},
    {1048576, 315.4, 143.8, 273.6}};

static int load(const double (*rows)[4], int n, size_result *r)
{
    for (int i = 0; i < n; i++)
        r[i] = point((long)rows[i][0], rows[i][1], rows[i][2], rows[i][3], 0.5);
    return n;
}

Test(physical, the_switch_is_where_T_and_o_r_jump_together)
{
    size_result r[7];
    int n = load(measured_blocking, 7, r);
    cr_expect_eq(find_protocol_switch(r, n), 3);
    summary s = summarize_signature(r, n, 1048576);
    cr_expect_eq(s.switch_index, 3);
    for (int i = 0; i < n; i++) {
        double l = size_latency_us(&r[i], i, &s);
        if (i < 3)
            cr_expect(l >= 0 && fabs(l - r[i].L_us) < 1e-12, "%ld B: %g", r[i].bytes, l);
        else
            cr_expect(isnan(l), "%ld B: residual %g must not be reported as a latency", r[i].bytes, r[i].L_us);
    }
}

Test(physical, a_latency_knob_moves_the_switch_jump_not_the_detection)
{
    /* L = 10 us: eager T = machine + L; past the switch the handshake adds about 2 L
     * to T and to o_r (a rendezvous costs a late receiver about 2 L). */
    size_result r[5];
    long sizes[5] = {8, 64, 1024, 4096, 8192};
    for (int i = 0; i < 5; i++)
        r[i] = sizes[i] <= 4096 ? point(sizes[i], 10.9, 0.09, 0.66, 0.6) : point(sizes[i], 33.6, 22.0, 23.0, 25);
    cr_expect_eq(find_protocol_switch(r, 5), 4);
}

Test(physical, no_switch_without_a_jump_of_the_receive)
{
    /* A per-byte cost (G = 1 ns/B) raises T steadily: no jump over the trend. */
    size_result r[6];
    long sizes[6] = {8, 1024, 4096, 8192, 16384, 32768};
    for (int i = 0; i < 6; i++)
        r[i] = point(sizes[i], 0.9 + sizes[i] * 1e-3, 0.1, 0.65, 0.6 + sizes[i] * 1e-3);
    cr_expect_eq(find_protocol_switch(r, 6), 6);
    /* T jumps but the receive does not: a sender-side cost, not a protocol switch. */
    r[3].T.median += 5.0;
    r[4].T.median += 5.0;
    r[5].T.median += 5.0;
    cr_expect_eq(find_protocol_switch(r, 6), 6);
    /* One disturbed size (measured here under load at 64 B), then back to normal. */
    size_result d[5] = {point(16, 4.654, 0.08, 2.944, 3), point(32, 4.667, 0.08, 2.944, 3),
                        point(64, 9.199, 0.09, 5.914, 4.4), point(72, 0.844, 0.08, 0.621, 0.5),
                        point(80, 0.851, 0.08, 0.601, 0.5)};
    cr_expect_eq(find_protocol_switch(d, 5), 5);
}

Test(physical, overheads_beyond_the_one_way_time_mark_the_switch)
{
    /* The jump of T is lost in noise, but o_s + o_r exceed T at 8 and 16 KiB. */
    size_result r[4] = {point(1024, 0.92, 0.10, 0.70, 0.6), point(4096, 1.20, 0.18, 0.73, 0.6),
                        point(8192, 1.50, 1.00, 1.00, 0.7), point(16384, 2.00, 1.50, 1.50, 0.9)};
    cr_expect_eq(find_protocol_switch(r, 4), 2);
    cr_expect(overheads_exceed_one_way(&r[2]) && !overheads_exceed_one_way(&r[1]));
    /* within noise (a wide CI), or at one size only, it is no switch */
    r[2].o_s.ci_half = 0.5;
    cr_expect_eq(find_protocol_switch(r, 4), 3);
    r[3].o_s.median = 0.2;
    r[3].L_us = 2.00 - 0.2 - 1.50;
    cr_expect_eq(find_protocol_switch(r, 4), 4);
    /* ... but that one size's difference, beyond noise, is still no latency */
    r[2].o_s.ci_half = 0;
    cr_expect_eq(find_protocol_switch(r, 4), 4);
    summary s = summarize_signature(r, 4, 16384);
    cr_expect(isnan(size_latency_us(&r[2], 2, &s)));
    cr_expect_float_eq(size_latency_us(&r[3], 3, &s), 0.3, 1e-9);
    /* at small sizes a negative difference is noise around a tiny L, not a switch */
    size_result small[3] = {point(1, 0.9, 0.3, 0.9, 0.6), point(8, 0.9, 0.3, 0.9, 0.6), point(64, 0.9, 0.3, 0.9, 0.6)};
    cr_expect_eq(find_protocol_switch(small, 3), 3);
}

/* Five sizes, all past 64 B: T 4 us, o_s 0.5, o_r 1 up to 4 KiB; at 8 KiB T and o_r step as set;
 * 16 KiB keeps 8 KiB's T (below the rising trend, so no jump of its own) and o_r16. Every value
 * is exact in binary, so each rule is read right at its edge. */
static int switch_of(double T8, double o_r8, double o_r16, size_result *r)
{
    long sizes[5] = {1024, 2048, 4096, 8192, 16384};
    for (int i = 0; i < 3; i++)
        r[i] = point(sizes[i], 4.0, 0.5, 1.0, 0.6);
    r[3] = point(sizes[3], T8, 0.5, o_r8, 0.6);
    r[4] = point(sizes[4], T8, 0.5, o_r16, 0.6);
    return find_protocol_switch(r, 5);
}

Test(physical, each_rule_of_the_switch_on_both_sides_of_its_edge)
{
    size_result r[5];
    /* T's jump must exceed max(0.3 us, half the T before): 2 us over 4 is not a switch, a
     * sixteenth more is */
    cr_expect_eq(switch_of(6.0, 2.0, 2.0, r), 5);
    cr_expect_eq(switch_of(6.0625, 2.0, 2.0, r), 3);
    /* o_r's jump must be at least 0.3 of T's (10 us): 3 us is, a sixteenth less is not */
    cr_expect_eq(switch_of(14.0, 4.0, 4.0, r), 3);
    cr_expect_eq(switch_of(14.0, 3.9375, 3.9375, r), 5);
    /* the next size's o_r must keep at least half the rise (1 -> 5): 3 us does, a sixteenth
     * less is a disturbed size, not a switch */
    cr_expect_eq(switch_of(14.0, 5.0, 3.0, r), 3);
    cr_expect_eq(switch_of(14.0, 5.0, 2.9375, r), 5);
}

Test(physical, the_first_size_past_the_switch_has_no_latency_even_when_its_overheads_fit)
{
    /* o_s + o_r = 4.5 < T = 14 at 8 KiB: the overheads alone do not hide its L; the switch does */
    size_result r[5];
    cr_assert_eq(switch_of(14.0, 4.0, 4.0, r), 3);
    summary s = summarize_signature(r, 5, 16384);
    cr_assert_eq(s.switch_index, 3);
    cr_expect_float_eq(size_latency_us(&r[2], 2, &s), 2.5, 1e-12);
    cr_expect(isnan(size_latency_us(&r[3], 3, &s)), "%g", size_latency_us(&r[3], 3, &s));
    cr_expect(isnan(size_latency_us(&r[4], 4, &s)));
}

Test(signature, G_is_fitted_past_a_switch_after_the_first_size)
{
    /* the switch at index 1 (one size before it), three past it: G is theirs, 0.094 ns/B, not a
     * line through the step of the switch */
    size_result r[4];
    long sizes[4] = {4096, 8192, 16384, 65536};
    r[0] = point(sizes[0], 4.0, 0.5, 1.0, 1.3 + sizes[0] * 0.094e-3);
    for (int i = 1; i < 4; i++)
        r[i] = point(sizes[i], 14.0, 0.5, 5.0, 22.8 + sizes[i] * 0.094e-3);
    summary s = summarize_signature(r, 4, 65536);
    cr_assert_eq(s.switch_index, 1);
    cr_expect_float_eq(s.G_ns_per_byte, 0.094, 1e-9, "G %g", s.G_ns_per_byte);
    cr_expect_float_eq(s.G_lo, 8192, 0);
    cr_expect_float_eq(s.G_hi, 65536, 0);
}

Test(physical, L_is_clamped_at_zero_and_says_so)
{
    /* o_r timed after an idle wait costs 0.04 us more than its share of the ping-pong. */
    size_result r[3] = {point(1, 0.80, 0.09, 0.75, 0.6), point(8, 0.81, 0.09, 0.76, 0.6),
                        point(64, 0.83, 0.09, 0.77, 0.6)};
    summary s = summarize_signature(r, 3, 64);
    cr_expect(s.L_clamped);
    cr_expect_float_eq(s.L_us, 0.0, 0);
    cr_expect(s.L_raw < -0.02 && s.L_raw > -0.05, "%g", s.L_raw);
    cr_expect_eq(s.L_lo, 1);
    cr_expect_eq(s.L_hi, 64);
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(size_latency_us(&r[i], i, &s), 0.0, 0);
}

Test(physical, L_comes_from_small_sizes_before_the_switch)
{
    size_result r[3] = {point(8, 0.9, 0.1, 0.6, 0.6), point(32, 0.9, 0.1, 0.6, 0.6),
                        point(64, 4.0, 3.8, 3.5, 0.6)};
    summary s = summarize_signature(r, 3, 64);
    cr_expect_eq(s.switch_index, 2);
    cr_expect_float_eq(s.L_us, 0.2, 1e-9);
    cr_expect_eq(s.L_hi, 32);
    cr_expect_not(s.L_clamped);
}

Test(physical, L_is_never_negative)
{
    /* Any mix of overheads and round trips, noise included. */
    unsigned seed = 12345;
    for (int trial = 0; trial < 2000; trial++) {
        size_result r[8];
        long bytes = 1;
        for (int i = 0; i < 8; i++, bytes *= 8) {
            double v[4];
            for (int k = 0; k < 4; k++) {
                seed = seed * 1103515245u + 12345u;
                v[k] = (double)(seed >> 8 & 0xffff) / 65536.0 * 5.0;
            }
            r[i] = point(bytes, v[0], v[1], v[2], v[3]);
        }
        summary s = summarize_signature(r, 8, 1L << 21);
        cr_assert(s.L_us >= 0, "trial %d: L %g", trial, s.L_us);
        cr_assert(s.L_clamped == (s.L_raw < 0));
        for (int i = 0; i < 8; i++) {
            double l = size_latency_us(&r[i], i, &s);
            cr_assert(isnan(l) || l >= 0);
        }
    }
}

Test(physical, which_columns_lose_their_meaning)
{
    cr_expect_eq(columns_past_switch(1), COLUMN_O_S | COLUMN_O_R | COLUMN_L);
    cr_expect_eq(columns_past_switch(0), COLUMN_O_R | COLUMN_L);
}

/* Each edge of a bend, on both sides (the values are exact in binary) */

Test(signature, departure_at_the_floor_itself_is_none)
{
    /* on y = x, 4 B at 4.25: 0.25 off, exactly the floor (at most the floor: none) */
    cr_expect_float_eq(bend_departure(1, 1, 2, 2, 4, 4.25, 0.25), 0.0, 1e-12);
    /* 4.5: past it */
    cr_expect_float_eq(bend_departure(1, 1, 2, 2, 4, 4.5, 0.25), 0.5 / 4.5, 1e-12);
}

Test(signature, a_bend_departs_by_more_than_ten_percent)
{
    /* T on y = x up to 2 B; g flat. At 9 B, T = 10: 1 us off, exactly 10 % of 10 */
    size_result r[3] = {point(1, 1.0, 0.1, 0.1, 1.0), point(2, 2.0, 0.1, 0.1, 1.0), point(9, 10.0, 0.1, 0.1, 1.0)};
    int at[3];
    cr_expect_eq(find_bends(r, 3, at, 3), 0, "a departure of exactly 10 %% is no bend");
    r[2] = point(9, 10.5, 0.1, 0.1, 1.0); /* 1.5 us off: 14 % */
    cr_assert_eq(find_bends(r, 3, at, 3), 1);
    cr_expect_eq(at[0], 2);
    /* the same through g, T on its line */
    size_result g[3] = {point(1, 1.0, 0.1, 0.1, 1.0), point(2, 2.0, 0.1, 0.1, 2.0), point(9, 9.0, 0.1, 0.1, 10.0)};
    cr_expect_eq(find_bends(g, 3, at, 3), 0, "g exactly 10 %% off is no bend either");
    g[2] = point(9, 9.0, 0.1, 0.1, 10.5);
    cr_expect_eq(find_bends(g, 3, at, 3), 1);
}

Test(signature, a_bend_is_kept_wherever_a_size_fits_between)
{
    /* 16 B to 18 B: 17 B fits between, so the jump can be bisected */
    int at[3];
    size_result two[3] = {point(8, 1.0, 0.1, 0.1, 1.0), point(16, 1.0, 0.1, 0.1, 1.0), point(18, 6.0, 0.1, 0.1, 1.0)};
    cr_expect_eq(bisection_midpoint(16, 18), 17);
    cr_expect_eq(find_bends(two, 3, at, 3), 1, "a jump with one size between is a bend");
    /* 16 B to 17 B: nothing between to measure */
    size_result one[3] = {point(8, 1.0, 0.1, 0.1, 1.0), point(16, 1.0, 0.1, 0.1, 1.0), point(17, 6.0, 0.1, 0.1, 1.0)};
    cr_expect_eq(bisection_midpoint(16, 17), -1);
    cr_expect_eq(find_bends(one, 3, at, 3), 0, "a jump between neighbours cannot be bisected");
}
