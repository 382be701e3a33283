#include "jitter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

int loggp_jitter_parse(const char *text, loggp_jitter *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text || strcmp(text, "none") == 0)
        return 0;
    const char *colon = strchr(text, ':');
    size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
    static const struct {
        const char *name;
        loggp_jitter_kind kind;
        int timed; /* the parameter is a time, else a plain number */
    } kinds[] = {{"normal", LOGGP_JITTER_NORMAL, 1}, {"exp", LOGGP_JITTER_EXP, 1},
                 {"lognormal", LOGGP_JITTER_LOGNORMAL, 0}, {"pareto", LOGGP_JITTER_PARETO, 0}};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (strlen(kinds[i].name) != name_len || strncmp(text, kinds[i].name, name_len) != 0)
            continue;
        if (!colon || !colon[1]) {
            snprintf(err, errlen, "'%s': expected %s:%s", text, kinds[i].name, kinds[i].timed ? "TIME" : "NUMBER");
            return -1;
        }
        out->kind = kinds[i].kind;
        if (kinds[i].timed) {
            int64_t ps;
            char why[256];
            if (loggp_parse_knob(LOGGP_KNOB_LATENCY, colon + 1, &ps, why, sizeof why) != 0) {
                snprintf(err, errlen, "'%s': %s", text, why);
                return -1;
            }
            out->spread_ns = (double)ps / 1000.0;
            return 0;
        }
        char *end;
        double v = strtod(colon + 1, &end);
        int ok = *end == '\0' && isfinite(v) &&
                 (out->kind == LOGGP_JITTER_PARETO ? v > 1.0 && v <= 100.0 : v > 0.0 && v <= 10.0);
        if (!ok) {
            snprintf(err, errlen, "'%s': expected %s", text,
                     out->kind == LOGGP_JITTER_PARETO ? "a tail index over 1 (e.g. pareto:2.5), at most 100"
                                                      : "a log-space sigma over 0 (e.g. lognormal:0.5), at most 10");
            return -1;
        }
        out->shape = v;
        return 0;
    }
    snprintf(err, errlen, "'%s': unknown distribution (expected none, normal:TIME, exp:TIME, lognormal:SIGMA, "
                          "pareto:ALPHA)", text);
    return -1;
}

uint64_t loggp_random_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double loggp_random_unit(uint64_t *state)
{
    return ((double)(loggp_random_next(state) >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t loggp_random_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * UINT64_C(0xd1b54a32d192ed03));
    return loggp_random_next(&s);
}

static double standard_normal(uint64_t *state)
{
    /* Box-Muller; one of the pair is enough here */
    double u1 = loggp_random_unit(state), u2 = loggp_random_unit(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t loggp_jitter_draw(const loggp_jitter *j, uint64_t L_ns, uint64_t *state)
{
    double L = (double)L_ns, v;
    switch (j->kind) {
    case LOGGP_JITTER_NORMAL:
        v = L + j->spread_ns * standard_normal(state);
        break;
    case LOGGP_JITTER_EXP: /* L - S + Exp(mean S): mean L, standard deviation S */
        v = L - j->spread_ns - j->spread_ns * log(loggp_random_unit(state));
        break;
    case LOGGP_JITTER_LOGNORMAL: /* L exp(sigma Z - sigma^2 / 2): mean L */
        v = L * exp(j->shape * standard_normal(state) - 0.5 * j->shape * j->shape);
        break;
    case LOGGP_JITTER_PARETO: { /* scale L (alpha - 1) / alpha: mean L */
        double scale = L * (j->shape - 1.0) / j->shape;
        v = scale * pow(loggp_random_unit(state), -1.0 / j->shape);
        break;
    }
    default:
        return L_ns;
    }
    if (!(v > 0.0))
        return 0;
    return v >= 1e13 ? UINT64_C(10000000000000) : (uint64_t)(v + 0.5); /* capped at the knobs' 10 s */
}
