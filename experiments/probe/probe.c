/* loggp-probe: measures the LogGP signature of an MPI library between rank 0 and rank 1.
 *
 * Rank 0 drives every measurement; rank 1 is a server that runs whatever rank 0 asks
 * (one control message per batch), so that rank 0 alone decides when a median is
 * precise enough. Per message size m it measures, with the methods of Kielmann et al.
 * and Netgauge's parameterized round trips (see experiments/README.md):
 *   T(m)   half round trip of a ping-pong, sends spaced so the gap never stalls them
 *   g(m)   (t(n) - t(1)) / (n - 1) for a burst of n back-to-back sends plus one ack;
 *          the ack's latency appears in both terms and cancels
 *   o_s(m) duration of the send call, sender idle for longer than the gap beforehand
 *   o_r(m) duration of the receive call after waiting long enough for the message
 *          to have arrived, so latency cannot leak into it
 *   L      T(m) - o_s(m) - o_r(m) - (m-1)G on small messages
 *   G      least-squares slope of g(m) against m over the largest sizes
 * With --knob-set it measures the whole signature once per libloggp knob set, in
 * interleaved rounds within one run, so sets are compared side by side.
 */
#define _POSIX_C_SOURCE 200809L

#include "knobs.h"
#include "stats.h"

#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_VERSION "0.1.0"
#define MAX_SIZES 256
#define MAX_KNOB_SETS 16
/* libloggp rereads its knob file every 4 ms; a set not in force after this is an error. */
#define KNOB_TAKEUP_LIMIT_US 2e6
#define EXIT_USAGE 2

enum { TAG_DATA = 1, TAG_ACK = 2, TAG_TOKEN = 3, TAG_CTRL = 4 };
enum { CMD_QUIT = 0, CMD_BURST, CMD_PINGPONG, CMD_SEND_OVERHEAD, CMD_RECV_OVERHEAD, CMD_KNOBS };
enum send_mode { SEND_BLOCKING, SEND_NONBLOCKING, SEND_SYNCHRONOUS };
enum recv_mode { RECV_BLOCKING, RECV_NONBLOCKING };
static const char *const send_mode_names[] = {"send", "isend", "ssend"};
static const char *const recv_mode_names[] = {"recv", "irecv"};

typedef struct {
    long sizes[MAX_SIZES];
    int n_sizes;
    int explicit_sizes;
    long min_size, max_size;
    int refine;
    enum send_mode send_mode;
    enum recv_mode recv_mode;
    const char *json_path;
    double rel_ci;       /* CI half-width target, relative */
    double abs_ci_us;    /* ... or absolute, whichever is larger */
    int min_samples, max_samples;
    double time_limit_s; /* measurement budget; min_samples always wins */
    int burst;
    int quiet;
    int n_sets, rounds; /* knob sets measured side by side, in this many rounds */
    loggp_knobs sets[MAX_KNOB_SETS];
    const char *set_specs[MAX_KNOB_SETS];
} options;

typedef struct {
    median_ci T, o_s, o_r, g;
    double L_us; /* T - o_s - o_r, before the (m-1)G correction */
    int refined;
    long bytes;
} size_result;

/* ---------------------------------------------------------------- timing */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Waits before timed operations need no precision, only "at least this long"; yielding
 * lets the peer rank run when both share a core on a busy machine (otherwise it would
 * get the CPU only at the end of our time slice, milliseconds later). */
static void wait_until(double t_us)
{
    while (now_us() < t_us)
        sched_yield();
}

/* Sends of this process are spaced by at least `pace_us` (from the end of one posting
 * call to the start of the next) outside bursts, so a gap knob never stalls a timed send. */
static double last_send_end_us;
static double pace_us;
/* Pace beyond the gap: emulators (libloggp among them) count up to 2 us of a rank's own
 * time between messages toward the gap, so an idle period must exceed gap + 2 us. */
#define PACE_SLACK_US 3.0

static void pace(void) { wait_until(last_send_end_us + pace_us); }

/* ---------------------------------------------------------------- parsing */

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

/* The knobs libloggp.so has in force in this process, when it is preloaded (a weak
 * reference: NULL otherwise). Lets each rank confirm a knob set before it is measured. */
extern void loggp_live_knobs(loggp_knobs *out) __attribute__((weak));

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

static void usage(FILE *out)
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

/* Returns 0 to run, 1 for --help, -1 on a usage error (message already printed by
 * rank 0; `verbose` is false on other ranks). */
static int parse_args(int argc, char **argv, options *o, int verbose)
{
    *o = (options){.min_size = 1, .max_size = 1L << 20, .refine = 1, .rel_ci = 0.02,
                   .abs_ci_us = 0.020, .min_samples = 11, .max_samples = 2000,
                   .time_limit_s = 4.0, .burst = 16, .rounds = 3};
    int rounds_given = 0;
#define FAIL(...)                                                   \
    do {                                                            \
        if (verbose) {                                              \
            fprintf(stderr, "loggp-probe: " __VA_ARGS__);           \
            fprintf(stderr, "\n(see loggp-probe --help)\n");        \
        }                                                           \
        return -1;                                                  \
    } while (0)
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
            FAIL("unexpected argument '%s'", a);
        static const char *const valued[] = {"--min-size", "--max-size", "--sizes", "--send-mode",
                                             "--recv-mode", "--json", "--rel-ci", "--abs-ci-ns",
                                             "--min-samples", "--max-samples", "--time-limit", "--burst",
                                             "--knob-set", "--rounds"};
        int known = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            known |= !strcmp(a, valued[k]);
        if (!known)
            FAIL("unknown option '%s'", a);
        if (i + 1 >= argc)
            FAIL("option %s needs a value", a);
        const char *v = argv[++i];
        double ns;
        if (!strcmp(a, "--min-size")) {
            if (parse_bytes(v, &o->min_size))
                FAIL("bad --min-size '%s' (expected bytes such as 64, 4K, 1MiB)", v);
        } else if (!strcmp(a, "--max-size")) {
            if (parse_bytes(v, &o->max_size) || o->max_size < 1)
                FAIL("bad --max-size '%s' (expected bytes >= 1 such as 64, 4K, 1MiB)", v);
        } else if (!strcmp(a, "--sizes")) {
            char *copy = strdup(v), *save = NULL;
            o->n_sizes = 0;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (o->n_sizes >= MAX_SIZES) {
                    free(copy);
                    FAIL("too many --sizes (at most %d)", MAX_SIZES);
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
                FAIL("empty --sizes '%s'", v);
            o->explicit_sizes = 1;
        } else if (!strcmp(a, "--send-mode")) {
            int found = 0;
            for (int k = 0; k < 3; k++)
                if (!strcmp(v, send_mode_names[k])) {
                    o->send_mode = (enum send_mode)k;
                    found = 1;
                }
            if (!found)
                FAIL("bad --send-mode '%s' (expected send, isend or ssend)", v);
        } else if (!strcmp(a, "--recv-mode")) {
            int found = 0;
            for (int k = 0; k < 2; k++)
                if (!strcmp(v, recv_mode_names[k])) {
                    o->recv_mode = (enum recv_mode)k;
                    found = 1;
                }
            if (!found)
                FAIL("bad --recv-mode '%s' (expected recv or irecv)", v);
        } else if (!strcmp(a, "--json")) {
            if (!*v)
                FAIL("empty --json path");
            o->json_path = v;
        } else if (!strcmp(a, "--rel-ci")) {
            if (parse_double(v, 0, 1, &o->rel_ci))
                FAIL("bad --rel-ci '%s' (expected a fraction in [0, 1])", v);
        } else if (!strcmp(a, "--abs-ci-ns")) {
            if (parse_double(v, 0, 1e9, &ns))
                FAIL("bad --abs-ci-ns '%s' (expected nanoseconds >= 0)", v);
            o->abs_ci_us = ns / 1000.0;
        } else if (!strcmp(a, "--min-samples")) {
            if (parse_int(v, 6, 1000000, &o->min_samples))
                FAIL("bad --min-samples '%s' (expected an integer >= 6)", v);
        } else if (!strcmp(a, "--max-samples")) {
            if (parse_int(v, 6, 1000000, &o->max_samples))
                FAIL("bad --max-samples '%s' (expected an integer >= 6)", v);
        } else if (!strcmp(a, "--time-limit")) {
            if (parse_double(v, 0, 86400, &o->time_limit_s))
                FAIL("bad --time-limit '%s' (expected seconds >= 0)", v);
        } else if (!strcmp(a, "--burst")) {
            if (parse_int(v, 2, 1024, &o->burst))
                FAIL("bad --burst '%s' (expected an integer in [2, 1024])", v);
        } else if (!strcmp(a, "--knob-set")) {
            char why[512];
            if (o->n_sets >= MAX_KNOB_SETS)
                FAIL("too many --knob-set (at most %d)", MAX_KNOB_SETS);
            if (parse_knob_set(v, &o->sets[o->n_sets], why, sizeof why) != 0)
                FAIL("bad --knob-set '%s': %s", v, why);
            o->set_specs[o->n_sets++] = v;
        } else if (!strcmp(a, "--rounds")) {
            if (parse_int(v, 1, 100, &o->rounds))
                FAIL("bad --rounds '%s' (expected an integer in [1, 100])", v);
            rounds_given = 1;
        } else {
            FAIL("unknown option '%s'", a);
        }
    }
    if (o->max_samples < o->min_samples)
        FAIL("--max-samples %d is below --min-samples %d", o->max_samples, o->min_samples);
    if (rounds_given && !o->n_sets)
        FAIL("--rounds applies to --knob-set runs only");
    if (o->n_sets) {
        const char *file = getenv("LOGGP_KNOB_FILE");
        if (!file || !*file)
            FAIL("--knob-set rewrites the knob file between sets: set LOGGP_KNOB_FILE to a file "
                 "of its own (never your everyday knob file)");
        for (int k = 0; k < LOGGP_KNOB_COUNT; k++)
            if (getenv(loggp_knob_table[k].env))
                FAIL("%s is set and would override the knob sets (unset it)", loggp_knob_table[k].env);
        if (!loggp_live_knobs)
            FAIL("--knob-set needs libloggp.so preloaded (run the probe under `loggp run`)");
        const char *live = getenv("LOGGP_LIVE");
        if (live && !strcmp(live, "0"))
            FAIL("LOGGP_LIVE=0 stops libloggp from rereading the knob file, which --knob-set needs");
    }
    if (!o->explicit_sizes) {
        if (o->min_size > o->max_size)
            FAIL("--min-size %ld is larger than --max-size %ld", o->min_size, o->max_size);
        /* min_size, then powers of two above it, then max_size. */
        o->sizes[o->n_sizes++] = o->min_size;
        long p = 1;
        while (p <= o->min_size)
            p *= 2;
        for (; p < o->max_size && o->n_sizes < MAX_SIZES - 1; p *= 2)
            o->sizes[o->n_sizes++] = p;
        if (o->max_size > o->min_size)
            o->sizes[o->n_sizes++] = o->max_size;
    } else {
        o->refine = 0; /* explicit sizes are measured as given */
    }
    if (o->n_sets)
        o->refine = 0; /* every set measures the same sizes */
    if (o->explicit_sizes) {
        o->max_size = 0;
        o->min_size = LONG_MAX;
        for (int k = 0; k < o->n_sizes; k++) {
            if (o->sizes[k] > o->max_size)
                o->max_size = o->sizes[k];
            if (o->sizes[k] < o->min_size)
                o->min_size = o->sizes[k];
        }
    }
    return 0;
#undef FAIL
}

/* ---------------------------------------------------------------- messaging */

static options opt;
static char *send_buf, *recv_buf; /* recv_buf holds one slot per burst message */
static MPI_Request *burst_reqs;

/* A complete send in the chosen mode; returns when the posting call returned. */
static void send_message(long m, int peer)
{
    MPI_Request req;
    switch (opt.send_mode) {
    case SEND_BLOCKING:
        MPI_Send(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        last_send_end_us = now_us();
        break;
    case SEND_SYNCHRONOUS:
        MPI_Ssend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        last_send_end_us = now_us();
        break;
    case SEND_NONBLOCKING:
        MPI_Isend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        last_send_end_us = now_us();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    }
}

/* Posts a receive in irecv mode (to be completed by finish_receive); no-op in recv mode. */
static void prepost_receive(long m, int peer, MPI_Request *req)
{
    if (opt.recv_mode == RECV_NONBLOCKING)
        MPI_Irecv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
}

static void finish_receive(long m, int peer, MPI_Request *req)
{
    if (opt.recv_mode == RECV_NONBLOCKING)
        MPI_Wait(req, MPI_STATUS_IGNORE);
    else
        MPI_Recv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void send_control(int peer, int tag)
{
    MPI_Send(NULL, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    last_send_end_us = now_us();
}

static void recv_control(int peer, int tag)
{
    MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Receives a burst of n messages of m bytes (rank 1 side). */
static void receive_burst(long m, int n, int peer)
{
    if (opt.recv_mode == RECV_NONBLOCKING) {
        for (int i = 0; i < n; i++)
            MPI_Irecv(recv_buf + (size_t)i * (size_t)opt.max_size, (int)m, MPI_BYTE, peer,
                      TAG_DATA, MPI_COMM_WORLD, &burst_reqs[i]);
        MPI_Waitall(n, burst_reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < n; i++)
            MPI_Recv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Sends a burst of n messages back to back (rank 0 side). */
static void send_burst(long m, int n, int peer)
{
    if (opt.send_mode == SEND_NONBLOCKING) {
        for (int i = 0; i < n; i++)
            MPI_Isend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &burst_reqs[i]);
        last_send_end_us = now_us();
        MPI_Waitall(n, burst_reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < n; i++)
            send_message(m, peer);
    }
}

/* Waits until this rank's libloggp has knob set k in force; -1 after the limit. */
static int await_knob_set(int k)
{
    double give_up = now_us() + KNOB_TAKEUP_LIMIT_US;
    for (;;) {
        loggp_knobs now;
        loggp_live_knobs(&now);
        if (!memcmp(now.ps, opt.sets[k].ps, sizeof now.ps))
            return 0;
        if (now_us() > give_up)
            return -1;
        struct timespec nap = {0, 500000};
        nanosleep(&nap, NULL);
    }
}

/* ---------------------------------------------------------------- rank 1: server */

typedef struct {
    double cmd, bytes, count, pace_us, burst;
} command;

static void serve(void)
{
    const int driver = 0;
    for (;;) {
        command c;
        MPI_Recv(&c, 5, MPI_DOUBLE, driver, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cmd = (int)c.cmd, count = (int)c.count, burst = (int)c.burst;
        long m = (long)c.bytes;
        /* The driver's sends, which start every exchange, are spaced by the full pace, so
         * ours follow at about that spacing; pacing ours at 0.8 of it (still gap + 2.4 us)
         * leaves room for jitter, so we never wait inside a timed round trip. */
        pace_us = 0.8 * c.pace_us;
        MPI_Request req;
        switch (cmd) {
        case CMD_QUIT:
            return;
        case CMD_KNOBS: {
            int ok = count >= 0 && count < opt.n_sets && await_knob_set(count) == 0;
            MPI_Send(&ok, 1, MPI_INT, driver, TAG_ACK, MPI_COMM_WORLD);
            break;
        }
        case CMD_BURST:
            /* Iterations alternate a burst of `burst` messages and a single message. */
            for (int i = 0; i < count; i++) {
                receive_burst(m, (i % 2 == 0) ? burst : 1, driver);
                pace();
                send_control(driver, TAG_ACK);
            }
            break;
        case CMD_PINGPONG:
            for (int i = 0; i < count; i++) {
                prepost_receive(m, driver, &req);
                finish_receive(m, driver, &req);
                pace();
                send_message(m, driver);
            }
            break;
        case CMD_SEND_OVERHEAD:
            for (int i = 0; i < count; i++) {
                prepost_receive(m, driver, &req);
                pace();
                send_control(driver, TAG_TOKEN);
                finish_receive(m, driver, &req);
            }
            break;
        case CMD_RECV_OVERHEAD:
            for (int i = 0; i < count; i++) {
                recv_control(driver, TAG_TOKEN);
                pace();
                send_message(m, driver);
            }
            break;
        }
    }
}

/* ---------------------------------------------------------------- rank 0: driver */

static const int server = 1;
static double phase_budget_s;

static void command_server(int cmd, long m, int count, int burst)
{
    command c = {cmd, (double)m, count, pace_us, burst};
    pace();
    MPI_Send(&c, 5, MPI_DOUBLE, server, TAG_CTRL, MPI_COMM_WORLD);
    last_send_end_us = now_us();
}

/* One batch of `count` samples of a phase; samples are written to out (and out2 for the
 * burst phase, which alternates t(n) and t(1)). */
static void run_batch(int cmd, long m, int count, double recv_wait_us, double *out, double *out2)
{
    command_server(cmd, m, count, opt.burst);
    MPI_Request req;
    for (int i = 0; i < count; i++) {
        double t0, t1;
        switch (cmd) {
        case CMD_BURST: {
            int n = (i % 2 == 0) ? opt.burst : 1;
            pace();
            t0 = now_us();
            send_burst(m, n, server);
            recv_control(server, TAG_ACK);
            t1 = now_us();
            /* the next burst starts a pace after the last reception, not the last
             * send, so a receiver-side gap left by this one cannot stall it */
            last_send_end_us = t1;
            if (i % 2 == 0)
                out[i / 2] = t1 - t0;
            else
                out2[i / 2] = t1 - t0;
            break;
        }
        case CMD_PINGPONG:
            prepost_receive(m, server, &req);
            pace();
            t0 = now_us();
            send_message(m, server);
            finish_receive(m, server, &req);
            t1 = now_us();
            out[i] = 0.5 * (t1 - t0);
            break;
        case CMD_SEND_OVERHEAD:
            recv_control(server, TAG_TOKEN);
            pace();
            t0 = now_us();
            switch (opt.send_mode) {
            case SEND_BLOCKING:
                MPI_Send(send_buf, (int)m, MPI_BYTE, server, TAG_DATA, MPI_COMM_WORLD);
                break;
            case SEND_SYNCHRONOUS:
                MPI_Ssend(send_buf, (int)m, MPI_BYTE, server, TAG_DATA, MPI_COMM_WORLD);
                break;
            case SEND_NONBLOCKING:
                MPI_Isend(send_buf, (int)m, MPI_BYTE, server, TAG_DATA, MPI_COMM_WORLD, &req);
                break;
            }
            t1 = now_us();
            last_send_end_us = t1;
            if (opt.send_mode == SEND_NONBLOCKING)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            out[i] = t1 - t0;
            break;
        case CMD_RECV_OVERHEAD:
            prepost_receive(m, server, &req);
            pace();
            send_control(server, TAG_TOKEN);
            /* Long enough for the token to arrive and the message to come back. */
            wait_until(now_us() + recv_wait_us);
            t0 = now_us();
            finish_receive(m, server, &req);
            t1 = now_us();
            out[i] = t1 - t0;
            break;
        }
    }
}

static median_ci summarize(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof *x);
    return median_with_ci(scratch, n);
}

/* Samples a phase in growing batches until the median's CI meets the target, the sample
 * cap is reached, or the phase's time budget is spent (never fewer than min_samples). */
static median_ci measure_once(int cmd, long m, double recv_wait_us)
{
    size_t cap = (size_t)opt.max_samples;
    double *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b), *s = malloc(cap * sizeof *s);
    size_t n = 0;
    int batch = 4;
    double start = now_us();
    median_ci r;
    for (;;) {
        if ((size_t)batch > cap - n)
            batch = (int)(cap - n);
        if (cmd == CMD_BURST) {
            run_batch(cmd, m, 2 * batch, recv_wait_us, a + n, b + n);
        } else {
            run_batch(cmd, m, batch, recv_wait_us, a + n, NULL);
        }
        n += (size_t)batch;
        if (cmd == CMD_BURST) {
            median_ci tn = summarize(a, n, s), t1 = summarize(b, n, s);
            double k = opt.burst - 1;
            r.median = (tn.median - t1.median) / k;
            r.ci_half = sqrt(tn.ci_half * tn.ci_half + t1.ci_half * t1.ci_half) / k;
            r.n = n;
        } else {
            r = summarize(a, n, s);
        }
        int enough = n >= (size_t)opt.min_samples;
        if (enough && ci_meets_target(r, opt.rel_ci, opt.abs_ci_us))
            break;
        if (n >= cap || (enough && (now_us() - start) * 1e-6 > phase_budget_s))
            break;
        if (batch < 64)
            batch *= 2;
    }
    free(a);
    free(b);
    free(s);
    return r;
}

/* A phase whose CI stays wider than 10 % was most likely stalled as a whole (both ranks on
 * one core of a busy machine, descheduled for milliseconds): it is measured again, at
 * most twice, and the attempt with the narrowest CI is kept. */
static median_ci measure(int cmd, long m, double recv_wait_us)
{
    median_ci best = measure_once(cmd, m, recv_wait_us);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (ci_meets_target(best, 0.10, 10 * opt.abs_ci_us))
            break;
        median_ci again = measure_once(cmd, m, recv_wait_us);
        if (!(again.ci_half >= best.ci_half))
            best = again;
    }
    return best;
}

static double t_zero_us; /* half round trip of an empty message, for receive waits */
static int current_set = -1; /* knob set in force (--knob-set), -1: none */

/* LogGP's idle time before a timed receive under knob set k, for m bytes, beyond the
 * machine's own: half the knobs' added round trip (T(0) + T(m)) and 1.25 of their
 * added gap (the pace), as the wait formula below has it. */
static double knob_idle_us(int k, long m)
{
    const int64_t *ps = opt.sets[k].ps;
    double per_byte = m > 1 ? (double)(m - 1) * (double)ps[LOGGP_KNOB_GAP_PER_BYTE] * 1e-6 : 0;
    double one_way = (double)(ps[LOGGP_KNOB_O_S] + ps[LOGGP_KNOB_O_R] + ps[LOGGP_KNOB_LATENCY]) * 1e-6;
    double gap = fmax((double)ps[LOGGP_KNOB_GAP], fmax((double)ps[LOGGP_KNOB_O_S], (double)ps[LOGGP_KNOB_O_R])) * 1e-6;
    return 0.5 * (2 * one_way + per_byte) + 1.25 * (gap + per_byte);
}

/* A receive after a longer idle may cost more (caches and predictors go cold), so with
 * knob sets every set idles as long as the set that idles longest: otherwise the knobs
 * could seem to raise o_r. */
static double idle_equalizer_us(long m)
{
    if (current_set < 0)
        return 0;
    double longest = 0;
    for (int k = 0; k < opt.n_sets; k++)
        longest = fmax(longest, knob_idle_us(k, m));
    return longest - knob_idle_us(current_set, m);
}

static void measure_size(long m, size_result *res)
{
    res->bytes = m;
    /* The gap first: its estimate paces every later timed send. */
    res->g = measure(CMD_BURST, m, 0);
    double gap = fmax(res->g.median, 0);
    pace_us = 1.25 * gap + PACE_SLACK_US;
    res->T = measure(CMD_PINGPONG, m, 0);
    res->o_s = measure(CMD_SEND_OVERHEAD, m, 0);
    double wait = 1.5 * (t_zero_us + res->T.median) + pace_us + 2.0 + idle_equalizer_us(m);
    res->o_r = measure(CMD_RECV_OVERHEAD, m, wait);
    res->L_us = res->T.median - res->o_s.median - res->o_r.median;
}

static int by_bytes(const void *a, const void *b)
{
    long x = ((const size_result *)a)->bytes, y = ((const size_result *)b)->bytes;
    return (x > y) - (x < y);
}

/* Relative departure of point c from the straight line through a and b (extrapolated). */
static double bend(double xa, double ya, double xb, double yb, double xc, double yc, double floor_us)
{
    double pred = yb + (yb - ya) * (xc - xb) / (xb - xa);
    double dev = fabs(yc - pred);
    return dev <= floor_us ? 0 : dev / fmax(fabs(yc), 1e-9);
}

/* Where the curve bends: T or g departs from the straight line through the two sizes
 * below by more than 10 % (and 0.3 us, to stay above on-node noise). Writes the index of
 * the upper size of each bend into `at`, strongest first; returns how many. */
static int find_bends(const size_result *r, int n, int *at, int max_bends)
{
    double score[MAX_SIZES] = {0};
    for (int i = 2; i < n; i++) {
        const size_result *a = &r[i - 2], *b = &r[i - 1], *c = &r[i];
        if (c->bytes - b->bytes < 2)
            continue;
        double s = fmax(bend((double)a->bytes, a->T.median, (double)b->bytes, b->T.median,
                             (double)c->bytes, c->T.median, 0.3),
                        bend((double)a->bytes, a->g.median, (double)b->bytes, b->g.median,
                             (double)c->bytes, c->g.median, 0.3));
        score[i] = s > 0.10 ? s : 0;
    }
    int k = 0;
    while (k < max_bends) {
        int pick = -1;
        for (int i = 2; i < n; i++)
            if (score[i] > 0 && (pick < 0 || score[i] > score[pick]))
                pick = i;
        if (pick < 0)
            break;
        score[pick] = 0;
        at[k++] = pick;
    }
    return k;
}

/* Bisects the interval (lo, hi) of a bend `steps` times, each time keeping the half where
 * T changes more, so a protocol switch is located to 1/2^steps of the interval. */
static int bisect_bend(size_result lo, size_result hi, int steps, size_result *out)
{
    int k = 0;
    for (int step = 0; step < steps; step++) {
        long mid = lo.bytes + (hi.bytes - lo.bytes) / 2;
        if (mid > 64)
            mid -= mid % 8; /* aligned sizes, as applications send */
        if (mid <= lo.bytes || mid >= hi.bytes)
            break;
        measure_size(mid, &out[k]);
        out[k].refined = 1;
        if (fabs(out[k].T.median - lo.T.median) >= fabs(hi.T.median - out[k].T.median))
            hi = out[k];
        else
            lo = out[k];
        k++;
    }
    return k;
}

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

typedef struct {
    double L_us, G_ns_per_byte, G_raw, G_lo, G_hi;
    int G_clamped;
} summary;

/* The quantity at byte offset `field` (offsetof(size_result, T), ...) of a result. */
static const median_ci *quantity(const size_result *r, size_t field)
{
    return (const median_ci *)((const char *)r + field);
}

/* One set's results over rounds: the medians of each round, per size (NULL: one run). */
typedef struct {
    const size_result *const *rounds;
    int n_rounds;
} round_view;

/* One quantity of one size: median, CI and, over rounds, each round's median. */
static void print_ci_json(FILE *f, const char *name, const size_result *r, int size, size_t field,
                          const round_view *rv)
{
    median_ci m = *quantity(&r[size], field);
    fprintf(f, "\"%s\": {\"median\": %.6f, \"ci95_half\": %.6f, \"samples\": %zu, \"converged\": %s", name,
            m.median, isfinite(m.ci_half) ? m.ci_half : -1.0, m.n,
            ci_meets_target(m, opt.rel_ci, opt.abs_ci_us) ? "true" : "false");
    if (rv && rv->n_rounds > 1) {
        fprintf(f, ", \"rounds_us\": [");
        for (int k = 0; k < rv->n_rounds; k++)
            fprintf(f, "%.6f%s", quantity(&rv->rounds[k][size], field)->median,
                    k + 1 < rv->n_rounds ? ", " : "]");
    }
    fprintf(f, "}, ");
}

/* "summary" and "sizes" of one result, each line indented by `pad`. */
static void write_result_json(FILE *f, const size_result *r, int n, const summary *s, const round_view *rv,
                              const char *pad)
{
    fprintf(f, "%s\"summary\": {\"L_us\": %.6f, \"G_ns_per_byte\": %.6f, \"G_unclamped_ns_per_byte\": %.6f, "
               "\"G_clamped\": %s, \"G_fit_bytes\": [%ld, %ld], \"o_s_us\": %.6f, \"o_r_us\": %.6f, "
               "\"g_us\": %.6f, \"T_us\": %.6f, \"at_bytes\": %ld},\n",
            pad, s->L_us, s->G_ns_per_byte, s->G_raw, s->G_clamped ? "true" : "false", (long)s->G_lo,
            (long)s->G_hi, r[0].o_s.median, r[0].o_r.median, r[0].g.median, r[0].T.median, r[0].bytes);
    fprintf(f, "%s\"sizes\": [\n", pad);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s  {\"bytes\": %ld, \"refined\": %s, ", pad, r[i].bytes, r[i].refined ? "true" : "false");
        print_ci_json(f, "T_us", r, i, offsetof(size_result, T), rv);
        print_ci_json(f, "o_s_us", r, i, offsetof(size_result, o_s), rv);
        print_ci_json(f, "o_r_us", r, i, offsetof(size_result, o_r), rv);
        print_ci_json(f, "g_us", r, i, offsetof(size_result, g), rv);
        fprintf(f, "\"L_us\": %.6f}%s\n", r[i].L_us, i + 1 < n ? "," : "");
    }
    fprintf(f, "%s]", pad);
}

/* A measured signature: one run, or per knob set (sets > 0). */
typedef struct {
    const size_result *const *res; /* [set] */
    const int *n;
    const summary *s;
    const round_view *rv;
    int sets;
    double elapsed_s;
} results;

static int write_json(const char *path, const results *out, int np)
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
        write_result_json(f, out->res[0], out->n[0], &out->s[0], NULL, "  ");
        fprintf(f, "\n}\n");
    } else {
        fprintf(f, "  \"rounds\": %d,\n  \"knob_sets\": [\n", opt.rounds);
        for (int k = 0; k < out->sets; k++) {
            fprintf(f, "    {\"spec\": ");
            print_json_string(f, opt.set_specs[k]);
            fprintf(f, ", \"knobs\": {");
            for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
                char text[64];
                loggp_format_knob((loggp_knob_id)i, opt.sets[k].ps[i], text, sizeof text);
                fprintf(f, "\"%s\": \"%s\"%s", loggp_knob_table[i].name, text, i + 1 < LOGGP_KNOB_COUNT ? ", " : "},\n");
            }
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

/* Every size (and, when refining, the sizes added at bends), sorted; returns how many. */
static int measure_signature(size_result *res, int sets_and_rounds)
{
    /* Warm-up and the empty message's half round trip, for the receive-overhead waits. */
    pace_us = 0.5;
    median_ci t0 = measure(CMD_PINGPONG, 0, 0);
    t_zero_us = t0.median;

    int planned = opt.n_sizes + (opt.refine ? 9 : 0);
    phase_budget_s = opt.time_limit_s / sets_and_rounds / planned / 4.0;
    int n = 0;
    for (int i = 0; i < opt.n_sizes; i++)
        measure_size(opt.sizes[i], &res[n++]);
    qsort(res, (size_t)n, sizeof res[0], by_bytes);
    if (opt.refine) {
        int at[3];
        int bends = find_bends(res, n, at, 3);
        size_result bounds[3][2];
        for (int b = 0; b < bends; b++) {
            bounds[b][0] = res[at[b] - 1];
            bounds[b][1] = res[at[b]];
        }
        for (int b = 0; b < bends && n + 3 <= MAX_SIZES; b++)
            n += bisect_bend(bounds[b][0], bounds[b][1], 3, &res[n]);
        qsort(res, (size_t)n, sizeof res[0], by_bytes);
    }
    return n;
}

static summary summarize_signature(const size_result *res, int n)
{
    summary s = {0};
    /* G: slope of g(m) over the largest sizes (at least the two largest). */
    long lo_bytes = opt.max_size / 16 > 1 ? opt.max_size / 16 : 1;
    double xs[MAX_SIZES], ys[MAX_SIZES];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (res[i].bytes >= lo_bytes || i >= n - 2) {
            xs[k] = (double)res[i].bytes;
            ys[k] = res[i].g.median;
            k++;
        }
    double slope = 0, icpt = 0;
    if (least_squares(xs, ys, (size_t)k, &slope, &icpt) == 0) {
        s.G_raw = slope * 1000.0;
        s.G_lo = xs[0];
        s.G_hi = xs[k - 1];
    }
    s.G_clamped = s.G_raw < 0;
    s.G_ns_per_byte = s.G_raw < 0 ? 0 : s.G_raw;
    /* L from small messages, where (m-1)G is a correction and not the bulk of T. */
    double ls[MAX_SIZES];
    int nl = 0;
    for (int i = 0; i < n; i++)
        if (res[i].bytes <= 64 || i == 0)
            ls[nl++] = res[i].L_us - (double)(res[i].bytes > 0 ? res[i].bytes - 1 : 0) *
                                         s.G_ns_per_byte / 1000.0;
    s.L_us = median_with_ci(ls, (size_t)nl).median;
    return s;
}

static void print_table(const size_result *res, int n, const summary *s, int np, const char *set_spec)
{
    printf("# loggp-probe %s  np=%d  send=%s recv=%s  (medians, us; +- is the 95%% CI)\n", PROBE_VERSION, np,
           send_mode_names[opt.send_mode], recv_mode_names[opt.recv_mode]);
    if (set_spec)
        printf("# knob set %s: medians of %d interleaved rounds, +- the widest round's CI\n", set_spec,
               opt.rounds);
    printf("%9s %18s %16s %16s %18s %9s\n", "bytes", "T(m)", "o_s(m)", "o_r(m)", "g(m)", "L(m)");
    for (int i = 0; i < n; i++)
        printf("%9ld %10.3f+-%-6.3f %8.3f+-%-6.3f %8.3f+-%-6.3f %10.3f+-%-6.3f %9.3f%s\n", res[i].bytes,
               res[i].T.median, res[i].T.ci_half, res[i].o_s.median, res[i].o_s.ci_half, res[i].o_r.median,
               res[i].o_r.ci_half, res[i].g.median, res[i].g.ci_half, res[i].L_us,
               res[i].refined ? "  (refined)" : "");
    printf("L = %.3f us   G = %.5f ns/B%s (g(m) slope over %ld..%ld B)\n", s->L_us, s->G_ns_per_byte,
           s->G_clamped ? " (clamped from negative)" : "", (long)s->G_lo, (long)s->G_hi);
}

/* Puts knob set k in force: rewrites the knob file, then waits until libloggp on this
 * rank and on the server reports the set (its watcher rereads the file every 4 ms). */
static int apply_knob_set(int k)
{
    char path[PATH_MAX], err[1024];
    if (loggp_knob_file_path(path, sizeof path, err, sizeof err) != 0 ||
        loggp_knobs_save(path, &opt.sets[k], err, sizeof err) != 0) {
        fprintf(stderr, "loggp-probe: cannot apply --knob-set '%s': %s\n", opt.set_specs[k], err);
        return -1;
    }
    int mine = await_knob_set(k), theirs = 0;
    command_server(CMD_KNOBS, 0, k, 0);
    MPI_Recv(&theirs, 1, MPI_INT, server, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (mine != 0 || !theirs) {
        fprintf(stderr, "loggp-probe: libloggp on rank %d did not take up --knob-set '%s' from %s within %.0f s "
                        "(is another process rewriting the file?)\n",
                mine != 0 ? 0 : server, opt.set_specs[k], path, KNOB_TAKEUP_LIMIT_US * 1e-6);
        return -1;
    }
    return 0;
}

/* One quantity over rounds: the median of the round medians, the widest round's CI. */
static median_ci combine_rounds(const size_result *const *rounds, int n_rounds, int size, size_t field)
{
    double v[100];
    median_ci out = {0};
    for (int r = 0; r < n_rounds; r++) {
        const median_ci *m = quantity(&rounds[r][size], field);
        v[r] = m->median;
        out.n += m->n;
        if (!(m->ci_half <= out.ci_half)) /* a NaN (too few samples) wins */
            out.ci_half = m->ci_half;
    }
    out.median = median_with_ci(v, (size_t)n_rounds).median;
    return out;
}

/* The signature per knob set: rounds interleave the sets, so slow drifts of the machine
 * fall on every set alike, and the sets are compared side by side. */
static int drive_sets(int np, double start)
{
    int sets = opt.n_sets, rounds = opt.rounds, rc = 0;
    size_t per = (size_t)MAX_SIZES;
    size_result *raw = calloc((size_t)sets * (size_t)rounds * per, sizeof *raw);
    size_result *combined = calloc((size_t)sets * per, sizeof *combined);
    const size_result **round_ptr = calloc((size_t)sets * (size_t)rounds, sizeof *round_ptr);
    const size_result *set_ptr[MAX_KNOB_SETS];
    int n[MAX_KNOB_SETS];
    summary s[MAX_KNOB_SETS];
    round_view rv[MAX_KNOB_SETS];
    if (!raw || !combined || !round_ptr) {
        fprintf(stderr, "loggp-probe: out of memory for %d knob sets x %d rounds\n", sets, rounds);
        rc = 1;
        goto done;
    }
    for (int r = 0; r < rounds && !rc; r++)
        for (int k = 0; k < sets && !rc; k++) {
            size_result *into = raw + ((size_t)k * (size_t)rounds + (size_t)r) * per;
            rc = apply_knob_set(k);
            current_set = k;
            if (!rc)
                n[k] = measure_signature(into, sets * rounds);
            round_ptr[k * rounds + r] = into;
        }
    if (rc)
        goto done;
    for (int k = 0; k < sets; k++) {
        size_result *c = combined + (size_t)k * per;
        const size_result *const *rs = round_ptr + k * rounds;
        for (int i = 0; i < n[k]; i++) {
            c[i].bytes = rs[0][i].bytes;
            c[i].T = combine_rounds(rs, rounds, i, offsetof(size_result, T));
            c[i].o_s = combine_rounds(rs, rounds, i, offsetof(size_result, o_s));
            c[i].o_r = combine_rounds(rs, rounds, i, offsetof(size_result, o_r));
            c[i].g = combine_rounds(rs, rounds, i, offsetof(size_result, g));
            c[i].L_us = c[i].T.median - c[i].o_s.median - c[i].o_r.median;
        }
        set_ptr[k] = c;
        s[k] = summarize_signature(c, n[k]);
        rv[k] = (round_view){rs, rounds};
    }
    double elapsed = (now_us() - start) * 1e-6;
    if (!opt.quiet) {
        for (int k = 0; k < sets; k++)
            print_table(set_ptr[k], n[k], &s[k], np, opt.set_specs[k]);
        printf("%d knob sets x %d rounds in %.2f s\n", sets, rounds, elapsed);
        fflush(stdout);
    }
    results out = {set_ptr, n, s, rv, sets, elapsed};
    if (opt.json_path && write_json(opt.json_path, &out, np) != 0)
        rc = 1;
done:
    free(raw);
    free(combined);
    free(round_ptr);
    return rc;
}

static int drive(int np)
{
    double start = now_us();
    int rc;
    if (opt.n_sets) {
        rc = drive_sets(np, start);
        command_server(CMD_QUIT, 0, 0, 0);
        return rc;
    }
    static size_result res[MAX_SIZES];
    int n = measure_signature(res, 1);
    command_server(CMD_QUIT, 0, 0, 0);
    summary s = summarize_signature(res, n);
    double elapsed = (now_us() - start) * 1e-6;
    if (!opt.quiet) {
        print_table(res, n, &s, np, NULL);
        printf("%.2f s\n", elapsed);
        fflush(stdout);
    }
    const size_result *set_ptr[1] = {res};
    results out = {set_ptr, &n, &s, NULL, 0, elapsed};
    if (opt.json_path && write_json(opt.json_path, &out, np) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    int parsed = parse_args(argc, argv, &opt, rank == 0);
    if (parsed != 0) {
        if (parsed > 0 && rank == 0)
            usage(stdout);
        MPI_Finalize();
        return parsed > 0 ? 0 : EXIT_USAGE;
    }
    if (np < 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-probe: needs at least 2 ranks, got %d (run it with mpiexec -n 2)\n", np);
        MPI_Finalize();
        return EXIT_USAGE;
    }

    size_t slots = (size_t)opt.burst * (size_t)(opt.max_size > 0 ? opt.max_size : 1);
    send_buf = malloc((size_t)(opt.max_size > 0 ? opt.max_size : 1));
    recv_buf = malloc(slots);
    burst_reqs = malloc((size_t)opt.burst * sizeof *burst_reqs);
    if (!send_buf || !recv_buf || !burst_reqs) {
        fprintf(stderr, "loggp-probe: out of memory for %zu-byte buffers\n", slots);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch every page now so page faults do not land in the first samples. */
    memset(send_buf, 1, (size_t)(opt.max_size > 0 ? opt.max_size : 1));
    memset(recv_buf, 0, slots);

    int rc = 0;
    if (rank == 0)
        rc = drive(np);
    else if (rank == 1)
        serve();
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(send_buf);
    free(recv_buf);
    free(burst_reqs);
    MPI_Finalize();
    return rc;
}
