/* Jitter's pure parts (src/jitter.c; the parser is in loggp-knobs/core/
 * jitter_spec.c): the PRNG against the published xoshiro256** reference, the
 * parser's errors, and each distribution's mean, standard deviation and
 * truncation over many draws; then the draws as the layer takes them
 * (jitter.h, src/jitter_live.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
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

Test(jitter, a_spread_keeps_its_fraction_of_a_ns)
{
    /* the spread is read in ps like every knob: 1.5 ns is not 1 ns */
    jitter_spec s;
    char err[256], back[64];
    cr_assert_eq(loggp_jitter_parse("normal:1.5ns", &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(s.spread_ns, 1.5, 1e-12);
    loggp_jitter_format(&s, back, sizeof back);
    cr_assert_str_eq(back, "normal:1.5ns");
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
    refused("exp:2us:3", "only a spread");
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

Test(jitter, draws_round_to_the_nearest_ns_on_both_sides_and_stop_at_10_s)
{
    /* rounded, not truncated: truncation would take half a ns off every draw's mean */
    cr_assert_eq(jitter_apply(1000, 250.49), 1250);
    cr_assert_eq(jitter_apply(1000, 250.51), 1251);
    cr_assert_eq(jitter_apply(1000, -250.49), 750);
    cr_assert_eq(jitter_apply(1000, -250.51), 749);
    cr_assert_eq(jitter_apply(0, 0.51), 1);
    cr_assert_eq(jitter_apply(0, 9999999999999.0), UINT64_C(9999999999999));
    cr_assert_eq(jitter_apply(0, 10000000000001.0), UINT64_C(10000000000000));
    cr_assert_eq(jitter_apply(0, INFINITY), UINT64_C(10000000000000));
}

/* ---- the whole shape, not only mean and spread ----
 * Every kind is built to have mean 0 and sd S whatever its shape parameter,
 * so a draw from the wrong family, or with the wrong sigma or alpha, keeps
 * both moments: only the distribution function tells them apart. */

static double std_normal_cdf(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

/* The exact distribution function of jitter_offset's draws (docs/jitter.md). */
static double offset_cdf(const jitter_spec *s, double x)
{
    double S = s->spread_ns;
    switch (s->kind) {
    case JITTER_NORMAL:
        return std_normal_cdf(x / S);
    case JITTER_EXP: /* Exp(mean S) - S */
        return x <= -S ? 0.0 : -expm1(-(x + S) / S);
    case JITTER_LOGNORMAL: {
        double sigma = s->shape, m = S / sqrt(expm1(sigma * sigma));
        if (x <= -m)
            return 0.0;
        return std_normal_cdf((log((x + m) / m) + sigma * sigma / 2) / sigma);
    }
    case JITTER_PARETO: {
        double a = s->shape, xm = S * (a - 1) * sqrt((a - 2) / a);
        double y = x + a * xm / (a - 1);
        return y <= xm ? 0.0 : 1.0 - pow(xm / y, a);
    }
    default:
        return x < 0 ? 0.0 : 1.0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { SHAPE_DRAWS = 200000 };
static double shape_draws[SHAPE_DRAWS];

static jitter_spec spec_of(const char *text)
{
    jitter_spec s;
    char err[256];
    cr_assert_eq(loggp_jitter_parse(text, &s, err, sizeof err), 0, "%s: %s", text, err);
    return s;
}

/* Sorted offsets drawn from text, fixed seed. */
static void sorted_draws(const char *text)
{
    jitter_spec s = spec_of(text);
    jitter_rng r;
    jitter_seed(&r, 2024, 1);
    for (int i = 0; i < SHAPE_DRAWS; i++)
        shape_draws[i] = jitter_offset(&s, &r);
    qsort(shape_draws, SHAPE_DRAWS, sizeof shape_draws[0], cmp_double);
}

/* Kolmogorov-Smirnov distance between the sorted draws and the law of text. */
static double ks_distance(const char *text)
{
    jitter_spec s = spec_of(text);
    double d = 0;
    for (int i = 0; i < SHAPE_DRAWS; i++) {
        double f = offset_cdf(&s, shape_draws[i]);
        double above = (double)(i + 1) / SHAPE_DRAWS - f, below = f - (double)i / SHAPE_DRAWS;
        if (above > d)
            d = above;
        if (below > d)
            d = below;
    }
    return d;
}

/* 1.95 / sqrt(n): the KS test's 0.1 % critical value */
#define KS_LIMIT (1.95 / sqrt((double)SHAPE_DRAWS))

static const char *const shape_cases[] = {
    "normal:1us",    "exp:1us",        "lognormal:1us", "lognormal:1us:0.5", "lognormal:1us:2",
    "pareto:1us:3",  "pareto:1us:2.5", "pareto:1us:6",
};
#define N_SHAPES (sizeof shape_cases / sizeof shape_cases[0])

Test(jitter_shape, every_distribution_follows_its_exact_law)
{
    for (size_t i = 0; i < N_SHAPES; i++) {
        sorted_draws(shape_cases[i]);
        double d = ks_distance(shape_cases[i]);
        cr_assert(d < KS_LIMIT, "%s: KS distance %.5f to its own law (limit %.5f)", shape_cases[i], d, KS_LIMIT);
    }
}

Test(jitter_shape, the_law_tells_every_other_distribution_apart)
{
    /* the check above has power: draws of each case are far from every other
     * case's law, though all have mean 0 and sd 1 us */
    for (size_t i = 0; i < N_SHAPES; i++) {
        sorted_draws(shape_cases[i]);
        for (size_t j = 0; j < N_SHAPES; j++) {
            if (j == i)
                continue;
            double d = ks_distance(shape_cases[j]);
            cr_assert(d > 3 * KS_LIMIT, "draws of %s are near the law of %s (KS %.5f)", shape_cases[i],
                      shape_cases[j], d);
        }
    }
}

/* Share of the sorted draws below x. */
static double share_below(double x)
{
    size_t lo = 0, hi = SHAPE_DRAWS;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (shape_draws[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo / SHAPE_DRAWS;
}

/* x with offset_cdf(x) = p, by bisection. */
static double exact_quantile(const jitter_spec *s, double p)
{
    double lo = -1e7, hi = 1e7;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (offset_cdf(s, mid) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

Test(jitter_shape, tails_hold_their_exact_share_and_skew_has_its_sign)
{
    /* KS is weakest in the tails, where a heavy tail's alpha shows */
    const double tails[] = {0.001, 0.01, 0.99, 0.999};
    for (size_t i = 0; i < N_SHAPES; i++) {
        jitter_spec s = spec_of(shape_cases[i]);
        sorted_draws(shape_cases[i]);
        for (size_t t = 0; t < 4; t++) {
            double p = tails[t], got = share_below(exact_quantile(&s, p));
            /* 5 binomial standard deviations */
            double tol = 5 * sqrt(p * (1 - p) / SHAPE_DRAWS);
            cr_assert(fabs(got - p) < tol, "%s: %.5f of draws below the exact %.3f quantile", shape_cases[i], got,
                      p);
        }
        double median = shape_draws[SHAPE_DRAWS / 2];
        if (s.kind == JITTER_NORMAL)
            cr_assert(fabs(median) < 10.0, "%s: median %.1f ns", shape_cases[i], median);
        else /* right-skewed: the median sits below the mean 0 */
            cr_assert(median < -50.0, "%s: median %.1f ns, not below the mean", shape_cases[i], median);
    }
}

Test(jitter_shape, the_far_tails_are_reached_as_often_as_the_law_says)
{
    /* beyond the 1e-5 quantiles, where a cut tail (a clamped draw, a sum of
     * uniforms for the normal) leaves nothing or a sixth of its share: in
     * 4e6 draws 40 on each side, held within 3.5 Poisson sd */
    enum { FAR_DRAWS = 4000000 };
    const double p = 1e-5, expected = p * FAR_DRAWS, tol = 3.5 * sqrt(p * FAR_DRAWS);
    for (size_t i = 0; i < N_SHAPES; i++) {
        jitter_spec s = spec_of(shape_cases[i]);
        double low = exact_quantile(&s, p), high = exact_quantile(&s, 1 - p);
        jitter_rng r;
        jitter_seed(&r, 99, 2);
        int below = 0, above = 0;
        for (int k = 0; k < FAR_DRAWS; k++) {
            double x = jitter_offset(&s, &r);
            below += x < low;
            above += x > high;
        }
        cr_assert(fabs(above - expected) < tol, "%s: %d draws above the exact 1 - 1e-5 quantile %.0f ns, %.0f expected",
                  shape_cases[i], above, high, expected);
        cr_assert(fabs(below - expected) < tol, "%s: %d draws below the exact 1e-5 quantile %.0f ns, %.0f expected",
                  shape_cases[i], below, low, expected);
    }
}

Test(jitter, shape_limits_on_both_sides_and_the_documented_defaults)
{
    jitter_spec s;
    char err[256];
    /* docs/jitter.md: SIGMA in (0, 20], default 1; ALPHA > 2, default 3 */
    cr_assert_eq(loggp_jitter_parse("pareto:1us", &s, err, sizeof err), 0);
    cr_assert_float_eq(s.shape, 3.0, 1e-12);
    cr_assert_eq(loggp_jitter_parse("lognormal:1us", &s, err, sizeof err), 0);
    cr_assert_float_eq(s.shape, 1.0, 1e-12);
    /* pareto's alpha has no ceiling: a large one is a light tail, not an error */
    const char *accepted[] = {"lognormal:1us:20", "lognormal:1us:0.001", "pareto:1us:2.001", "pareto:1us:50"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(loggp_jitter_parse(accepted[i], &s, err, sizeof err), 0, "%s: %s", accepted[i], err);
    refused("lognormal:1us:20.001", "sigma");
    refused("lognormal:1us:-1", "sigma");
    refused("pareto:1us:2", "alpha");
    refused("pareto:1us:1.999", "alpha");
}

Test(jitter, a_uniform_draw_is_never_0_so_every_log_is_finite)
{
    /* xoshiro256** from {1, 2, 3, 4} gives 0 as its second output: the
     * smallest uniform, half a step above 0 */
    jitter_rng r = {{1, 2, 3, 4}};
    jitter_next(&r);
    double u = jitter_uniform(&r);
    cr_assert(u > 0 && u == 0x1.0p-54, "uniform %a from a zero output", u);
    /* the same zero output drawn as an exponential offset stays finite */
    jitter_rng again = {{1, 2, 3, 4}};
    jitter_next(&again);
    jitter_spec exp_spec = spec_of("exp:1us");
    double x = jitter_offset(&exp_spec, &again);
    cr_assert(isfinite(x) && x > 30000.0, "exp offset %g from the smallest uniform", x);
}

Test(jitter, another_seed_gives_another_sequence_on_the_same_stream)
{
    /* docs/jitter.md: the stream is seeded from --seed and the rank; a new seed must change the draws */
    jitter_rng a, b;
    jitter_seed(&a, 7, 3);
    jitter_seed(&b, 8, 3);
    int same = 0;
    for (int i = 0; i < 100; i++)
        same += jitter_next(&a) == jitter_next(&b);
    cr_assert_eq(same, 0, "%d of 100 outputs shared by seeds 7 and 8", same);
}

/* ---- the process's jitter as the layer applies it (jitter.h, jitter_live.c) ---- */

static void start_jitter(void)
{
    char err[256];
    setenv("LOGGP_L_JITTER", "normal:1us", 1);
    setenv("LOGGP_O_JITTER", "exp:1us", 1);
    setenv("LOGGP_SEED", "5", 1);
    cr_assert_eq(loggp_jitter_start(err, sizeof err), 0, "%s", err);
    cr_assert(loggp_jitter_L_on && loggp_jitter_o_on);
}

Test(jitter_live, draws_move_a_set_value_but_never_a_zero_one)
{
    /* docs/jitter.md: jitter draws around the set value and never moves a zero one */
    start_jitter();
    int moved_L = 0, moved_o = 0;
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(loggp_jittered_L(0), 0, "L = 0 drawn as nonzero");
        cr_assert_eq(loggp_jittered_o(0), 0, "o = 0 drawn as nonzero");
        moved_L += loggp_jittered_L(10000) != 10000;
        moved_o += loggp_jittered_o(10000) != 10000;
    }
    cr_assert_gt(moved_L, 900);
    cr_assert_gt(moved_o, 900);
}

Test(jitter_live, held_jitter_gives_the_set_value_exactly)
{
    /* held (armed steps only, or the layer's own messages): no draw at all */
    start_jitter();
    atomic_store(&loggp_jitter_held, 1);
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(loggp_jittered_L(10000), 10000);
        cr_assert_eq(loggp_jittered_o(10000), 10000);
    }
    atomic_store(&loggp_jitter_held, 0);
    int moved = 0;
    for (int i = 0; i < 100; i++)
        moved += loggp_jittered_L(10000) != 10000;
    cr_assert_gt(moved, 90, "released, L is drawn again");
}

/* Each knob draws from its own setting: o's exp:1us offsets never go below -1 us, while L's
 * normal:1us ones go past -1 us about one time in six. */
Test(jitter_live, o_and_L_each_draw_from_their_own_distribution)
{
    start_jitter();
    int L_low = 0, o_low = 0;
    for (int i = 0; i < 2000; i++) {
        L_low += loggp_jittered_L(10000) < 9000;
        o_low += loggp_jittered_o(10000) < 9000;
    }
    cr_expect_eq(o_low, 0, "o (exp:1us) drew %d values more than its spread below the set value", o_low);
    cr_expect_gt(L_low, 200, "L (normal:1us) drew only %d of 2000 more than 1 sd below", L_low);
    cr_expect_lt(L_low, 450, "L (normal:1us) drew %d of 2000 more than 1 sd below", L_low);
}

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define FIRST_DRAWS 6

static void *draw_first(void *out)
{
    for (int i = 0; i < FIRST_DRAWS; i++)
        ((uint64_t *)out)[i] = loggp_jittered_L(1000000);
    return NULL;
}

/* The first draws of a fresh process whose launcher set `var` to `rank` (NULL: none), from
 * its first thread, or from its second (after the first drew) if `second_thread`. */
static void first_draws(const char *var, const char *rank, int second_thread, uint64_t *out)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            unsetenv(vars[i]);
        if (var)
            setenv(var, rank, 1);
        char err[256];
        setenv("LOGGP_L_JITTER", "normal:10us", 1);
        setenv("LOGGP_SEED", "42", 1);
        if (loggp_jitter_start(err, sizeof err) != 0)
            _exit(2);
        uint64_t draws[FIRST_DRAWS];
        draw_first(draws);
        if (second_thread) {
            pthread_t t;
            if (pthread_create(&t, NULL, draw_first, draws) != 0 || pthread_join(t, NULL) != 0)
                _exit(3);
        }
        _exit(write(fds[1], draws, sizeof draws) == (ssize_t)sizeof draws ? 0 : 4);
    }
    close(fds[1]);
    cr_assert_eq(read(fds[0], out, FIRST_DRAWS * sizeof *out), (ssize_t)(FIRST_DRAWS * sizeof *out));
    close(fds[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the drawing process failed");
}

static int same_draws(const uint64_t *a, const uint64_t *b)
{
    return !memcmp(a, b, FIRST_DRAWS * sizeof *a);
}

Test(jitter_streams, a_rank_repeats_its_draws_and_other_ranks_draw_others)
{
    uint64_t r1[FIRST_DRAWS], again[FIRST_DRAWS], r0[FIRST_DRAWS], r2[FIRST_DRAWS];
    first_draws("PMI_RANK", "1", 0, r1);
    first_draws("PMI_RANK", "1", 0, again);
    cr_expect(same_draws(r1, again), "rank 1 drew differently run to run");
    first_draws("PMI_RANK", "0", 0, r0);
    first_draws("PMI_RANK", "2", 0, r2);
    cr_expect_not(same_draws(r0, r1), "ranks 0 and 1 drew the same sequence");
    cr_expect_not(same_draws(r2, r1), "ranks 2 and 1 drew the same sequence");
    cr_expect_not(same_draws(r0, r2), "ranks 0 and 2 drew the same sequence");
}

Test(jitter_streams, every_launchers_rank_variable_names_the_rank)
{
    uint64_t by_pmi[FIRST_DRAWS], none[FIRST_DRAWS];
    first_draws("PMI_RANK", "3", 0, by_pmi);
    first_draws(NULL, NULL, 0, none);
    cr_expect_not(same_draws(by_pmi, none), "rank 3 drew as a process without a rank");
    static const char *const others[] = {"PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        uint64_t draws[FIRST_DRAWS];
        first_draws(others[i], "3", 0, draws);
        cr_expect(same_draws(draws, by_pmi), "%s=3 drew other than PMI_RANK=3", others[i]);
    }
}

Test(jitter_streams, a_second_thread_draws_its_own_sequence)
{
    uint64_t first[FIRST_DRAWS], second[FIRST_DRAWS];
    first_draws("PMI_RANK", "1", 0, first);
    first_draws("PMI_RANK", "1", 1, second);
    cr_expect_not(same_draws(first, second), "the second thread repeated the first one's draws");
}
