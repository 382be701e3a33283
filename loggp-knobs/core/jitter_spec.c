/* Jitter settings (jitter_spec.h): parsing and formatting. */
#include "jitter_spec.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "knobs_internal.h"

static const struct {
    const char *name;
    jitter_kind kind;
    double default_shape;
} kinds[] = {
    {"normal", JITTER_NORMAL, 0}, {"exp", JITTER_EXP, 0}, {"lognormal", JITTER_LOGNORMAL, 1.0},
    {"pareto", JITTER_PARETO, 3.0},
};

#define KIND_COUNT (sizeof kinds / sizeof kinds[0])
#define KIND_LIST "none, normal:S, exp:S, lognormal:S[:SIGMA] or pareto:S[:ALPHA]"

int loggp_jitter_parse(const char *text, jitter_spec *out, char *err, size_t errlen)
{
    jitter_spec spec = {JITTER_NONE, 0, 0};
    if (!text || !*text || strcmp(text, "none") == 0 || strcmp(text, "0") == 0) {
        *out = spec;
        return 0;
    }
    char copy[128];
    if (strlen(text) >= sizeof copy) {
        loggp_set_err(err, errlen, "'%.40s...': too long for a jitter setting (%s)", text, KIND_LIST);
        return -1;
    }
    strcpy(copy, text);
    char *spread = strchr(copy, ':');
    if (!spread) {
        loggp_set_err(err, errlen, "'%s': expected a distribution and its spread, e.g. normal:2us (%s)", text,
                      KIND_LIST);
        return -1;
    }
    *spread++ = '\0';
    size_t k = 0;
    while (k < KIND_COUNT && strcmp(copy, kinds[k].name) != 0)
        k++;
    if (k == KIND_COUNT) {
        loggp_set_err(err, errlen, "'%s': unknown distribution '%s' (use %s)", text, copy, KIND_LIST);
        return -1;
    }
    spec.kind = kinds[k].kind;
    spec.shape = kinds[k].default_shape;
    char *shape = strchr(spread, ':');
    if (shape) {
        *shape++ = '\0';
        if (!kinds[k].default_shape) {
            loggp_set_err(err, errlen, "'%s': %s takes only a spread (e.g. %s:2us)", text, copy, copy);
            return -1;
        }
        char *end;
        double v = strtod(shape, &end);
        int bad = end == shape || *end || !isfinite(v) || v <= 0;
        /* sigma's ceiling keeps exp(sigma^2) finite; alpha needs only a finite variance */
        if (!bad)
            bad = spec.kind == JITTER_PARETO ? v <= 2 : v > 20;
        if (bad) {
            loggp_set_err(err, errlen, "'%s': bad %s '%s' (%s)", text, spec.kind == JITTER_PARETO ? "alpha" : "sigma",
                          shape, spec.kind == JITTER_PARETO ? "a number over 2, so the variance is finite"
                                                            : "a number in (0, 20]");
            return -1;
        }
        spec.shape = v;
    }
    int64_t ps;
    char why[256];
    if (loggp_parse_knob(LOGGP_KNOB_LATENCY, spread, &ps, why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "'%s': bad spread: %s", text, why);
        return -1;
    }
    spec.spread_ns = (double)ps / 1000.0;
    if (ps == 0)
        spec.kind = JITTER_NONE;
    *out = spec;
    return 0;
}

void loggp_jitter_format(const jitter_spec *spec, char *buf, size_t len)
{
    const char *name = "none";
    for (size_t k = 0; k < KIND_COUNT; k++)
        if (kinds[k].kind == spec->kind)
            name = kinds[k].name;
    if (spec->kind == JITTER_NONE) {
        snprintf(buf, len, "none");
        return;
    }
    char spread[64];
    loggp_format_knob(LOGGP_KNOB_LATENCY, (int64_t)llround(spec->spread_ns * 1000.0), spread, sizeof spread);
    if (spec->kind == JITTER_LOGNORMAL || spec->kind == JITTER_PARETO)
        snprintf(buf, len, "%s:%s:%g", name, spread, spec->shape);
    else
        snprintf(buf, len, "%s:%s", name, spread);
}
