/* The LogGP signature as numbers: per-size results, where the curves bend, and the
 * summary (G, L) drawn from them. Pure arithmetic, no MPI, so it has unit tests. */
#ifndef LOGGP_PROBE_SIGNATURE_H
#define LOGGP_PROBE_SIGNATURE_H

#include "stats.h"

#include <stddef.h>

#define MAX_SIZES 256

typedef struct {
    median_ci T, o_s, o_r, g;
    double L_us; /* T - o_s - o_r of the medians, before the (m-1)G correction */
    int refined;
    long bytes;
} size_result;

typedef struct {
    double L_us, G_ns_per_byte, G_raw, G_lo, G_hi;
    int G_clamped;
} summary;

/* The quantity at byte offset `field` (offsetof(size_result, T), ...) of a result. */
const median_ci *size_quantity(const size_result *r, size_t field);

/* qsort comparator: ascending message size. */
int size_result_by_bytes(const void *a, const void *b);

/* Relative departure of (xc, yc) from the straight line through (xa, ya) and (xb, yb),
 * extrapolated; 0 when the absolute departure is at most floor_us. */
double bend_departure(double xa, double ya, double xb, double yb, double xc, double yc, double floor_us);

/* Where the curve bends: T or g departs from the straight line through the two sizes
 * below by more than 10 % (and 0.3 us, to stay above on-node noise). Writes the index of
 * the upper size of each bend into `at`, strongest first; returns how many. */
int find_bends(const size_result *r, int n, int *at, int max_bends);

/* The size halfway between lo and hi (a multiple of 8 above 64 B, as applications send),
 * or -1 when no size lies strictly between them. */
long bisection_midpoint(long lo, long hi);

/* True when the bend lies in the lower half (lo, mid): T changes more there. */
int bend_in_lower_half(double T_lo, double T_mid, double T_hi);

/* G from the slope of g(m) over the sizes >= max_size/16 (at least the two largest),
 * clamped at 0; L from the sizes <= 64 B (at least the smallest). `res` is ascending. */
summary summarize_signature(const size_result *res, int n, long max_size);

/* One quantity over rounds: the median of the round medians, the widest round's CI. */
median_ci combine_rounds(const size_result *const *rounds, int n_rounds, int size, size_t field);

#endif
