/* Jitter's pure parts (jitter.h): xoshiro256** seeded by splitmix64 and
 * zero-mean draws (the setting's parser is loggp-knobs/core/jitter_spec.c).
 * Written from the published algorithms' descriptions. */
#include "jitter.h"

#include <math.h>

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
