/* Latency jitter (issue 15): each message's L drawn from a distribution
 * whose mean is the set L, instead of L itself. Pure functions: the spec's
 * parser, a seeded generator, and the draw. */
#ifndef LOGGP_JITTER_H
#define LOGGP_JITTER_H

#include <stddef.h>
#include <stdint.h>

typedef enum { LOGGP_JITTER_NONE, LOGGP_JITTER_NORMAL, LOGGP_JITTER_EXP, LOGGP_JITTER_LOGNORMAL,
               LOGGP_JITTER_PARETO } loggp_jitter_kind;

typedef struct {
    loggp_jitter_kind kind;
    double spread_ns; /* normal: standard deviation; exp: the exponential part's mean */
    double shape;     /* lognormal: sigma of log(L); pareto: tail index alpha (> 1) */
} loggp_jitter;

/* "none", "normal:2us", "exp:2us", "lognormal:0.5", "pareto:2.5" (times with a
 * unit, as every knob value). -1 and a message naming the bad part. */
int loggp_jitter_parse(const char *text, loggp_jitter *out, char *err, size_t errlen);

/* The generator: splitmix64 (Steele, Lea, Flood 2014), one state per stream. */
uint64_t loggp_random_next(uint64_t *state);
/* A uniform draw in (0, 1). */
double loggp_random_unit(uint64_t *state);
/* A stream's first state from a seed and the stream's name (rank, queue). */
uint64_t loggp_random_seed(uint64_t seed, uint64_t stream);

/* One message's L, in ns, for a set L: distributed as j says with mean L
 * (before truncation at 0). */
uint64_t loggp_jitter_draw(const loggp_jitter *j, uint64_t L_ns, uint64_t *state);

#endif
