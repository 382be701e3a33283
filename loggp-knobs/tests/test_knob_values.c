/* Knob values: parsing with units, exact formatting, round trips, bad input. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

static int64_t parse_ok(loggp_knob_id id, const char *text)
{
    int64_t ps = -1;
    char err[256] = "";
    cr_assert_eq(loggp_parse_knob(id, text, &ps, err, sizeof err), 0, "'%s' refused: %s", text, err);
    return ps;
}

Test(knob_values, times_in_each_unit)
{
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "800ps"), 800);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "250ns"), 250000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "1.5us"), 1500000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "1.5\xc2\xb5s"), 1500000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "1.5\xce\xbcs"), 1500000, "the Greek mu looks like the micro sign");
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "2\xce\xbcs/KiB"), 1953);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP, "2ms"), INT64_C(2000000000));
    cr_expect_eq(parse_ok(LOGGP_KNOB_LATENCY, "0.1s"), INT64_C(100000000000));
    cr_expect_eq(parse_ok(LOGGP_KNOB_LATENCY, "10s"), LOGGP_KNOB_MAX_PS);
    cr_expect_eq(parse_ok(LOGGP_KNOB_LATENCY, "0ns"), 0);
    cr_expect_eq(parse_ok(LOGGP_KNOB_LATENCY, ".5us"), 500000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_R, "0.001ns"), 1);
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_R, "1.000ps"), 1, "trailing zeros are exact");
}

Test(knob_values, zero_needs_no_unit)
{
    cr_expect_eq(parse_ok(LOGGP_KNOB_O_S, "0"), 0);
    cr_expect_eq(parse_ok(LOGGP_KNOB_LATENCY, "0.0"), 0);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "0"), 0);
}

Test(knob_values, per_byte_units)
{
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "0.5ns/B"), 500);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1us/KiB"), 977); /* 976.5625: nearest ps per byte */
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1ns/KiB"), 1);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1ms/MB"), 1000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/GiB"), 931);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "10s/B"), LOGGP_KNOB_MAX_PS);
}

Test(knob_values, every_size_unit_divides_by_its_own_bytes)
{
    /* 1 s = 10^12 ps over the unit's bytes; decimal and binary units differ */
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/B"), INT64_C(1000000000000));
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/kB"), 1000000000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/KB"), 1000000000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/KiB"), 976562500);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/MB"), 1000000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/MiB"), 953674); /* 953674.3 */
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/GB"), 1000);
    cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, "1s/GiB"), 931); /* 931.3 */
}

Test(knob_values, the_largest_per_byte_value_in_each_size_unit)
{
    /* 10 s per byte written per KiB, MB or GiB is accepted; one unit more is not */
    static const char *const largest[] = {"10240s/KiB", "10000000s/MB", "10737418240s/GiB"};
    static const char *const over[] = {"10241s/KiB", "10000001s/MB", "10737418241s/GiB"};
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++) {
        cr_expect_eq(parse_ok(LOGGP_KNOB_GAP_PER_BYTE, largest[i]), LOGGP_KNOB_MAX_PS, "%s", largest[i]);
        int64_t ps = 42;
        char err[256] = "";
        cr_expect_eq(loggp_parse_knob(LOGGP_KNOB_GAP_PER_BYTE, over[i], &ps, err, sizeof err), -1, "%s", over[i]);
        cr_expect(strstr(err, "10 s per byte") != NULL, "%s: %s", over[i], err);
    }
}

Test(knob_values, format_is_exact_and_readable)
{
    struct { loggp_knob_id id; int64_t ps; const char *text; } cases[] = {
        {LOGGP_KNOB_O_S, 0, "0ns"},
        {LOGGP_KNOB_O_S, 333, "0.333ns"},
        {LOGGP_KNOB_O_S, 1500000, "1.5us"},
        {LOGGP_KNOB_O_S, 10000000, "10us"},
        {LOGGP_KNOB_O_S, 1000001, "1.000001us"},
        /* both sides of each unit's switch: exactly one unit is written in it */
        {LOGGP_KNOB_O_S, 999, "0.999ns"},
        {LOGGP_KNOB_O_S, 1000, "1ns"},
        {LOGGP_KNOB_O_S, 999999, "999.999ns"},
        {LOGGP_KNOB_O_S, 1000000, "1us"},
        {LOGGP_KNOB_O_S, 999999999, "999.999999us"},
        {LOGGP_KNOB_O_S, 1000000000, "1ms"},
        {LOGGP_KNOB_LATENCY, 999999999999, "999.999999999ms"},
        {LOGGP_KNOB_LATENCY, 1000000000000, "1s"},
        {LOGGP_KNOB_GAP_PER_BYTE, 1000, "1ns/B"},
        {LOGGP_KNOB_LATENCY, LOGGP_KNOB_MAX_PS, "10s"},
        {LOGGP_KNOB_GAP_PER_BYTE, 500, "0.5ns/B"},
        {LOGGP_KNOB_GAP_PER_BYTE, 2000000, "2us/B"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        loggp_format_knob(cases[i].id, cases[i].ps, buf, sizeof buf);
        cr_expect_str_eq(buf, cases[i].text);
    }
}

Test(knob_values, round_trip_over_many_values)
{
    /* Values spread over every magnitude, including awkward digits. */
    uint64_t state = 12345;
    for (int i = 0; i < 20000; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int digits = (int)(state >> 60) % 14;
        int64_t scale = 1;
        for (int d = 0; d < digits; d++)
            scale *= 10;
        int64_t ps = (int64_t)((state >> 8) % (uint64_t)(scale * 10 + 1));
        if (ps > LOGGP_KNOB_MAX_PS)
            ps = LOGGP_KNOB_MAX_PS;
        for (int id = 0; id < LOGGP_KNOB_COUNT; id++) {
            char buf[64];
            loggp_format_knob((loggp_knob_id)id, ps, buf, sizeof buf);
            int64_t back = parse_ok((loggp_knob_id)id, buf);
            cr_assert_eq(back, ps, "%lld -> '%s' -> %lld", (long long)ps, buf, (long long)back);
        }
    }
}

typedef struct {
    int id;
    char text[64];
    char must_mention[40];
} bad_case;

ParameterizedTestParameters(knob_values, bad_inputs_are_refused_naming_the_token)
{
    static bad_case cases[] = {
        {LOGGP_KNOB_O_S, "", "empty"},
        {LOGGP_KNOB_O_S, "10", "'10'"},
        {LOGGP_KNOB_O_S, "10", "only 0 may go without one"},
        {LOGGP_KNOB_O_S, "+1us", "a sign is not accepted"},
        {LOGGP_KNOB_O_S, "+0", "a sign"},
        {LOGGP_KNOB_O_S, "0.4ps", "resolution of 1 ps"},
        {LOGGP_KNOB_O_S, "0.5ps", "resolution of 1 ps"},
        {LOGGP_KNOB_O_R, "0.0004ns", "resolution"},
        {LOGGP_KNOB_O_S, "10 \xc2\xb5s", "without a space"},
        {LOGGP_KNOB_O_S, "1US", "did you mean 'us'"},
        {LOGGP_KNOB_O_S, "1Ms", "did you mean 'ms'"},
        {LOGGP_KNOB_O_S, "10us ", "no spaces"},
        {LOGGP_KNOB_GAP_PER_BYTE, "1ns/GiB", "would become 0"},
        {LOGGP_KNOB_GAP_PER_BYTE, "0.4ps/B", "resolution"},
        {LOGGP_KNOB_O_S, "-1us", "'-1us'"},
        {LOGGP_KNOB_O_S, "nan", "'nan'"},
        {LOGGP_KNOB_O_S, "NaNus", "'NaNus'"},
        {LOGGP_KNOB_O_S, "inf", "'inf'"},
        {LOGGP_KNOB_O_S, "1e3us", "'1e3us'"},
        {LOGGP_KNOB_O_S, "10 us", "without a space"},
        {LOGGP_KNOB_O_S, "10usec", "'usec'"},
        {LOGGP_KNOB_O_S, "10min", "'min'"},
        {LOGGP_KNOB_O_S, "10.5.2us", "'10.5.2us'"},
        {LOGGP_KNOB_O_S, "us", "'us'"},
        /* a unit is its whole name, never a prefix of one */
        {LOGGP_KNOB_O_S, "1u", "'u'"},
        {LOGGP_KNOB_O_S, "5m", "'m'"},
        {LOGGP_KNOB_GAP_PER_BYTE, "5/B", "'/B'"},
        {LOGGP_KNOB_O_S, "10ns/B", "'10ns/B'"},
        {LOGGP_KNOB_LATENCY, "10.000000000001s", "10 s"},
        {LOGGP_KNOB_LATENCY, "11s", "'11s'"},
        {LOGGP_KNOB_LATENCY, "99999999999999999999999999999999999999999s", "10 s"},
        {LOGGP_KNOB_LATENCY, "1.0000000000000000001us", "decimal places"},
        {LOGGP_KNOB_GAP_PER_BYTE, "0.5ns", "add the size"},
        {LOGGP_KNOB_GAP_PER_BYTE, "0.5", "'0.5'"},
        {LOGGP_KNOB_GAP_PER_BYTE, "0.5ns/b", "'b'"},
        {LOGGP_KNOB_GAP_PER_BYTE, "0.5ns/", "''"},
        {LOGGP_KNOB_GAP_PER_BYTE, "1GB/s", "'GB/s'"},
        {LOGGP_KNOB_GAP_PER_BYTE, "11s/B", "10 s per byte"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, knob_values, bad_inputs_are_refused_naming_the_token)
{
    int64_t ps = 42;
    char err[256] = "";
    cr_assert_eq(loggp_parse_knob((loggp_knob_id)c->id, c->text, &ps, err, sizeof err), -1,
                 "'%s' was accepted as %lld", c->text, (long long)ps);
    cr_expect_eq(ps, 42, "a refused value must not be written");
    cr_expect(strstr(err, c->must_mention) != NULL, "error for '%s' should mention %s: %s", c->text,
              c->must_mention, err);
}

Test(knob_values, lookup_by_name_and_flag)
{
    cr_expect_eq(loggp_knob_by_name("o_s"), LOGGP_KNOB_O_S);
    cr_expect_eq(loggp_knob_by_name("G"), LOGGP_KNOB_GAP_PER_BYTE);
    cr_expect_eq(loggp_knob_by_name("g"), LOGGP_KNOB_GAP);
    cr_expect_eq(loggp_knob_by_name("x"), -1);
    cr_expect_eq(loggp_knob_by_flag("or"), LOGGP_KNOB_O_R);
    cr_expect_eq(loggp_knob_by_flag("L"), LOGGP_KNOB_LATENCY);
    cr_expect_eq(loggp_knob_by_flag("l"), -1);
}

Test(knob_values, environment_overrides)
{
    loggp_knobs k = {{1, 2, 3, 4, 5}};
    unsigned mask = 99;
    char err[256];
    setenv("LOGGP_OS", "7us", 1);
    setenv("LOGGP_GAP_PER_BYTE", "1ns/B", 1);
    unsetenv("LOGGP_OR");
    unsetenv("LOGGP_GAP");
    unsetenv("LOGGP_LATENCY");
    cr_assert_eq(loggp_knobs_apply_env(&k, &mask, err, sizeof err), 0, "%s", err);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_S], 7000000);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_R], 2);
    cr_expect_eq(k.ps[LOGGP_KNOB_GAP_PER_BYTE], 1000);
    cr_expect_eq(mask, (1u << LOGGP_KNOB_O_S) | (1u << LOGGP_KNOB_GAP_PER_BYTE));

    setenv("LOGGP_LATENCY", "5", 1);
    cr_assert_eq(loggp_knobs_apply_env(&k, &mask, err, sizeof err), -1);
    cr_expect(strstr(err, "LOGGP_LATENCY=5") != NULL, "%s", err);
    /* set but empty is refused too, not taken for unset */
    setenv("LOGGP_LATENCY", "", 1);
    cr_assert_eq(loggp_knobs_apply_env(&k, &mask, err, sizeof err), -1);
    cr_expect(strstr(err, "LOGGP_LATENCY=: empty value") != NULL, "%s", err);
    unsetenv("LOGGP_LATENCY");
    unsetenv("LOGGP_OS");
    unsetenv("LOGGP_GAP_PER_BYTE");
}
