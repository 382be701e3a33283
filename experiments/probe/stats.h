/* Robust statistics for loggp-probe: medians with distribution-free confidence intervals. */
#ifndef LOGGP_PROBE_STATS_H
#define LOGGP_PROBE_STATS_H

#include <stddef.h>

typedef struct {
    double median;
    double ci_half; /* half-width of the 95 % confidence interval of the median */
    size_t n;
} median_ci;

/* Sorts x in place and returns its median with the half-width of its 95 % CI from
 * order statistics (exact binomial ranks, order.h's loggp_median_interval_rank), which
 * needs no assumption about the noise's shape. Too few samples for an interval (below
 * 6): the half-width is infinite, so ci_meets_target is false and sampling goes on; no
 * samples: the median is NaN too. */
median_ci median_with_ci(double *x, size_t n);

/* True when the CI half-width is at most max(rel * |median|, abs_tol). */
int ci_meets_target(median_ci m, double rel, double abs_tol);

/* Ordinary least-squares slope and intercept of y against x; returns 0 on success,
 * -1 if fewer than two distinct x values. */
int least_squares(const double *x, const double *y, size_t n, double *slope, double *intercept);

#endif
