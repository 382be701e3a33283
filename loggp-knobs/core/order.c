#include "order.h"

#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void loggp_sort_doubles(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, ascending);
}

double loggp_median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    loggp_sort_doubles(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double loggp_quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    if (q <= 0.0)
        return v[0];
    if (q >= 1.0)
        return v[n - 1];
    return v[(size_t)(q * (double)(n - 1))];
}
