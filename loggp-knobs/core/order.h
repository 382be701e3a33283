/* Order statistics every measuring program takes: its samples sorted, their
 * median and the median's 95 % interval. One comparator and one interval for
 * the whole project (pure). */
#ifndef LOGGP_ORDER_H
#define LOGGP_ORDER_H

#include <stddef.h>

/* Sorts v[0..n) ascending. */
void loggp_sort_doubles(double *v, size_t n);

/* The median of v[0..n) (the mean of the middle two when n is even), which it
 * sorts in place; 0 when n is 0. */
double loggp_median(double *v, size_t n);

/* The value below which about a fraction q (0..1) of the sorted v[0..n)
 * lie: the sample at rank q(n-1), rounded down; 0 when n is 0. */
double loggp_quantile_sorted(const double *v, size_t n, double q);

/* 1-based rank j of the order statistic that bounds the median's 95 % interval
 * from below, the upper bound being rank n - j + 1: the largest j with
 * P(Binomial(n, 1/2) < j) within the tail outside +-1.96 normal deviates
 * (exact binomial ranks, the same as loggp.experiments.precision's, which a
 * test holds them to for every n). 0 when even the smallest and the largest of
 * n values cover the median less often than that (n < 6): no interval. */
size_t loggp_median_interval_rank(size_t n);

/* The median's 95 % interval over the sorted v[0..n): 1 with *low and *high
 * set to its bounds, or 0 with both untouched when n is too few for one. */
int loggp_median_interval_sorted(const double *v, size_t n, double *low, double *high);

#endif
