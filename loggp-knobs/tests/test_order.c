/* The shared order statistics (core/order.c). */
#include <criterion/criterion.h>

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
