/* The batched FFT against a direct O(n^2) DFT, for both directions, every
 * length up to 256 (odd and even numbers of passes), strided layouts and a
 * partial last block. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "ft_fft.h"

static double value(long k, int part)
{
    /* deterministic, irregular test data */
    return sin(0.37 * (double)k + 1.3 * part) + 0.25 * cos(1.91 * (double)(k * k % 97));
}

/* Direct DFT of one line of interleaved complex data. */
static void dft(int dir, int n, const double *in, long stride, double *out)
{
    for (int k = 0; k < n; k++) {
        double sr = 0.0, si = 0.0;
        for (int j = 0; j < n; j++) {
            double angle = dir * 2.0 * 3.141592653589793238 * (double)j * k / n;
            double xr = in[2 * j * stride], xi = in[2 * j * stride + 1];
            sr += xr * cos(angle) - xi * sin(angle);
            si += xr * sin(angle) + xi * cos(angle);
        }
        out[2 * k] = sr;
        out[2 * k + 1] = si;
    }
}

static void check_layout(int n, int dir, long n_inner, long inner_stride, long n_outer,
                         long outer_stride, long point_stride, long total)
{
    double *data = malloc(sizeof(double) * 2 * total);
    double *orig = malloc(sizeof(double) * 2 * total);
    double *want = malloc(sizeof(double) * 2 * n);
    cr_assert(data && orig && want);
    for (long k = 0; k < total; k++) {
        data[2 * k] = orig[2 * k] = value(k, 0);
        data[2 * k + 1] = orig[2 * k + 1] = value(k, 1);
    }
    fft_plan plan;
    cr_assert_eq(fft_plan_init(&plan, n), 0);
    fft_lines(&plan, dir, data, data, n_inner, inner_stride, n_outer, outer_stride, point_stride);
    for (long o = 0; o < n_outer; o++)
        for (long q = 0; q < n_inner; q++) {
            long base = o * outer_stride + q * inner_stride;
            dft(dir, n, orig + 2 * base, point_stride, want);
            for (int k = 0; k < n; k++) {
                long at = 2 * (base + k * point_stride);
                cr_assert_float_eq(data[at], want[2 * k], 1e-9 * n, "n=%d dir=%d line(%ld,%ld) k=%d re", n,
                                   dir, o, q, k);
                cr_assert_float_eq(data[at + 1], want[2 * k + 1], 1e-9 * n, "n=%d dir=%d line(%ld,%ld) k=%d im",
                                   n, dir, o, q, k);
            }
        }
    fft_plan_free(&plan);
    free(data);
    free(orig);
    free(want);
}

Test(ft_fft, contiguous_lines_match_direct_dft)
{
    for (int n = 1; n <= 256; n *= 2)
        for (int dir = -1; dir <= 1; dir += 2)
            check_layout(n, dir, 3, n, 2, 3L * n, 1, 6L * n); /* x-lines, 3 per plane */
}

Test(ft_fft, strided_lines_and_partial_block_match_direct_dft)
{
    /* y-lines of a 21 x 8 x 2 array: 21 lines per block row, so one block of
     * 16 and a partial one of 5. */
    check_layout(8, 1, 21, 1, 2, 21L * 8, 21, 21L * 8 * 2);
    check_layout(32, -1, 20, 1, 1, 0, 20, 20L * 32);
}

Test(ft_fft, inverse_of_forward_is_n_times_identity)
{
    const int n = 128;
    double data[2 * 128], orig[2 * 128];
    for (int k = 0; k < n; k++) {
        data[2 * k] = orig[2 * k] = value(k, 0);
        data[2 * k + 1] = orig[2 * k + 1] = value(k, 1);
    }
    fft_plan plan;
    cr_assert_eq(fft_plan_init(&plan, n), 0);
    fft_lines(&plan, 1, data, data, 1, 0, 1, 0, 1);
    fft_lines(&plan, -1, data, data, 1, 0, 1, 0, 1);
    for (int k = 0; k < 2 * n; k++)
        cr_assert_float_eq(data[k], n * orig[k], 1e-10 * n);
    fft_plan_free(&plan);
}

Test(ft_fft, rejects_lengths_that_are_not_powers_of_two)
{
    fft_plan plan;
    cr_assert_eq(fft_plan_init(&plan, 12), -1);
    cr_assert_eq(fft_plan_init(&plan, 0), -1);
}

Test(ft_fft, out_of_place_matches_in_place_and_keeps_input)
{
    enum { N = 64, LINES = 20 };
    static double in[2 * N * LINES], copy[2 * N * LINES], out[2 * N * LINES];
    for (int k = 0; k < 2 * N * LINES; k++)
        in[k] = copy[k] = value(k, k & 1);
    fft_plan plan;
    cr_assert_eq(fft_plan_init(&plan, N), 0);
    /* z-like lines: point stride LINES, lines adjacent */
    fft_lines(&plan, -1, in, out, LINES, 1, 1, 0, LINES);
    fft_lines(&plan, -1, copy, copy, LINES, 1, 1, 0, LINES);
    for (int k = 0; k < 2 * N * LINES; k++) {
        cr_assert_eq(out[k], copy[k], "element %d", k);
        cr_assert_eq(in[k], value(k, k & 1), "input changed at %d", k);
    }
    fft_plan_free(&plan);
}
