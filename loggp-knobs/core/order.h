/* Order statistics every measuring program takes: its samples sorted, their
 * median. One comparator for the whole project (pure). */
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

#endif
