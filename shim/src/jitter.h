/* Latency and overhead jitter: per-message draws around the set L (and o)
 * from a named distribution, seeded per rank so a run can be repeated.
 * Pure parts (the PRNG, the draws, the distributions' moments, and the
 * setting's parser in loggp-knobs/core/jitter_spec.c) are unit-tested in
 * shim/tests/test_jitter.c; docs/jitter.md says what each distribution's
 * parameters mean. */
#ifndef LOGGP_JITTER_H
#define LOGGP_JITTER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jitter_spec.h"

/* xoshiro256** state (Blackman and Vigna), seeded through splitmix64. */
typedef struct {
    uint64_t s[4];
} jitter_rng;

#pragma GCC visibility push(hidden)

/* Seeds the stream of (seed, stream): one stream per rank and thread. */
void jitter_seed(jitter_rng *r, uint64_t seed, uint64_t stream);
uint64_t jitter_next(jitter_rng *r);
/* Uniform in (0, 1). */
double jitter_uniform(jitter_rng *r);

/* A zero-mean offset drawn from spec (0 for JITTER_NONE). */
double jitter_offset(const jitter_spec *spec, jitter_rng *r);

/* base_ns + offset, truncated at 0 and rounded to whole ns. */
uint64_t jitter_apply(uint64_t base_ns, double offset);

/* ---- the process's jitter (set once at MPI_Init) ---- */

/* Reads LOGGP_L_JITTER, LOGGP_O_JITTER and LOGGP_SEED; the rank (from the
 * launcher's environment) picks the stream. -1 with a message on bad input. */
int loggp_jitter_start(char *err, size_t errlen);

extern int loggp_jitter_L_on, loggp_jitter_o_on;
/* Nonzero while only the armed steps are in force (outside the kernel region
 * with LOGGP_OUTSIDE=armed, live.c): no draw then, so the steps add ~nothing. */
extern _Atomic int loggp_jitter_held;

/* One draw around L (or o), from this thread's stream. */
uint64_t loggp_jitter_draw_L(uint64_t L_ns);
uint64_t loggp_jitter_draw_o(uint64_t o_ns);

/* "; L jitter normal:2us; seed 1" for the banner (empty without jitter). */
void loggp_jitter_describe(char *buf, size_t len);

#pragma GCC visibility pop

static inline int loggp_jitter_is_held(void)
{
    return atomic_load_explicit(&loggp_jitter_held, memory_order_relaxed);
}

/* o is drawn: o jitter is on and not held. */
static inline int loggp_jitter_o_drawn(void)
{
    return __builtin_expect(loggp_jitter_o_on, 0) && !loggp_jitter_is_held();
}

/* L for one message: the set L, or a draw around it while L jitter is on
 * (one predictable branch when it is off). */
static inline uint64_t loggp_jittered_L(uint64_t L_ns)
{
    return __builtin_expect(loggp_jitter_L_on, 0) && L_ns && !loggp_jitter_is_held() ? loggp_jitter_draw_L(L_ns)
                                                                                       : L_ns;
}

static inline uint64_t loggp_jittered_o(uint64_t o_ns)
{
    return loggp_jitter_o_drawn() && o_ns ? loggp_jitter_draw_o(o_ns) : o_ns;
}

#endif
