#include "stats.h"

#include "order.h"

#include <criterion/criterion.h>
#include <math.h>

Test(stats, median_of_odd_and_even_counts)
{
    double odd[] = {5, 1, 3};
    cr_expect_float_eq(median_with_ci(odd, 3).median, 3.0, 1e-12);
    double even[] = {4, 1, 3, 2};
    cr_expect_float_eq(median_with_ci(even, 4).median, 2.5, 1e-12);
}

Test(stats, too_few_samples_have_an_infinite_ci_so_sampling_goes_on)
{
    double x[] = {1, 2, 3, 4, 5};
    for (size_t n = 1; n <= 5; n++) { /* [min, max] of 5 covers the median only 93.75 % of the time */
        median_ci m = median_with_ci(x, n);
        cr_expect(isinf(m.ci_half) && m.ci_half > 0, "n %zu: ci %g", n, m.ci_half);
        cr_expect_eq(m.n, n);
        cr_expect_not(ci_meets_target(m, 0.5, 100), "n %zu", n);
    }
    cr_expect_float_eq(median_with_ci(x, 5).median, 3.0, 1e-12, "the median is there without a CI");
    median_ci none = median_with_ci(NULL, 0);
    cr_expect(isnan(none.median) && isinf(none.ci_half) && none.n == 0);
}

Test(stats, six_samples_are_the_first_with_a_ci_their_range)
{
    double x[] = {6, 1, 5, 2, 4, 3};
    median_ci m = median_with_ci(x, 6);
    cr_expect_float_eq(m.ci_half, 0.5 * (6 - 1), 1e-12);
    cr_expect(ci_meets_target(m, 0, 2.5));
}

/* The CI of 1..n is [j, n - j + 1] for the exact binomial rank j. */
static double half_width_of_first_integers(size_t n)
{
    double x[128];
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(n - i); /* descending: median_with_ci sorts */
    return median_with_ci(x, n).ci_half;
}

Test(stats, the_ci_takes_the_exact_binomial_ranks)
{
    /* n = 9: P(B < 2) = 10/512 <= 2.5 %, P(B < 3) = 46/512 is not: [x_2, x_8] (the normal
     * approximation's floor and ceil gave [x_1, x_8]) */
    cr_expect_float_eq(half_width_of_first_integers(9), 0.5 * (8 - 2), 1e-12);
    /* n = 10: P(B < 2) = 11/1024, P(B < 3) = 56/1024: [x_2, x_9], symmetric */
    cr_expect_float_eq(half_width_of_first_integers(10), 0.5 * (9 - 2), 1e-12);
    /* n = 100: [x_40, x_61], as loggp.experiments.precision gives */
    cr_expect_float_eq(half_width_of_first_integers(100), 0.5 * (61 - 40), 1e-12);
    for (size_t n = 6; n <= 128; n++) {
        size_t j = loggp_median_interval_rank(n);
        cr_expect_float_eq(half_width_of_first_integers(n), 0.5 * (double)(n + 1 - 2 * j), 1e-12, "n %zu", n);
    }
}

Test(stats, median_resists_outliers)
{
    double x[101];
    for (int i = 0; i < 101; i++)
        x[i] = 10.0 + 0.001 * (i % 7);
    x[3] = 1e6; /* a preempted sample */
    x[50] = 1e6;
    median_ci m = median_with_ci(x, 101);
    cr_expect(fabs(m.median - 10.003) < 0.0031);
    cr_expect(m.ci_half < 0.01, "ci %g", m.ci_half);
    cr_expect(ci_meets_target(m, 0.02, 0));
}

Test(stats, ci_shrinks_with_more_samples)
{
    double small[21], large[2001];
    /* Deterministic uniform spread on [0, 1). */
    for (int i = 0; i < 21; i++)
        small[i] = fmod(i * 0.6180339887, 1.0);
    for (int i = 0; i < 2001; i++)
        large[i] = fmod(i * 0.6180339887, 1.0);
    median_ci a = median_with_ci(small, 21), b = median_with_ci(large, 2001);
    cr_expect(a.ci_half > 3 * b.ci_half, "%g vs %g", a.ci_half, b.ci_half);
    /* For a uniform spread the 95 % CI of the median is about 1.96 * 0.5 / sqrt(n). */
    cr_expect(fabs(b.ci_half - 0.98 / sqrt(2001.0)) < 0.01, "%g", b.ci_half);
}

Test(stats, target_is_relative_or_absolute_whichever_is_larger)
{
    median_ci m = {100.0, 1.5, 50};
    cr_expect(ci_meets_target(m, 0.02, 0));   /* 1.5 <= 2 */
    cr_expect_not(ci_meets_target(m, 0.01, 1)); /* 1.5 > max(1, 1) */
    cr_expect(ci_meets_target(m, 0.01, 1.5));
}

Test(stats, the_relative_target_is_of_the_medians_size)
{
    /* a negative reading (a difference of two times) is as precise as its positive twin */
    median_ci m = {-100.0, 1.5, 50};
    cr_expect(ci_meets_target(m, 0.02, 0));
    cr_expect_not(ci_meets_target(m, 0.01, 1));
}

Test(stats, least_squares_recovers_a_line)
{
    double x[] = {1, 2, 4, 8}, y[4];
    for (int i = 0; i < 4; i++)
        y[i] = 3.0 + 0.25 * x[i];
    double s, c;
    cr_assert_eq(least_squares(x, y, 4, &s, &c), 0);
    cr_expect_float_eq(s, 0.25, 1e-12);
    cr_expect_float_eq(c, 3.0, 1e-12);
    double same[] = {2, 2};
    cr_expect_eq(least_squares(same, y, 2, &s, &c), -1);
}
