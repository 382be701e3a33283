#include "stats.h"

#include <math.h>

#include "order.h"

median_ci median_with_ci(double *x, size_t n)
{
    median_ci r = {NAN, INFINITY, n};
    if (n == 0)
        return r;
    r.median = loggp_median(x, n); /* sorts x, which the interval's ranks need */
    double low, high;
    if (loggp_median_interval_sorted(x, n, &low, &high))
        r.ci_half = 0.5 * (high - low);
    return r;
}

int ci_meets_target(median_ci m, double rel, double abs_tol)
{
    double target = fmax(rel * fabs(m.median), abs_tol);
    return isfinite(m.ci_half) && m.ci_half <= target;
}

int least_squares(const double *x, const double *y, size_t n, double *slope, double *intercept)
{
    if (n < 2)
        return -1;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx == 0)
        return -1;
    *slope = sxy / sxx;
    *intercept = my - *slope * mx;
    return 0;
}
