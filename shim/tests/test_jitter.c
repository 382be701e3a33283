/* Jitter's pure parts (src/jitter.c; the parser is in loggp-knobs/core/
 * jitter_spec.c): the PRNG against the published xoshiro256** reference, the
 * parser's errors, and each distribution's mean, standard deviation and
 * truncation over many draws. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "jitter.h"

Test(jitter, xoshiro256starstar_matches_the_reference_sequence)
{
    jitter_rng r = {{1, 2, 3, 4}};
    cr_assert_eq(jitter_next(&r), UINT64_C(11520));
    cr_assert_eq(jitter_next(&r), UINT64_C(0));
    cr_assert_eq(jitter_next(&r), UINT64_C(1509978240));
    cr_assert_eq(jitter_next(&r), UINT64_C(1215971899390074240));
}

Test(jitter, a_seed_and_stream_repeat_and_streams_differ)
{
    jitter_rng a, b, c;
    jitter_seed(&a, 7, 3);
    jitter_seed(&b, 7, 3);
    jitter_seed(&c, 7, 4);
    for (int i = 0; i < 100; i++) {
        uint64_t x = jitter_next(&a);
        cr_assert_eq(x, jitter_next(&b));
        cr_assert_neq(x, jitter_next(&c));
    }
}

Test(jitter, parses_each_distribution_and_formats_it_back)
{
    const char *texts[] = {"normal:2us", "exp:500ns", "lognormal:2us:0.5", "pareto:1us:3"};
    for (size_t i = 0; i < 4; i++) {
        jitter_spec s;
        char err[256], back[64];
        cr_assert_eq(loggp_jitter_parse(texts[i], &s, err, sizeof err), 0, "%s: %s", texts[i], err);
        loggp_jitter_format(&s, back, sizeof back);
        cr_assert_str_eq(back, texts[i]);
    }
    jitter_spec s;
    char err[256];
    cr_assert_eq(loggp_jitter_parse("lognormal:2us", &s, err, sizeof err), 0);
    cr_assert_float_eq(s.shape, 1.0, 1e-12);
    cr_assert_float_eq(s.spread_ns, 2000.0, 1e-9);
    cr_assert_eq(loggp_jitter_parse("none", &s, err, sizeof err), 0);
    cr_assert_eq(s.kind, JITTER_NONE);
    cr_assert_eq(loggp_jitter_parse("normal:0", &s, err, sizeof err), 0);
    cr_assert_eq(s.kind, JITTER_NONE);
}

static void refused(const char *text, const char *named)
{
    jitter_spec s;
    char err[512] = "";
    cr_assert_eq(loggp_jitter_parse(text, &s, err, sizeof err), -1, "%s accepted", text);
    cr_assert(strstr(err, named), "error for %s does not name %s: %s", text, named, err);
}

Test(jitter, bad_settings_are_refused_naming_the_bad_part)
{
    refused("gauss:2us", "'gauss'");
    refused("normal", "normal:2us");
    refused("normal:2", "'2'");
    refused("normal:-2us", "negative");
    refused("normal:2us:3", "only a spread");
    refused("pareto:2us:2", "alpha");
    refused("pareto:2us:x", "'x'");
    refused("lognormal:2us:0", "sigma");
}

/* Mean and standard deviation of n offsets drawn from text. */
static void moments(const char *text, int n, double *mean, double *sd, double *min)
{
    jitter_spec s;
    char err[256];
    cr_assert_eq(loggp_jitter_parse(text, &s, err, sizeof err), 0, "%s", err);
    jitter_rng r;
    jitter_seed(&r, 42, 0);
    double sum = 0, sum2 = 0, lo = INFINITY;
    for (int i = 0; i < n; i++) {
        double x = jitter_offset(&s, &r);
        sum += x;
        sum2 += x * x;
        if (x < lo)
            lo = x;
    }
    *mean = sum / n;
    *sd = sqrt(sum2 / n - *mean * *mean);
    *min = lo;
}

Test(jitter, each_distribution_has_mean_zero_and_the_set_spread)
{
    /* pareto's variance converges slowly (heavy tail): a wider bound */
    const struct {
        const char *text;
        double sd_tol, min_at_least;
    } cases[] = {
        {"normal:1us", 0.01, -1e9}, {"exp:1us", 0.02, -1000.0}, {"lognormal:1us:0.5", 0.03, -1e9},
        {"pareto:1us:4", 0.1, -1e9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double mean, sd, min;
        moments(cases[i].text, 400000, &mean, &sd, &min);
        cr_assert(fabs(mean) < 20.0, "%s: mean offset %.1f ns", cases[i].text, mean);
        cr_assert(fabs(sd - 1000.0) < 1000.0 * cases[i].sd_tol, "%s: sd %.1f ns", cases[i].text, sd);
        cr_assert(min >= cases[i].min_at_least - 1e-6, "%s: min %.1f", cases[i].text, min);
    }
}

Test(jitter, lognormal_and_pareto_offsets_never_go_below_minus_their_mean)
{
    double mean, sd, min;
    moments("lognormal:1us:1", 100000, &mean, &sd, &min);
    /* lognormal sigma 1, sd 1us: mean = 1000 / sqrt(e - 1) */
    cr_assert(min > -1000.0 / sqrt(exp(1.0) - 1) - 1e-6);
    moments("pareto:1us:3", 100000, &mean, &sd, &min);
    cr_assert(min > -1000.0 * 3 / 2 * 2 * sqrt(1.0 / 3) / 1 - 1e-6);
}

Test(jitter, draws_are_truncated_at_zero)
{
    cr_assert_eq(jitter_apply(1000, -2500.0), 0);
    cr_assert_eq(jitter_apply(1000, 250.4), 1250);
    cr_assert_eq(jitter_apply(1000, NAN), 0);
}
