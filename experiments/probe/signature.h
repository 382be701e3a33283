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
    double G_ns_per_byte, G_raw, G_lo, G_hi;
    int G_clamped;
    /* L from the small-message regime, never negative: L_raw is the median estimate,
     * L_us = max(L_raw, 0); L_lo..L_hi the sizes it came from. */
    double L_us, L_raw, L_ci_half;
    long L_lo, L_hi;
    int L_clamped;
    /* Index of the first size past the protocol switch (n: none seen). From there on the
     * receive (and a blocking send) moves the data: see find_protocol_switch. */
    int switch_index;
} summary;

/* Columns that are no overheads or latencies past the protocol switch. */
enum { COLUMN_O_S = 1, COLUMN_O_R = 2, COLUMN_L = 4 };

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

/* The first size past the protocol switch (eager to rendezvous), or n if none is seen.
 * There the receive takes part in a handshake and moves the data itself, so T(m) and
 * o_r(m) jump together: size i qualifies when T(i) exceeds the line through the two sizes
 * below (flat if it falls, or with one size below) by more than max(0.3 us, T(i-1)/2),
 * o_r(i) exceeds its own line by at least 0.3 of that, and the next size keeps at least
 * half of o_r's rise (a single disturbed size does not). A size above 64 B qualifies too
 * when, there and at the next size, o_s + o_r exceed T beyond noise (a blocking send that
 * waits for the receiver), which catches a switch that noise on T hides. Ascending `res`. */
int find_protocol_switch(const size_result *res, int n);

/* The columns not meaningful past the switch: o_r and L always; o_s too when the send
 * call waits for the receiver (blocking or synchronous sends). */
unsigned columns_past_switch(int send_waits);

/* True when T - o_s - o_r is below 0 by more than twice its CI (and 0.25 us or T/10):
 * o_s and o_r together exceed the one-way time, which overheads cannot; a call that
 * waits for the peer can. */
int overheads_exceed_one_way(const size_result *r);

/* A size's latency as reported: T - o_s - o_r clamped at 0 (a latency cannot be
 * negative within noise); NAN past the switch, or where the overheads exceed the
 * one-way time beyond noise, for that is no latency. */
double size_latency_us(const size_result *r, int index, const summary *s);

/* The protocol switch; G from the slope of g(m) over the sizes >= max_size/16 (at least
 * the two largest) on the largest sizes' side of the switch (the other side if only one
 * size is past it), clamped at 0; L as the median of T - o_s - o_r - (m-1)G over the
 * sizes <= 64 B before the switch (at least the smallest), clamped at 0: o_s and o_r are
 * timed apart from T (o_r after an idle wait, on the unexpected-message path with
 * blocking receives), so on a network whose L is below their noise the difference can
 * dip below 0. `res` is ascending. */
summary summarize_signature(const size_result *res, int n, long max_size);

/* One quantity over rounds: the median of the round medians, the widest round's CI. */
median_ci combine_rounds(const size_result *const *rounds, int n_rounds, int size, size_t field);

#endif
