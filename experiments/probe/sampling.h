/* Decisions of the sampling loop and the idle times around timed operations: how big
 * the next batch is, when a value is precise enough, how long to wait. Pure arithmetic. */
#ifndef LOGGP_PROBE_SAMPLING_H
#define LOGGP_PROBE_SAMPLING_H

#include "knobs.h"
#include "stats.h"

#include <stddef.h>

/* Pace beyond the gap: emulators (libloggp among them) count up to 2 us of a rank's own
 * time between messages toward the gap, so an idle period must exceed gap + 2 us. */
#define PACE_SLACK_US 3.0

typedef struct {
    double rel, abs_us;  /* CI half-width target: max(rel x median, abs_us) */
    size_t min_samples, max_samples;
    double budget_s;     /* the phase's time; min_samples always wins */
} sampling_target;

/* The first batch of a phase. */
#define FIRST_BATCH 4

/* The batch after one of `previous` samples: doubling up to 64, never past the cap. */
int next_batch_size(int previous, size_t taken, size_t cap);

/* True when sampling stops: the CI meets the target with enough samples, the cap is
 * reached, or the budget is spent with enough samples. */
int sampling_done(median_ci r, size_t taken, double elapsed_s, const sampling_target *t);

/* g(m) from the medians of burst times of n = burst messages and of 1 message:
 * (t(n) - t(1)) / (n - 1); the CIs combine as independent errors. */
median_ci gap_from_bursts(median_ci t_burst, median_ci t_single, int burst, size_t samples);

/* A phase whose CI stays wider than 10 % (and 10 x abs_us) was most likely stalled as a
 * whole (both ranks on one core of a busy machine), so it is measured again. */
int phase_needs_retry(median_ci best, double abs_us);

/* Spacing of timed sends for a measured gap, so the gap never stalls them. */
double pace_for_gap(double gap_us);

/* Wait before a timed receive, long enough for a token to reach the peer and the
 * message to come back: 1.5 (T(0) + T(m)) + pace + 2 us, plus the equalizing idle. */
double receive_wait_us(double t_zero_us, double t_m_us, double pace_us, double equalizer_us);

/* LogGP's idle time before a timed receive under a knob set, for m bytes, beyond the
 * machine's own: 1.5 times the knobs' added T(0) + T(m) (each T one way, so 2 (o_s +
 * o_r + L) + (m-1)G) and 1.25 of their added gap (the pace), as receive_wait_us has it. */
double knob_idle_us(const loggp_knobs *set, long m);

/* Extra idle for set `current` so that every set idles as long as the longest one
 * (0 without knob sets, current < 0). */
double idle_equalizer_us(const loggp_knobs *sets, int n_sets, int current, long m);

#endif
