/* The shared order statistics (core/order.c). */
#include <criterion/criterion.h>
#include <math.h>

#include "order.h"

Test(order, the_median_of_an_odd_count_is_the_middle_sample)
{
    double v[] = {5, -1, 3, 9, 3};
    cr_assert_float_eq(loggp_median(v, 5), 3.0, 1e-12);
    cr_assert(v[0] == -1 && v[1] == 3 && v[2] == 3 && v[3] == 5 && v[4] == 9, "sorted in place");
}

Test(order, the_median_of_an_even_count_is_the_mean_of_the_middle_two)
{
    double v[] = {4, 1, 10, 2};
    cr_assert_float_eq(loggp_median(v, 4), 3.0, 1e-12);
}

Test(order, no_samples_give_zero)
{
    cr_assert_float_eq(loggp_median(NULL, 0), 0.0, 1e-12);
    cr_assert_float_eq(loggp_quantile_sorted(NULL, 0, 0.5), 0.0, 1e-12);
}

Test(order, quantiles_take_the_sample_at_their_rank)
{
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    cr_assert_float_eq(loggp_quantile_sorted(v, 11, 0.9), 10.0, 1e-12);
    cr_assert_float_eq(loggp_quantile_sorted(v, 11, 0.5), 6.0, 1e-12);
    cr_assert_float_eq(loggp_quantile_sorted(v, 11, 0.0), 1.0, 1e-12);
    cr_assert_float_eq(loggp_quantile_sorted(v, 11, 1.0), 11.0, 1e-12);
    cr_assert_float_eq(loggp_quantile_sorted(v, 11, 2.0), 11.0, 1e-12, "clamped");
}

/* 1 - 2 P(Binomial(n, 1/2) < j): how often [x_j, x_(n-j+1)] of n values holds their median. */
static double coverage(size_t n, size_t j)
{
    double term = pow(0.5, (double)n), below = 0.0; /* P(B = 0); no underflow for n <= 1000 */
    for (size_t i = 0; i < j; i++) {
        below += term;
        term *= (double)(n - i) / (double)(i + 1);
    }
    return 1.0 - 2.0 * below;
}

Test(order, the_median_interval_is_the_narrowest_covering_95_percent)
{
    for (size_t n = 6; n <= 1000; n++) {
        size_t j = loggp_median_interval_rank(n);
        cr_assert(j >= 1 && 2 * j <= n + 1, "n %zu: rank %zu", n, j);
        cr_assert(coverage(n, j) >= 0.95, "n %zu: rank %zu covers %g", n, j, coverage(n, j));
        cr_assert(coverage(n, j + 1) < 0.95, "n %zu: rank %zu would do", n, j + 1);
    }
}

Test(order, below_six_values_the_median_has_no_interval)
{
    for (size_t n = 0; n < 6; n++)
        cr_expect_eq(loggp_median_interval_rank(n), 0, "n %zu", n);
    cr_expect_eq(loggp_median_interval_rank(6), 1); /* [min, max] of 6 covers 96.9 % */
    double v[] = {1, 2, 3, 4, 5}, low = -1, high = -1;
    cr_expect_eq(loggp_median_interval_sorted(v, 5, &low, &high), 0);
    cr_expect(low == -1 && high == -1, "untouched");
}

Test(order, the_median_interval_bounds_are_the_samples_at_its_ranks)
{
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, low, high;
    cr_assert_eq(loggp_median_interval_sorted(v, 9, &low, &high), 1);
    cr_expect(low == 2 && high == 8, "[%g, %g]", low, high); /* P(B < 2) = 10/512 */
}

Test(order, a_large_sample_gets_ranks_near_the_normal_approximation)
{
    size_t n = 200001; /* far past where 0.5^n underflows */
    double j = (double)loggp_median_interval_rank(n), half = 1.96 * sqrt((double)n) / 2.0;
    cr_expect(fabs(j - ((double)n / 2.0 - half)) <= 2.0, "rank %g", j);
}
