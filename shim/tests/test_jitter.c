/* Latency jitter's pure parts: the spec parser and each distribution's
 * statistics (mean L, the spread asked for), from many seeded draws. */
#include <criterion/criterion.h>
#include <math.h>

#include "jitter.h"

static loggp_jitter parsed(const char *text)
{
    loggp_jitter j;
    char err[256];
    cr_assert_eq(loggp_jitter_parse(text, &j, err, sizeof err), 0, "%s: %s", text, err);
    return j;
}

Test(jitter, specs_parse_and_bad_ones_are_named)
{
    cr_assert_eq(parsed("none").kind, LOGGP_JITTER_NONE);
    loggp_jitter j = parsed("normal:2us");
    cr_assert_eq(j.kind, LOGGP_JITTER_NORMAL);
    cr_assert_float_eq(j.spread_ns, 2000.0, 1e-9);
    cr_assert_float_eq(parsed("lognormal:0.5").shape, 0.5, 1e-12);
    static const char *const bad[] = {"normal", "normal:", "normal:2", "gauss:1us", "pareto:1", "pareto:x",
                                      "lognormal:-1", "exp:-1us"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        loggp_jitter k;
        cr_assert_eq(loggp_jitter_parse(bad[i], &k, err, sizeof err), -1, "%s accepted", bad[i]);
        cr_assert_not_null(strstr(err, bad[i]), "%s: message '%s' does not name it", bad[i], err);
    }
}

static void moments(const char *spec, uint64_t L, double *mean, double *sd, double *p99)
{
    loggp_jitter j = parsed(spec);
    uint64_t state = loggp_random_seed(7, 3);
    enum { N = 200000 };
    static double v[N];
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++) {
        v[i] = (double)loggp_jitter_draw(&j, L, &state);
        sum += v[i];
        sq += v[i] * v[i];
    }
    *mean = sum / N;
    *sd = sqrt(sq / N - *mean * *mean);
    int above = 0;
    for (int i = 0; i < N; i++)
        above += v[i] > *p99;
    *p99 = (double)above / N; /* on return: the share above the threshold given */
}

Test(jitter, normal_has_mean_L_and_the_deviation_asked)
{
    double mean, sd, share = 10000 + 2.326 * 1000;
    moments("normal:1us", 10000, &mean, &sd, &share);
    cr_assert(fabs(mean - 10000) < 15, "mean %f", mean);
    cr_assert(fabs(sd - 1000) < 15, "sd %f", sd);
    cr_assert(fabs(share - 0.01) < 0.002, "share above the 99th percentile %f", share);
}

Test(jitter, exp_has_mean_L_and_deviation_S)
{
    double mean, sd, share = 10000 - 2000 + 2000 * log(100.0);
    moments("exp:2us", 10000, &mean, &sd, &share);
    cr_assert(fabs(mean - 10000) < 30, "mean %f", mean);
    cr_assert(fabs(sd - 2000) < 30, "sd %f", sd);
    cr_assert(fabs(share - 0.01) < 0.002, "share %f", share);
}

Test(jitter, lognormal_and_pareto_have_mean_L)
{
    double mean, sd, share = 1e18;
    moments("lognormal:0.5", 10000, &mean, &sd, &share);
    cr_assert(fabs(mean - 10000) < 60, "lognormal mean %f", mean);
    cr_assert(fabs(sd - 10000 * sqrt(exp(0.25) - 1)) < 100, "lognormal sd %f", sd);
    share = 10000 * 2.0 / 3.0 - 1; /* the scale, L (alpha - 1) / alpha: nothing falls below it */
    moments("pareto:3", 10000, &mean, &sd, &share);
    cr_assert(fabs(mean - 10000) < 100, "pareto mean %f", mean);
    cr_assert_eq(share, 1.0);
}

Test(jitter, draws_are_reproducible_per_seed_and_never_negative)
{
    loggp_jitter j = parsed("normal:50us");
    uint64_t a = loggp_random_seed(1, 0), b = loggp_random_seed(1, 0), c = loggp_random_seed(2, 0);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = loggp_jitter_draw(&j, 10000, &a), y = loggp_jitter_draw(&j, 10000, &b);
        cr_assert_eq(x, y);
        differ |= x != loggp_jitter_draw(&j, 10000, &c);
        cr_assert_lt(x, UINT64_C(1) << 62); /* truncated at 0, not wrapped */
    }
    cr_assert(differ);
}
