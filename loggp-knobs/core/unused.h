/* Settings that would be accepted and then do nothing: a LOGGP_* variable no
 * part of loggp reads (a misspelling), and per-pair L or G that no pair of the
 * run gets. `loggp-knobs show` says them (so `loggp run`, which asks it). */
#ifndef LOGGP_UNUSED_H
#define LOGGP_UNUSED_H

#include <stddef.h>

#include "topology.h"

/* Every LOGGP_* variable some part of loggp reads besides the knobs' own
 * (loggp_knob_table's env), NULL-terminated: the one list the check below
 * compares against. */
extern const char *const loggp_other_variables[];

/* Is name a variable loggp reads? */
int loggp_known_variable(const char *name);

/* The known variable closest to name (edit distance, past "LOGGP_", at most
 * a third of its length and at least 1), or NULL. */
const char *loggp_closest_variable(const char *name);

/* One line per LOGGP_* variable in env that loggp does not read:
 * "LOGGP_LATENCEY=20us: loggp reads no such variable, so it does nothing (did
 * you mean LOGGP_LATENCY?)". Calls say(line, arg) for each; returns the count. */
int loggp_unknown_variables(char *const *env, void (*say)(const char *line, void *arg), void *arg);

/* Why class c (1..3) of t reaches no pair: why filled and returned, or NULL
 * if some pair may be in it. nranks: the run's rank count (0: not known);
 * one_host: 1 when every rank runs on one host (the nodes are the hosts
 * unless ranks per node are given), 0 when not, -1 when not known (then
 * the reason may be a condition, and *certain is 0). short_form: t came from
 * LOGGP_RANKS_PER_NODE, LOGGP_L_INTER and LOGGP_G_INTER, and the reason
 * names those rather than a file's keys. */
const char *loggp_topology_unreached(const loggp_topology *t, int c, int nranks, int one_host, int short_form,
                                     char *why, size_t len, int *certain);

#endif
