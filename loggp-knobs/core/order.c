#include "order.h"

#include <math.h>
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

size_t loggp_median_interval_rank(size_t n)
{
    double tail = (1.0 - erf(1.96 / sqrt(2.0))) / 2.0;
    /* Terms more than 20 standard deviations below n/2 add less than 1e-80: starting
     * there keeps a large n to a few sqrt(n) steps, and no term underflows. */
    double start = floor((double)n / 2.0 - 10.0 * sqrt((double)n));
    size_t j = start > 0.0 ? (size_t)start : 0;
    double term = exp(lgamma((double)n + 1.0) - lgamma((double)j + 1.0) - lgamma((double)(n - j) + 1.0) -
                      (double)n * log(2.0)); /* P(B = j) */
    double below = 0.0;
    while (j < n && below + term <= tail) {
        below += term;
        j++;
        term *= (double)(n - j + 1) / (double)j; /* P(B = j) from P(B = j - 1) */
    }
    return j;
}

int loggp_median_interval_sorted(const double *v, size_t n, double *low, double *high)
{
    size_t j = loggp_median_interval_rank(n);
    if (j < 1)
        return 0;
    *low = v[j - 1];
    *high = v[n - j];
    return 1;
}
