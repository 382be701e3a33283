#include "stats.h"

#include <criterion/criterion.h>
#include <math.h>

Test(stats, median_of_odd_and_even_counts)
{
    double odd[] = {5, 1, 3};
    cr_expect_float_eq(median_with_ci(odd, 3).median, 3.0, 1e-12);
    double even[] = {4, 1, 3, 2};
    cr_expect_float_eq(median_with_ci(even, 4).median, 2.5, 1e-12);
}

Test(stats, too_few_samples_have_infinite_ci)
{
    double x[] = {1, 2, 3, 4, 5};
    median_ci m = median_with_ci(x, 5);
    cr_expect(isinf(m.ci_half));
    cr_expect_not(ci_meets_target(m, 0.5, 100));
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
