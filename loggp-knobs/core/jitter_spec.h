/* A jitter setting (LOGGP_L_JITTER, LOGGP_O_JITTER, `--L-jitter`): a named
 * zero-mean distribution and its spread. Parsed here so that libloggp.so,
 * which draws from it (shim/src/jitter.h), and loggp-knobs, which checks it
 * before a run, share one parser; docs/jitter.md says what each parameter
 * means. */
#ifndef LOGGP_JITTER_SPEC_H
#define LOGGP_JITTER_SPEC_H

#include <stddef.h>

typedef enum { JITTER_NONE, JITTER_NORMAL, JITTER_EXP, JITTER_LOGNORMAL, JITTER_PARETO } jitter_kind;

/* Every kind is a zero-mean offset with standard deviation spread_ns; shape
 * is lognormal's sigma of log (default 1) or Pareto's alpha (> 2, default 3). */
typedef struct {
    jitter_kind kind;
    double spread_ns;
    double shape;
} jitter_spec;

/* Parses "none", "normal:2us", "exp:2us", "lognormal:2us[:SIGMA]",
 * "pareto:2us[:ALPHA]" (NULL or "" is none). -1 with a message naming the
 * bad part. */
int loggp_jitter_parse(const char *text, jitter_spec *out, char *err, size_t errlen);

/* Writes a spec back in the form loggp_jitter_parse reads. */
void loggp_jitter_format(const jitter_spec *spec, char *buf, size_t len);

#endif
