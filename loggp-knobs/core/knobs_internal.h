/* Helpers shared by the knob library's own files. */
#ifndef LOGGP_KNOBS_INTERNAL_H
#define LOGGP_KNOBS_INTERNAL_H

#include <stddef.h>

/* snprintf into an optional error buffer. */
void loggp_set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* s without leading and trailing blanks (and a trailing CR), in place. */
char *loggp_trim(char *s);

/* in, safe to print to a terminal: control bytes, C1 controls and bytes
 * outside well-formed UTF-8 become \xNN; truncated to fit out[len]. */
void loggp_escape_text(const char *in, char *out, size_t len);

#endif
