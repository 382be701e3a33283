/* The run's environment beyond the knobs: every other LOGGP_* variable
 * libloggp.so reads at MPI_Init, each with its one parser, and one check of
 * them all that MPI_Init and `loggp-knobs show` (so `loggp run`) share, so a
 * bad value is refused the same way wherever it is met. */
#ifndef LOGGP_RUNENV_H
#define LOGGP_RUNENV_H

#include <stddef.h>
#include <stdint.h>

#include "jitter_spec.h"
#include "knobs.h"

enum { LOGGP_ENGINE_AUTO, LOGGP_ENGINE_LIBFABRIC, LOGGP_ENGINE_PMPI };

/* A 0/1 switch (LOGGP_LIVE, LOGGP_ROUTE, LOGGP_QUIET): 1 and *on if set, 0
 * if unset or empty, -1 with "NAME=VALUE: expected 0 or 1" for anything else. */
int loggp_env_switch(const char *name, int *on, char *err, size_t errlen);

/* LOGGP_ENGINE: auto (also unset or empty), libfabric or pmpi. */
int loggp_env_engine(int *engine, char *err, size_t errlen);

/* A seed: a whole number in [0, 2^64 - 1], digits only. -1 with a message
 * naming the value (a larger one is refused, not clamped). */
int loggp_parse_seed(const char *text, uint64_t *seed, char *err, size_t errlen);

/* LOGGP_SEED (0 if unset or empty). */
int loggp_env_seed(uint64_t *seed, char *err, size_t errlen);

/* LOGGP_L_JITTER or LOGGP_O_JITTER (none if unset). */
int loggp_env_jitter(const char *name, jitter_spec *spec, char *err, size_t errlen);

/* LOGGP_OUTSIDE: what knobs scoped to the kernel region (LOGGP_SCOPE=kernel)
 * leave outside it: zero (also unset or empty: the program runs there as
 * without the library's delays), or armed (each knob that is set applies its
 * smallest step, so its delay path runs there while adding ~nothing; a
 * reading taken against that region cancels the armed layer's own cost). */
enum { LOGGP_OUTSIDE_ZERO, LOGGP_OUTSIDE_ARMED };
extern const char *const loggp_outside_names[2];
int loggp_env_outside(int *outside, char *err, size_t errlen);

/* A knob's smallest step: 1 ns for the times (the message path's unit), 1 ps
 * per byte for G (the knobs' unit). */
#define LOGGP_ARMED_STEP_PS INT64_C(1000)
#define LOGGP_ARMED_STEP_PS_PER_BYTE INT64_C(1)

/* The armed form of set: each nonzero knob at its smallest step, each zero
 * knob zero (a knob not set stays off: arming it would take a path the run
 * never takes). Scope is copied. */
void loggp_knobs_armed(const loggp_knobs *set, loggp_knobs *armed);

/* Makes dir and its missing parents (mode 0755); -1 with errno set. */
int loggp_make_folder(const char *dir);

/* Could a rank make and write into the output folder a variable names
 * (LOGGP_PROFILE, LOGGP_TRACE)? Checked without leaving anything behind:
 * the folder, or its nearest existing parent, must be a folder a file can be
 * made in. Unset or empty passes. -1 with "NAME=VALUE: why". */
int loggp_env_output_folder(const char *name, char *err, size_t errlen);

/* What the check read (for `loggp-knobs show`). */
typedef struct {
    int engine;
    jitter_spec L_jitter, o_jitter;
    uint64_t seed;
    int outside;       /* LOGGP_OUTSIDE_* */
    int topology;      /* a topology is configured */
    int topology_L;    /* and gives some class beyond 0 a nonzero L of its own */
} loggp_run_env;

/* Checks LOGGP_ENGINE, LOGGP_LIVE, LOGGP_ROUTE, LOGGP_QUIET, LOGGP_L_JITTER,
 * LOGGP_O_JITTER, LOGGP_SEED, LOGGP_OUTSIDE, the topology's variables (loggp_topology_from_env)
 * and, with folders, LOGGP_PROFILE and LOGGP_TRACE (MPI_Init checks those
 * once it knows the rank). The knobs' own variables and the knob file are
 * loggp_knobs_apply_env's, loggp_scope_from_env's and loggp_knobs_load's.
 * -1 with a message naming the first bad variable and its value. */
int loggp_run_env_check(loggp_run_env *out, int folders, char *err, size_t errlen);

#endif
