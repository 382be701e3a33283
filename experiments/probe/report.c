/* Reporting: the table on stdout and the JSON file (written to a temporary file, then
 * renamed, so a reader never sees half of it). */
#define _POSIX_C_SOURCE 200809L

#include "probe.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *engine_hint(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return (preload && strstr(preload, "libloggp")) ? "libloggp preloaded" : "none";
}

static void print_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* One quantity of one size: median, CI and, over rounds, each round's median. */
static void print_ci_json(FILE *f, const char *name, const size_result *r, int size, size_t field,
                          const round_view *rv)
{
    median_ci m = *size_quantity(&r[size], field);
    fprintf(f, "\"%s\": {\"median\": %.6f, \"ci95_half\": %.6f, \"samples\": %zu, \"converged\": %s", name,
            m.median, isfinite(m.ci_half) ? m.ci_half : -1.0, m.n,
            ci_meets_target(m, opt.rel_ci, opt.abs_ci_us) ? "true" : "false");
    if (rv && rv->n_rounds > 1) {
        fprintf(f, ", \"rounds_us\": [");
        for (int k = 0; k < rv->n_rounds; k++)
            fprintf(f, "%.6f%s", size_quantity(&rv->rounds[k][size], field)->median,
                    k + 1 < rv->n_rounds ? ", " : "]");
    }
    fprintf(f, "}, ");
}

/* Knob values as the knob file writes them: {"o_s": "10us", ..., "G": "0ns/B"}. */
static void print_knobs_json(FILE *f, const loggp_knobs *k)
{
    fputc('{', f);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char text[64];
        loggp_format_knob((loggp_knob_id)i, k->ps[i], text, sizeof text);
        fprintf(f, "\"%s\": \"%s\"%s", loggp_knob_table[i].name, text, i + 1 < LOGGP_KNOB_COUNT ? ", " : "}");
    }
}

static int send_waits(void) { return opt.send_mode != SEND_NONBLOCKING; }

/* Why L reads as it does: where it comes from, and why it was clamped. */
static void describe_latency(const summary *s, char *buf, size_t len)
{
    if (s->L_clamped)
        snprintf(buf, len,
                 "clamped at 0: T - o_s - o_r - (m-1)G over %ld..%ld B is %.3f us (95%% CI +-%.3f); a latency "
                 "cannot be negative, and o_s, o_r timed apart from T carry costs of their own (o_r after an "
                 "idle wait%s)",
                 s->L_lo, s->L_hi, s->L_raw, s->L_ci_half,
                 opt.recv_mode == RECV_BLOCKING ? ", on the unexpected-message path" : "");
    else
        snprintf(buf, len, "median of T - o_s - o_r - (m-1)G over %ld..%ld B, before the protocol switch",
                 s->L_lo, s->L_hi);
}

/* "summary" and "sizes" of one result, each line indented by `pad`. */
static void write_result_json(FILE *f, const size_result *r, int n, const summary *s, const round_view *rv,
                              const char *pad)
{
    char note[512];
    describe_latency(s, note, sizeof note);
    fprintf(f, "%s\"summary\": {\"L_us\": %.6f, \"L_unclamped_us\": %.6f, \"L_clamped\": %s, "
               "\"L_from_bytes\": [%ld, %ld], \"L_note\": ",
            pad, s->L_us, s->L_raw, s->L_clamped ? "true" : "false", s->L_lo, s->L_hi);
    print_json_string(f, note);
    fprintf(f, ", \"protocol_switch_bytes\": ");
    if (s->switch_index < n)
        fprintf(f, "%ld", r[s->switch_index].bytes);
    else
        fprintf(f, "null");
    unsigned past = columns_past_switch(send_waits());
    fprintf(f, ", \"not_meaningful_past_switch\": [%s\"o_r_us\", \"L_us\"],\n%s  ",
            past & COLUMN_O_S ? "\"o_s_us\", " : "", pad);
    fprintf(f, "\"G_ns_per_byte\": %.6f, \"G_unclamped_ns_per_byte\": %.6f, "
               "\"G_clamped\": %s, \"G_fit_bytes\": [%ld, %ld], \"o_s_us\": %.6f, \"o_r_us\": %.6f, "
               "\"g_us\": %.6f, \"T_us\": %.6f, \"at_bytes\": %ld},\n",
            s->G_ns_per_byte, s->G_raw, s->G_clamped ? "true" : "false", (long)s->G_lo,
            (long)s->G_hi, r[0].o_s.median, r[0].o_r.median, r[0].g.median, r[0].T.median, r[0].bytes);
    fprintf(f, "%s\"sizes\": [\n", pad);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s  {\"bytes\": %ld, \"refined\": %s, \"past_switch\": %s, ", pad, r[i].bytes,
                r[i].refined ? "true" : "false", i >= s->switch_index ? "true" : "false");
        print_ci_json(f, "T_us", r, i, offsetof(size_result, T), rv);
        print_ci_json(f, "o_s_us", r, i, offsetof(size_result, o_s), rv);
        print_ci_json(f, "o_r_us", r, i, offsetof(size_result, o_r), rv);
        print_ci_json(f, "g_us", r, i, offsetof(size_result, g), rv);
        double latency = size_latency_us(&r[i], i, s);
        fprintf(f, "\"residual_us\": %.6f, \"L_us\": ", r[i].L_us);
        if (isnan(latency))
            fprintf(f, "null");
        else
            fprintf(f, "%.6f", latency);
        fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(f, "%s]", pad);
}

int write_json(const char *path, const results *out, int np)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 16);
    snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "loggp-probe: cannot create a temporary file next to '%s': %s\n", path,
                strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    char *nl = strchr(version, '\n');
    if (nl)
        *nl = 0;
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    fprintf(f, "{\n  \"schema\": \"loggp-probe/1\",\n  \"probe_version\": \"%s\",\n", PROBE_VERSION);
    fprintf(f, "  \"mpi_library\": ");
    print_json_string(f, version);
    fprintf(f, ",\n  \"host\": ");
    print_json_string(f, host);
    fprintf(f, ",\n  \"np\": %d,\n  \"preload\": \"%s\",\n", np, engine_hint());
    fprintf(f, "  \"send_mode\": \"%s\",\n  \"recv_mode\": \"%s\",\n", send_mode_names[opt.send_mode],
            recv_mode_names[opt.recv_mode]);
    fprintf(f, "  \"clock\": \"CLOCK_MONOTONIC\",\n  \"clock_resolution_ns\": %ld,\n",
            (long)res.tv_nsec + 1000000000L * (long)res.tv_sec);
    fprintf(f, "  \"burst\": %d,\n", opt.burst);
    fprintf(f, "  \"target\": {\"confidence\": 0.95, \"rel\": %g, \"abs_us\": %g, \"min_samples\": %d, "
               "\"max_samples\": %d, \"time_limit_s\": %g},\n",
            opt.rel_ci, opt.abs_ci_us, opt.min_samples, opt.max_samples, opt.time_limit_s);
    fprintf(f, "  \"elapsed_s\": %.3f,\n", out->elapsed_s);
    if (!out->sets) {
        fprintf(f, "  \"knobs\": ");
        if (out->knobs)
            print_knobs_json(f, out->knobs);
        else
            fprintf(f, "null");
        fprintf(f, ",\n  \"knobs_source\": ");
        print_json_string(f, out->knobs_source);
        fprintf(f, ",\n");
        write_result_json(f, out->res[0], out->n[0], &out->s[0], NULL, "  ");
        fprintf(f, "\n}\n");
    } else {
        fprintf(f, "  \"rounds\": %d,\n  \"knob_sets\": [\n", opt.rounds);
        for (int k = 0; k < out->sets; k++) {
            fprintf(f, "    {\"spec\": ");
            print_json_string(f, opt.set_specs[k]);
            fprintf(f, ", \"knobs\": ");
            print_knobs_json(f, &opt.sets[k]);
            fprintf(f, ",\n");
            write_result_json(f, out->res[k], out->n[k], &out->s[k], &out->rv[k], "     ");
            fprintf(f, "}%s\n", k + 1 < out->sets ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
    }
    int bad = ferror(f);
    bad |= fflush(f) != 0;
    bad |= fsync(fd) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "loggp-probe: cannot write '%s': %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}


void print_table(const size_result *res, int n, const summary *s, int np, const char *set_spec)
{
    printf("# loggp-probe %s  np=%d  send=%s recv=%s  (medians, us; +- is the 95%% CI)\n", PROBE_VERSION, np,
           send_mode_names[opt.send_mode], recv_mode_names[opt.recv_mode]);
    if (set_spec)
        printf("# knob set %s: medians of %d interleaved rounds, +- the widest round's CI\n", set_spec,
               opt.rounds);
    printf("%9s %18s %17s %17s %18s %9s\n", "bytes", "T(m)", "o_s(m)", "o_r(m)", "g(m)", "L(m)");
    unsigned past = columns_past_switch(send_waits());
    for (int i = 0; i < n; i++) {
        int marked = i >= s->switch_index;
        char latency[32];
        double l = size_latency_us(&res[i], i, s);
        if (isnan(l))
            snprintf(latency, sizeof latency, marked ? "n/a*" : "n/a");
        else
            snprintf(latency, sizeof latency, "%.3f", l);
        printf("%9ld %10.3f+-%-6.3f %8.3f+-%-6.3f%c %8.3f+-%-6.3f%c %10.3f+-%-6.3f %9s%s\n", res[i].bytes,
               res[i].T.median, res[i].T.ci_half, res[i].o_s.median, res[i].o_s.ci_half,
               marked && (past & COLUMN_O_S) ? '*' : ' ', res[i].o_r.median, res[i].o_r.ci_half,
               marked && (past & COLUMN_O_R) ? '*' : ' ', res[i].g.median, res[i].g.ci_half, latency,
               res[i].refined ? "  (refined)" : "");
    }
    if (s->switch_index < n)
        printf("* past the protocol switch (from %ld B): the receive joins a handshake and moves the data,\n"
               "  so o_r(m)%s completion time%s, not overhead%s; T - o_s - o_r is no latency there (n/a).\n"
               "  T(m) and g(m) keep their meaning.\n",
               res[s->switch_index].bytes, past & COLUMN_O_S ? " and o_s(m) (the send waits for it) are" : " is a",
               past & COLUMN_O_S ? "s" : "", past & COLUMN_O_S ? "s" : "");
    int beyond_noise = 0;
    for (int i = 0; i < s->switch_index && i < n; i++)
        beyond_noise |= overheads_exceed_one_way(&res[i]);
    if (beyond_noise)
        printf("n/a: o_s + o_r exceed T there by more than their noise; a call waited for the peer (or was\n"
               "  disturbed), so T - o_s - o_r is no latency.\n");
    char note[512];
    describe_latency(s, note, sizeof note);
    printf("L = %.3f us (%s)\n", s->L_us, note);
    printf("G = %.5f ns/B%s (g(m) slope over %ld..%ld B)\n", s->G_ns_per_byte,
           s->G_clamped ? " (clamped from negative)" : "", (long)s->G_lo, (long)s->G_hi);
}
