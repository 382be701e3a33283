/* Jitter's pure parts (jitter.h): parsing, xoshiro256** seeded by splitmix64,
 * zero-mean draws. Written from the published algorithms' descriptions. */
#include "jitter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

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

int jitter_parse(const char *text, jitter_spec *out, char *err, size_t errlen)
{
    jitter_spec spec = {JITTER_NONE, 0, 0};
    if (!text || !*text || strcmp(text, "none") == 0 || strcmp(text, "0") == 0) {
        *out = spec;
        return 0;
    }
    char copy[128];
    if (strlen(text) >= sizeof copy) {
        snprintf(err, errlen, "'%.40s...': too long for a jitter setting (%s)", text, KIND_LIST);
        return -1;
    }
    strcpy(copy, text);
    char *spread = strchr(copy, ':');
    if (!spread) {
        snprintf(err, errlen, "'%s': expected a distribution and its spread, e.g. normal:2us (%s)", text, KIND_LIST);
        return -1;
    }
    *spread++ = '\0';
    size_t k = 0;
    while (k < KIND_COUNT && strcmp(copy, kinds[k].name) != 0)
        k++;
    if (k == KIND_COUNT) {
        snprintf(err, errlen, "'%s': unknown distribution '%s' (use %s)", text, copy, KIND_LIST);
        return -1;
    }
    spec.kind = kinds[k].kind;
    spec.shape = kinds[k].default_shape;
    char *shape = strchr(spread, ':');
    if (shape) {
        *shape++ = '\0';
        if (!kinds[k].default_shape) {
            snprintf(err, errlen, "'%s': %s takes only a spread (e.g. %s:2us)", text, copy, copy);
            return -1;
        }
        char *end;
        double v = strtod(shape, &end);
        int bad = end == shape || *end || !isfinite(v) || v <= 0 || v > 20;
        if (spec.kind == JITTER_PARETO && !bad && v <= 2)
            bad = 1;
        if (bad) {
            snprintf(err, errlen, "'%s': bad %s '%s' (%s)", text, spec.kind == JITTER_PARETO ? "alpha" : "sigma",
                     shape,
                     spec.kind == JITTER_PARETO ? "a number over 2, so the variance is finite" : "a number in (0, 20]");
            return -1;
        }
        spec.shape = v;
    }
    int64_t ps;
    char why[256];
    if (loggp_parse_knob(LOGGP_KNOB_LATENCY, spread, &ps, why, sizeof why) != 0) {
        snprintf(err, errlen, "'%s': bad spread: %s", text, why);
        return -1;
    }
    spec.spread_ns = (double)ps / 1000.0;
    if (ps == 0)
        spec.kind = JITTER_NONE;
    *out = spec;
    return 0;
}

void jitter_format(const jitter_spec *spec, char *buf, size_t len)
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

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void jitter_seed(jitter_rng *r, uint64_t seed, uint64_t stream)
{
    /* mix the stream in through splitmix first, so nearby (seed, stream)
     * pairs give unrelated states */
    uint64_t x = seed;
    uint64_t mixed = splitmix64(&x) ^ (stream * UINT64_C(0xd1342543de82ef95));
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&mixed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t jitter_next(jitter_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double jitter_uniform(jitter_rng *r)
{
    /* 53 random bits, shifted half a step off 0 so logs stay finite */
    return ((double)(jitter_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

static double standard_normal(jitter_rng *r)
{
    double u = jitter_uniform(r), v = jitter_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

double jitter_offset(const jitter_spec *spec, jitter_rng *r)
{
    double s = spec->spread_ns;
    switch (spec->kind) {
    case JITTER_NORMAL:
        return s * standard_normal(r);
    case JITTER_EXP: /* exponential of mean s, minus s */
        return -s * log(jitter_uniform(r)) - s;
    case JITTER_LOGNORMAL: {
        /* mean m and std s: m = s / sqrt(e^(sigma^2) - 1) */
        double sigma = spec->shape;
        double m = s / sqrt(expm1(sigma * sigma));
        return m * exp(sigma * standard_normal(r) - sigma * sigma / 2) - m;
    }
    case JITTER_PARETO: {
        /* Pareto I (scale xm, alpha) with std s, minus its mean */
        double a = spec->shape;
        double xm = s * (a - 1) * sqrt((a - 2) / a);
        return xm * pow(jitter_uniform(r), -1.0 / a) - a * xm / (a - 1);
    }
    default:
        return 0;
    }
}

uint64_t jitter_apply(uint64_t base_ns, double offset)
{
    double v = (double)base_ns + offset;
    if (!(v > 0))
        return 0;
    if (v > 1e13)
        return (uint64_t)1e13;
    return (uint64_t)llround(v);
}
