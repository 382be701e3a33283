/* The run's other LOGGP_* variables (core/runenv.c): seeds, 0/1 switches,
 * the engine, output folders, and the one check of them all. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runenv.h"

static const char *const variables[] = {
    "LOGGP_SEED", "LOGGP_QUIET", "LOGGP_LIVE", "LOGGP_ROUTE", "LOGGP_ENGINE", "LOGGP_L_JITTER", "LOGGP_O_JITTER",
    "LOGGP_TOPOLOGY", "LOGGP_RANKS_PER_NODE", "LOGGP_L_INTER", "LOGGP_G_INTER", "LOGGP_PROFILE", "LOGGP_TRACE",
    "LOGGP_OUTSIDE",
};

static void clean(void)
{
    for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++)
        unsetenv(variables[i]);
}

TestSuite(runenv, .init = clean, .fini = clean);

Test(runenv, a_seed_takes_every_64_bit_value)
{
    uint64_t seed = 1;
    char err[128];
    cr_assert_eq(loggp_parse_seed("0", &seed, err, sizeof err), 0);
    cr_assert_eq(seed, 0);
    cr_assert_eq(loggp_parse_seed("18446744073709551615", &seed, err, sizeof err), 0, "%s", err);
    cr_assert_eq(seed, UINT64_MAX);
}

Test(runenv, a_seed_over_64_bits_is_refused_not_clamped)
{
    const char *big[] = {"18446744073709551616", "99999999999999999999999"};
    for (int i = 0; i < 2; i++) {
        uint64_t seed = 7;
        char err[128] = "";
        cr_assert_eq(loggp_parse_seed(big[i], &seed, err, sizeof err), -1, "%s accepted", big[i]);
        cr_assert(strstr(err, "largest seed"), "%s", err);
        cr_assert_eq(seed, 7, "refused, yet changed");
    }
    setenv("LOGGP_SEED", "18446744073709551616", 1);
    uint64_t seed;
    char err[256] = "";
    cr_assert_eq(loggp_env_seed(&seed, err, sizeof err), -1);
    cr_assert(strstr(err, "LOGGP_SEED=18446744073709551616: "), "%s", err);
}

Test(runenv, a_seed_is_digits_only)
{
    const char *bad[] = {"-5", "+5", " 5", "5 ", "0x10", "1e3", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t seed;
        char err[128] = "";
        cr_assert_eq(loggp_parse_seed(bad[i], &seed, err, sizeof err), -1, "'%s' accepted", bad[i]);
        cr_assert(strstr(err, "whole number"), "%s", err);
    }
}

Test(runenv, a_switch_is_0_or_1)
{
    int on = 7;
    char err[128] = "";
    cr_assert_eq(loggp_env_switch("LOGGP_QUIET", &on, err, sizeof err), 0);
    cr_assert_eq(on, 7, "unset leaves the default");
    setenv("LOGGP_QUIET", "1", 1);
    cr_assert_eq(loggp_env_switch("LOGGP_QUIET", &on, err, sizeof err), 1);
    cr_assert_eq(on, 1);
    setenv("LOGGP_QUIET", "0", 1);
    cr_assert_eq(loggp_env_switch("LOGGP_QUIET", &on, err, sizeof err), 1);
    cr_assert_eq(on, 0);
    setenv("LOGGP_QUIET", "", 1);
    on = 7;
    cr_assert_eq(loggp_env_switch("LOGGP_QUIET", &on, err, sizeof err), 0, "empty is unset");
    cr_assert_eq(on, 7);
    const char *bad[] = {"banana", "yes", "01", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("LOGGP_QUIET", bad[i], 1);
        cr_assert_eq(loggp_env_switch("LOGGP_QUIET", &on, err, sizeof err), -1, "'%s' accepted", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "LOGGP_QUIET=%s: expected 0 or 1", bad[i]);
        cr_assert_str_eq(err, want);
    }
}

/* The check's first complaint with name=value set, or "" if it passes. */
static const char *complaint(const char *name, const char *value)
{
    static char err[1024];
    clean();
    setenv(name, value, 1);
    err[0] = '\0';
    if (loggp_run_env_check(NULL, 1, err, sizeof err) == 0)
        return "";
    return err;
}

Test(runenv, the_check_names_each_variable_mpi_init_refuses)
{
    static const struct {
        const char *name, *value, *named;
    } cases[] = {
        {"LOGGP_L_JITTER", "foo", "LOGGP_L_JITTER=foo: "},
        {"LOGGP_O_JITTER", "pareto:1us:0.5", "LOGGP_O_JITTER=pareto:1us:0.5: "},
        {"LOGGP_SEED", "-5", "LOGGP_SEED=-5: "},
        {"LOGGP_QUIET", "banana", "LOGGP_QUIET=banana: "},
        {"LOGGP_LIVE", "2", "LOGGP_LIVE=2: "},
        {"LOGGP_ROUTE", "maybe", "LOGGP_ROUTE=maybe: "},
        {"LOGGP_ENGINE", "warp", "LOGGP_ENGINE=warp: "},
        {"LOGGP_TOPOLOGY", "/nonexistent/topo", "LOGGP_TOPOLOGY=/nonexistent/topo: "},
        {"LOGGP_RANKS_PER_NODE", "0", "LOGGP_RANKS_PER_NODE=0: "},
        {"LOGGP_L_INTER", "5", "LOGGP_L_INTER=5: "},
        {"LOGGP_G_INTER", "5ns", "LOGGP_G_INTER=5ns: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *err = complaint(cases[i].name, cases[i].value);
        cr_expect(strstr(err, cases[i].named), "%s=%s: got '%s'", cases[i].name, cases[i].value, err);
    }
    cr_expect_str_eq(complaint("LOGGP_L_JITTER", "normal:2us"), "");
    cr_expect_str_eq(complaint("LOGGP_SEED", "18446744073709551615"), "");
    cr_expect_str_eq(complaint("LOGGP_ENGINE", ""), "");
}

Test(runenv, the_check_reports_what_it_read)
{
    setenv("LOGGP_L_JITTER", "exp:3us", 1);
    setenv("LOGGP_SEED", "42", 1);
    setenv("LOGGP_ENGINE", "pmpi", 1);
    setenv("LOGGP_L_INTER", "5us", 1);
    loggp_run_env env;
    char err[256] = "";
    cr_assert_eq(loggp_run_env_check(&env, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(env.L_jitter.kind, JITTER_EXP);
    cr_assert_eq(env.o_jitter.kind, JITTER_NONE);
    cr_assert_eq(env.seed, 42);
    cr_assert_eq(env.engine, LOGGP_ENGINE_PMPI);
    cr_assert(env.topology && env.topology_L);
    setenv("LOGGP_L_INTER", "0", 1);
    cr_assert_eq(loggp_run_env_check(&env, 0, err, sizeof err), 0, "%s", err);
    cr_assert(env.topology && !env.topology_L, "a zero inter-node L gives no jitter a base");
}

Test(runenv, an_output_folder_must_be_one_a_rank_could_make_and_write_into)
{
    char dir[] = "/tmp/loggp-runenv-XXXXXX", file[256], sub[300];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/afile", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    snprintf(sub, sizeof sub, "%s/new/deeper", dir);
    cr_expect_str_eq(complaint("LOGGP_PROFILE", dir), "");
    cr_expect_str_eq(complaint("LOGGP_PROFILE", sub), "", "missing parents are made");
    cr_expect_str_eq(complaint("LOGGP_PROFILE", ""), "", "empty: no profile");
    cr_expect(strstr(complaint("LOGGP_PROFILE", file), "not a folder"));
    snprintf(sub, sizeof sub, "%s/afile/sub", dir);
    cr_expect(strstr(complaint("LOGGP_TRACE", sub), "afile, on its path, is not a folder"),
              "%s", complaint("LOGGP_TRACE", sub));
    if (geteuid() != 0) { /* root writes anywhere */
        chmod(dir, 0500);
        cr_expect(strstr(complaint("LOGGP_TRACE", dir), "cannot write into it"));
        chmod(dir, 0700);
    }
    /* root too: /proc takes no new file */
    cr_expect(strstr(complaint("LOGGP_TRACE", "/proc/nope"), "cannot write into /proc"),
              "%s", complaint("LOGGP_TRACE", "/proc/nope"));
    cr_expect(access(sub, F_OK) != 0, "the check made nothing");
    snprintf(sub, sizeof sub, "%s/new", dir);
    cr_expect(access(sub, F_OK) != 0, "the check made nothing");
    unlink(file);
    rmdir(dir);
}

Test(runenv, outside_is_zero_unless_armed_and_refuses_anything_else)
{
    int outside = -1;
    char err[256] = "";
    cr_assert_eq(loggp_env_outside(&outside, err, sizeof err), 0);
    cr_assert_eq(outside, LOGGP_OUTSIDE_ZERO, "unset is zero");
    setenv("LOGGP_OUTSIDE", "", 1);
    cr_assert_eq(loggp_env_outside(&outside, err, sizeof err), 0);
    cr_assert_eq(outside, LOGGP_OUTSIDE_ZERO, "empty is unset");
    setenv("LOGGP_OUTSIDE", "armed", 1);
    cr_assert_eq(loggp_env_outside(&outside, err, sizeof err), 0, "%s", err);
    cr_assert_eq(outside, LOGGP_OUTSIDE_ARMED);
    setenv("LOGGP_OUTSIDE", "zero", 1);
    cr_assert_eq(loggp_env_outside(&outside, err, sizeof err), 0, "%s", err);
    cr_assert_eq(outside, LOGGP_OUTSIDE_ZERO);
    const char *bad[] = {"Armed", "armed ", "1", "on"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("LOGGP_OUTSIDE", bad[i], 1);
        err[0] = '\0';
        cr_assert_eq(loggp_env_outside(&outside, err, sizeof err), -1, "'%s' accepted", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "LOGGP_OUTSIDE=%s: expected zero or armed", bad[i]);
        cr_assert_str_eq(err, want);
        cr_assert_eq(loggp_run_env_check(NULL, 0, err, sizeof err), -1, "the one check lets '%s' through", bad[i]);
        cr_assert(strstr(err, "LOGGP_OUTSIDE="), "%s", err);
    }
}

Test(runenv, armed_knobs_are_the_smallest_step_of_each_knob_set_and_nothing_else)
{
    loggp_knobs set = {.scope = LOGGP_SCOPE_KERNEL}, armed;
    set.ps[LOGGP_KNOB_O_S] = 10000000;          /* 10 us */
    set.ps[LOGGP_KNOB_LATENCY] = 1;             /* below one step: still set */
    set.ps[LOGGP_KNOB_GAP_PER_BYTE] = 2000;     /* 2 ns/B */
    loggp_knobs_armed(&set, &armed);
    cr_assert_eq(armed.ps[LOGGP_KNOB_O_S], 1000, "a time knob arms at 1 ns");
    cr_assert_eq(armed.ps[LOGGP_KNOB_LATENCY], 1000);
    cr_assert_eq(armed.ps[LOGGP_KNOB_GAP_PER_BYTE], 1, "G arms at 1 ps per byte");
    cr_assert_eq(armed.ps[LOGGP_KNOB_O_R], 0, "a knob not set stays off");
    cr_assert_eq(armed.ps[LOGGP_KNOB_GAP], 0);
    cr_assert_eq(armed.scope, LOGGP_SCOPE_KERNEL);
    loggp_knobs none = {0};
    loggp_knobs_armed(&none, &armed);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        cr_assert_eq(armed.ps[i], 0, "no knob set arms nothing (%s)", loggp_knob_table[i].name);
}
