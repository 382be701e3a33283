/* loggp-probe's command line: every option, its checks, and the list of sizes. */
#define _POSIX_C_SOURCE 200809L

#include "probe.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const send_mode_names[3] = {"send", "isend", "ssend"};
const char *const recv_mode_names[2] = {"recv", "irecv"};

static int parse_bytes(const char *text, long *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno || !isfinite(v) || v < 0)
        return -1;
    double mult = 1;
    if (*end) {
        if (!strcmp(end, "B"))
            mult = 1;
        else if (!strcmp(end, "K") || !strcmp(end, "KiB") || !strcmp(end, "k"))
            mult = 1024;
        else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
            mult = 1024.0 * 1024;
        else
            return -1;
    }
    v *= mult;
    if (v != floor(v) || v > (double)(1L << 30))
        return -1;
    *out = (long)v;
    return 0;
}

static int parse_double(const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}


/* A knob set: "zero", or comma-separated name=value with the knob file's names
 * (o sets o_s and o_r). Returns -1 with a message naming the bad part. */
static int parse_knob_set(const char *spec, loggp_knobs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!strcmp(spec, "zero"))
        return 0;
    char *copy = strdup(spec), *save = NULL;
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    unsigned seen = 0;
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save))
        rc = loggp_knobs_parse_item(item, 1, out, &seen, err, errlen);
    if (!rc && !seen) {
        snprintf(err, errlen, "empty (use 'zero' for all knobs at 0)");
        rc = -1;
    }
    free(copy);
    return rc;
}

void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n 2 loggp-probe [options]\n"
            "Measures T(m), o_s(m), o_r(m), g(m), L and G between rank 0 and rank 1.\n"
            "  --min-size BYTES     smallest message size (default 1; suffixes K, KiB, M, MiB)\n"
            "  --max-size BYTES     largest message size (default 1MiB); powers of two in between\n"
            "  --sizes LIST         comma-separated sizes instead of the power-of-two range\n"
            "  --no-refine          do not add sizes where the curves bend\n"
            "  --send-mode MODE     send | isend | ssend (default send)\n"
            "  --recv-mode MODE     recv | irecv (default recv)\n"
            "  --json FILE          write the results as JSON (atomically)\n"
            "  --rel-ci F           target 95%% CI half-width relative to the median (default 0.02)\n"
            "  --abs-ci-ns NS       ... or absolute, whichever is larger (default 20)\n"
            "  --min-samples N      samples per value at least (default 11)\n"
            "  --max-samples N      samples per value at most (default 2000)\n"
            "  --time-limit S       measurement time budget in seconds (default 4)\n"
            "  --burst N            messages per burst for the gap (default 16)\n"
            "  --knob-set SPEC      (repeatable) measure under each libloggp knob set in turn, in\n"
            "                       one run: 'zero' or name=value,... (o, o_s, o_r, g, G, L), e.g.\n"
            "                       --knob-set zero --knob-set o=1us; the probe rewrites the file\n"
            "                       named by LOGGP_KNOB_FILE, so point that at a file of its own\n"
            "  --rounds N           interleaved rounds over the knob sets (default 3); the\n"
            "                       time limit is per knob set\n"
            "  --quiet              no table on stdout\n"
            "  -h, --help           this text\n");
}

/* A usage error: rank 0 (verbose) says what is wrong; every rank returns -1. */
static int usage_error(int verbose, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(int verbose, const char *format, ...)
{
    if (verbose) {
        va_list args;
        va_start(args, format);
        fputs("loggp-probe: ", stderr);
        vfprintf(stderr, format, args);
        fputs("\n(see loggp-probe --help)\n", stderr);
        va_end(args);
    }
    return -1;
}

/* The options that take a value. */
static int takes_value(const char *a)
{
    static const char *const valued[] = {"--min-size", "--max-size", "--sizes", "--send-mode",
                                         "--recv-mode", "--json", "--rel-ci", "--abs-ci-ns",
                                         "--min-samples", "--max-samples", "--time-limit", "--burst",
                                         "--knob-set", "--rounds"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
        known |= !strcmp(a, valued[k]);
    return known;
}

/* --sizes: a comma-separated list of byte counts. */
static int parse_size_list(const char *v, options *o, int verbose)
{
    char *copy = strdup(v), *save = NULL;
    o->n_sizes = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->n_sizes >= MAX_SIZES) {
            free(copy);
            return usage_error(verbose, "too many --sizes (at most %d)", MAX_SIZES);
        }
        if (parse_bytes(tok, &o->sizes[o->n_sizes])) {
            if (verbose)
                fprintf(stderr, "loggp-probe: bad size '%s' in --sizes '%s'\n", tok, v);
            free(copy);
            return -1;
        }
        o->n_sizes++;
    }
    free(copy);
    if (o->n_sizes == 0)
        return usage_error(verbose, "empty --sizes '%s'", v);
    o->explicit_sizes = 1;
    return 0;
}

/* The index of v among names[0..n), or -1. */
static int mode_index(const char *v, const char *const *names, int n)
{
    int found = -1;
    for (int k = 0; k < n; k++)
        if (!strcmp(v, names[k]))
            found = k;
    return found;
}

/* What to measure: sizes and the point-to-point calls. Returns 1 when `a`
 * is not one of these options, else 0 or -1 (a usage error). */
static int parse_what_option(const char *a, const char *v, options *o, int verbose)
{
    if (!strcmp(a, "--min-size")) {
        if (parse_bytes(v, &o->min_size))
            return usage_error(verbose, "bad --min-size '%s' (expected bytes such as 64, 4K, 1MiB)", v);
    } else if (!strcmp(a, "--max-size")) {
        if (parse_bytes(v, &o->max_size) || o->max_size < 1)
            return usage_error(verbose, "bad --max-size '%s' (expected bytes >= 1 such as 64, 4K, 1MiB)", v);
    } else if (!strcmp(a, "--sizes")) {
        return parse_size_list(v, o, verbose);
    } else if (!strcmp(a, "--send-mode")) {
        int k = mode_index(v, send_mode_names, 3);
        if (k < 0)
            return usage_error(verbose, "bad --send-mode '%s' (expected send, isend or ssend)", v);
        o->send_mode = (enum send_mode)k;
    } else if (!strcmp(a, "--recv-mode")) {
        int k = mode_index(v, recv_mode_names, 2);
        if (k < 0)
            return usage_error(verbose, "bad --recv-mode '%s' (expected recv or irecv)", v);
        o->recv_mode = (enum recv_mode)k;
    } else if (!strcmp(a, "--json")) {
        if (!*v)
            return usage_error(verbose, "empty --json path");
        o->json_path = v;
    } else {
        return 1;
    }
    return 0;
}

/* How long to measure: confidence goals, sample counts, the time limit and
 * the burst. Returns 1 when `a` is not one of these options, else 0 or -1. */
static int parse_sampling_option(const char *a, const char *v, options *o, int verbose)
{
    double ns;
    if (!strcmp(a, "--rel-ci")) {
        if (parse_double(v, 0, 1, &o->rel_ci))
            return usage_error(verbose, "bad --rel-ci '%s' (expected a fraction in [0, 1])", v);
    } else if (!strcmp(a, "--abs-ci-ns")) {
        if (parse_double(v, 0, 1e9, &ns))
            return usage_error(verbose, "bad --abs-ci-ns '%s' (expected nanoseconds >= 0)", v);
        o->abs_ci_us = ns / 1000.0;
    } else if (!strcmp(a, "--min-samples")) {
        if (parse_int(v, 6, 1000000, &o->min_samples))
            return usage_error(verbose, "bad --min-samples '%s' (expected an integer >= 6)", v);
    } else if (!strcmp(a, "--max-samples")) {
        if (parse_int(v, 6, 1000000, &o->max_samples))
            return usage_error(verbose, "bad --max-samples '%s' (expected an integer >= 6)", v);
    } else if (!strcmp(a, "--time-limit")) {
        if (parse_double(v, 0, 86400, &o->time_limit_s))
            return usage_error(verbose, "bad --time-limit '%s' (expected seconds >= 0)", v);
    } else if (!strcmp(a, "--burst")) {
        if (parse_int(v, 2, 1024, &o->burst))
            return usage_error(verbose, "bad --burst '%s' (expected an integer in [2, 1024])", v);
    } else {
        return 1;
    }
    return 0;
}

/* Knob sets side by side: --knob-set and --rounds. Returns 1 when `a` is
 * not one of these options, else 0 or -1. */
static int parse_knob_set_option(const char *a, const char *v, options *o, int verbose, int *rounds_given)
{
    if (!strcmp(a, "--knob-set")) {
        char why[512];
        if (o->n_sets >= MAX_KNOB_SETS)
            return usage_error(verbose, "too many --knob-set (at most %d)", MAX_KNOB_SETS);
        if (parse_knob_set(v, &o->sets[o->n_sets], why, sizeof why) != 0)
            return usage_error(verbose, "bad --knob-set '%s': %s", v, why);
        o->set_specs[o->n_sets++] = v;
    } else if (!strcmp(a, "--rounds")) {
        if (parse_int(v, 1, 100, &o->rounds))
            return usage_error(verbose, "bad --rounds '%s' (expected an integer in [1, 100])", v);
        *rounds_given = 1;
    } else {
        return 1;
    }
    return 0;
}

/* Knob sets rewrite a knob file of their own between sets, which a running
 * libloggp.so must reread and no variable may override. */
static int check_knob_sets(const options *o, int verbose, int rounds_given)
{
    if (rounds_given && !o->n_sets)
        return usage_error(verbose, "--rounds applies to --knob-set runs only");
    if (!o->n_sets)
        return 0;
    const char *file = getenv("LOGGP_KNOB_FILE");
    if (!file || !*file)
        return usage_error(verbose, "--knob-set rewrites the knob file between sets: set LOGGP_KNOB_FILE to a "
                                    "file of its own (never your everyday knob file)");
    for (int k = 0; k < LOGGP_KNOB_COUNT; k++)
        if (getenv(loggp_knob_table[k].env))
            return usage_error(verbose, "%s is set and would override the knob sets (unset it)",
                               loggp_knob_table[k].env);
    if (!loggp_live_knobs)
        return usage_error(verbose, "--knob-set needs libloggp.so preloaded (run the probe under `loggp run`)");
    const char *live = getenv("LOGGP_LIVE");
    if (live && !strcmp(live, "0"))
        return usage_error(verbose, "LOGGP_LIVE=0 stops libloggp from rereading the knob file, which "
                                    "--knob-set needs");
    return 0;
}

/* Without --sizes: min_size, then powers of two above it, then max_size. */
static int default_sizes(options *o, int verbose)
{
    if (o->min_size > o->max_size)
        return usage_error(verbose, "--min-size %ld is larger than --max-size %ld", o->min_size, o->max_size);
    o->sizes[o->n_sizes++] = o->min_size;
    long p = 1;
    while (p <= o->min_size)
        p *= 2;
    for (; p < o->max_size && o->n_sizes < MAX_SIZES - 1; p *= 2)
        o->sizes[o->n_sizes++] = p;
    if (o->max_size > o->min_size)
        o->sizes[o->n_sizes++] = o->max_size;
    return 0;
}

/* With --sizes: the smallest and largest given. */
static void size_bounds(options *o)
{
    o->max_size = 0;
    o->min_size = LONG_MAX;
    for (int k = 0; k < o->n_sizes; k++) {
        if (o->sizes[k] > o->max_size)
            o->max_size = o->sizes[k];
        if (o->sizes[k] < o->min_size)
            o->min_size = o->sizes[k];
    }
}

/* Returns 0 to run, 1 for --help, -1 on a usage error (message already printed by
 * rank 0; `verbose` is false on other ranks). */
int parse_args(int argc, char **argv, options *o, int verbose)
{
    *o = (options){.min_size = 1, .max_size = 1L << 20, .refine = 1, .rel_ci = 0.02,
                   .abs_ci_us = 0.020, .min_samples = 11, .max_samples = 2000,
                   .time_limit_s = 4.0, .burst = 16, .rounds = 3};
    int rounds_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "--no-refine")) {
            o->refine = 0;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return usage_error(verbose, "unexpected argument '%s'", a);
        if (!takes_value(a))
            return usage_error(verbose, "unknown option '%s'", a);
        if (i + 1 >= argc)
            return usage_error(verbose, "option %s needs a value", a);
        const char *v = argv[++i];
        int rc = parse_what_option(a, v, o, verbose);
        if (rc == 1)
            rc = parse_sampling_option(a, v, o, verbose);
        if (rc == 1)
            rc = parse_knob_set_option(a, v, o, verbose, &rounds_given);
        if (rc == 1)
            return usage_error(verbose, "unknown option '%s'", a);
        if (rc < 0)
            return -1;
    }
    if (o->max_samples < o->min_samples)
        return usage_error(verbose, "--max-samples %d is below --min-samples %d", o->max_samples, o->min_samples);
    if (check_knob_sets(o, verbose, rounds_given))
        return -1;
    if (!o->explicit_sizes) {
        if (default_sizes(o, verbose))
            return -1;
    } else {
        o->refine = 0; /* explicit sizes are measured as given */
        size_bounds(o);
    }
    if (o->n_sets)
        o->refine = 0; /* every set measures the same sizes */
    return 0;
}
