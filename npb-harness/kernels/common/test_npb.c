/* Unit tests of the shared NPB pieces (no MPI start-up needed). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include <stdio.h>

#include "npb.h"

/* The NPB specification's double-precision multiply mod 2^46, written out
 * independently here to cross-check the integer version. */
static double spec_randlc(double *x, double a)
{
    const double r23 = 1.0 / 8388608.0, t23 = 8388608.0;
    const double r46 = r23 * r23, t46 = t23 * t23;
    double a1 = (double)(long long)(r23 * a), a2 = a - t23 * a1;
    double x1 = (double)(long long)(r23 * *x), x2 = *x - t23 * x1;
    double t1 = a1 * x2 + a2 * x1;
    double t2 = (double)(long long)(r23 * t1);
    double z = t1 - t23 * t2;
    double t3 = t23 * z + a2 * x2;
    double t4 = (double)(long long)(r46 * t3);
    *x = t3 - t46 * t4;
    return r46 * *x;
}

Test(randlc, first_values_match_big_integer_arithmetic)
{
    /* Expected values computed with exact integers: x_k = 5^13k * 314159265 mod 2^46. */
    double x = 314159265.0;
    const double expect[3] = {55909509111989.0, 61155031930969.0, 45573031421645.0};
    for (int i = 0; i < 3; i++) {
        double r = npb_randlc(&x, 1220703125.0);
        cr_assert_eq(x, expect[i], "step %d: x=%.0f", i, x);
        cr_assert_float_eq(r, expect[i] / 70368744177664.0, 1e-16);
        cr_assert(r > 0.0 && r < 1.0);
    }
}

Test(randlc, agrees_with_spec_double_algorithm)
{
    double x = 271828183.0, y = x;
    for (int i = 0; i < 100000; i++) {
        double r1 = npb_randlc(&x, 1220703125.0);
        double r2 = spec_randlc(&y, 1220703125.0);
        cr_assert_eq(r1, r2, "step %d differs", i);
        cr_assert_eq(x, y);
    }
    /* also with a large multiplier (a = x itself, as EP's jump-ahead does) */
    double a = 123456789012345.0;
    x = y = 98765432109.0;
    for (int i = 0; i < 1000; i++) {
        npb_randlc(&x, a);
        spec_randlc(&y, a);
        cr_assert_eq(x, y, "step %d differs", i);
    }
}

Test(vranlc, equals_repeated_randlc)
{
    double x = 271828183.0, y = x, buf[1000];
    npb_vranlc(1000, &x, 1220703125.0, buf);
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(buf[i], npb_randlc(&y, 1220703125.0), "element %d", i);
    cr_assert_eq(x, y);
    cr_assert_eq(x, 8661753562871.0); /* 5^13000 * 271828183 mod 2^46 */
    npb_vranlc(0, &x, 1220703125.0, buf);
    cr_assert_eq(x, y, "n=0 must leave the seed alone");
}

Test(vranlc, every_length_continues_the_sequence)
{
    /* lengths around the interleaving width, and a large multiplier */
    const int lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 999};
    const double mults[] = {1220703125.0, 35184372088831.0};
    for (int m = 0; m < 2; m++) {
        double x = 314159265.0, y = x, buf[999];
        for (int l = 0; l < (int)(sizeof lengths / sizeof lengths[0]); l++) {
            int n = lengths[l];
            npb_vranlc(n, &x, mults[m], buf);
            for (int i = 0; i < n; i++)
                cr_assert_eq(buf[i], spec_randlc(&y, mults[m]), "mult %d n=%d element %d", m, n, i);
            cr_assert_eq(x, y, "mult %d n=%d: seed after the call", m, n);
        }
    }
}

static int parse(int argc, char **argv, npb_args *out)
{
    return npb_parse_args(argc, argv, "cg", "SWAB", out);
}

Test(parse_args, accepts_class_and_perturb)
{
    npb_args a;
    char *v1[] = {"p", "A", NULL};
    cr_assert_eq(parse(2, v1, &a), 0);
    cr_assert_eq(a.cls, 'A');
    cr_assert_eq(a.perturb, 0);
    char *v2[] = {"p", "--perturb", "w", NULL};
    cr_assert_eq(parse(3, v2, &a), 0);
    cr_assert_eq(a.cls, 'W');
    cr_assert_eq(a.perturb, 1);
}

Test(parse_args, refuses_bad_usage, .init = cr_redirect_stderr)
{
    npb_args a;
    char *missing[] = {"p", NULL};
    char *unsupported[] = {"p", "C", NULL};
    char *unknown[] = {"p", "Q", NULL};
    char *long_class[] = {"p", "AB", NULL};
    char *option[] = {"p", "A", "--fast", NULL};
    char *extra[] = {"p", "A", "B", NULL};
    char *twice[] = {"p", "A", "--perturb", "--perturb", NULL};
    cr_assert_eq(parse(1, missing, &a), 2);
    cr_assert_eq(parse(2, unsupported, &a), 2);
    cr_assert_eq(parse(2, unknown, &a), 2);
    cr_assert_eq(parse(2, long_class, &a), 2);
    cr_assert_eq(parse(3, option, &a), 2);
    cr_assert_eq(parse(3, extra, &a), 2);
    cr_assert_eq(parse(4, twice, &a), 2);
    fflush(stderr);
    cr_assert_stderr_neq_str("");
}

Test(parse_args, error_names_the_bad_token, .init = cr_redirect_stderr)
{
    npb_args a;
    char *v[] = {"p", "--fast", NULL};
    cr_assert_eq(parse(2, v, &a), 2);
    fflush(stderr);
    FILE *err = cr_get_redirected_stderr();
    char buf[512] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, err);
    buf[n] = 0;
    cr_assert(strstr(buf, "'--fast'") != NULL, "stderr was: %s", buf);
}

Test(print_report, npb_format_lines, .init = cr_redirect_stdout)
{
    npb_report r = {.name = "CG", .cls = 'A', .size = {14000, 0, 0}, .niter = 15,
                    .time_s = 1.5, .mops = 1000.0, .optype = "floating point",
                    .verified = 0, .nprocs = 2};
    npb_print_report(&r);
    fflush(stdout);
    FILE *out = cr_get_redirected_stdout();
    char buf[4096] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, out);
    buf[n] = 0;
    cr_assert(strstr(buf, " CG Benchmark Completed.\n"));
    cr_assert(strstr(buf, " Class           =                        A\n"));
    cr_assert(strstr(buf, " Size            =                    14000\n"));
    cr_assert(strstr(buf, " Iterations      =                       15\n"));
    cr_assert(strstr(buf, " Time in seconds =                 1.500000\n"));
    cr_assert(strstr(buf, " Total processes =                        2\n"));
    cr_assert(strstr(buf, " Mop/s total     =                  1000.00\n"));
    cr_assert(strstr(buf, " Operation type  =           floating point\n"));
    cr_assert(strstr(buf, " Verification    =             UNSUCCESSFUL\n"));
    cr_assert(strstr(buf, "SUCCESSFUL\n") && !strstr(buf, " SUCCESSFUL\n"));
}

Test(help, is_asked_by_either_spelling_anywhere, .init = cr_redirect_stdout)
{
    char *long_form[] = {"p", "--help", NULL};
    char *short_form[] = {"p", "A", "-h", NULL};
    char *none[] = {"p", "A", "--perturb", NULL};
    cr_assert_eq(npb_help_asked(2, long_form, "cg", "SWAB"), 1);
    cr_assert_eq(npb_help_asked(3, short_form, "cg", "SWAB"), 1);
    cr_assert_eq(npb_help_asked(3, none, "cg", "SWAB"), 0);
    fflush(stdout);
    cr_assert_stdout_neq_str("");
}

Test(process_counts, power_of_two_takes_one_and_doublings_only)
{
    for (int n = 1; n <= 1024; n *= 2)
        cr_assert(npb_is_power_of_two(n), "%d", n);
    int not_ones[] = {0, -1, -2, 3, 6, 12, 1023, 1025};
    for (size_t i = 0; i < sizeof not_ones / sizeof not_ones[0]; i++)
        cr_assert_not(npb_is_power_of_two(not_ones[i]), "%d", not_ones[i]);
}
