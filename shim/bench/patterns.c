/* The message patterns users run first, at np=2, timed one repetition at a time:
 *   window    rank 0 posts WINDOW Isends, rank 1 WINDOW Irecvs, both Waitall, then
 *             rank 1 sends an ACK_BYTES ack (the osu_mbw_mr shape): ns per message
 *   pingpong  blocking Send/Recv round trips: ns per half round trip
 *   exchange  both ranks Irecv + Send + Wait at once (NPB CG's exchange): ns per
 *             iteration, in which each rank sends one message and receives one
 *   compute   the window pattern with a fixed busy computation on rank 0 before
 *             each Isend, calibrated to --compute-ns: ns per message
 *   late      rank 0 sends an empty token, busy-waits --wait-ns (long past the
 *             answer's arrival), then receives rank 1's BYTES answer: the median
 *             receive call, the call alone timed (Martin's o_r after an idle spell)
 * Each timed repetition prints one JSON line on rank 0, so callers take medians.
 * With --alternate each repetition runs twice, once outside and once inside the
 * kernel region (MPI_Pcontrol 0 and 1), in the order outside-kernel,
 * kernel-outside, ...: under LOGGP_SCOPE=kernel the knobs apply to the second
 * of each pair only, so a knob's effect is read from runs milliseconds apart. */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

#define WINDOW 64
#define ACK_BYTES 8
#define MAX_BYTES (1 << 20)
#define MAX_SPECS 64
#define EXIT_USAGE 2

enum pattern { WINDOWED, PINGPONG, EXCHANGE, COMPUTE, LATE, PATTERNS };
static const char *const pattern_names[] = {"window", "pingpong", "exchange", "compute", "late"};
static const char *const units[] = {"ns/msg", "ns/halfrtt", "ns/iter", "ns/msg", "ns/recv"};

struct spec {
    enum pattern pattern;
    long bytes, count;
};

static int rank;
static char *send_buf, *recv_buf;
static uint64_t compute_iters; /* busy-loop iterations per computation, rank 0 */
static long wait_ns = 200000;   /* the late pattern's idle spell */
static int alternate;           /* --alternate: each repetition outside and inside the kernel region */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n 2 loggp-patterns [--reps N] [--compute-ns NS] [--wait-ns NS] [--alternate]\n"
            "                                   PATTERN:BYTES:COUNT...\n"
            "  PATTERN  window | pingpong | exchange | compute | late\n"
            "  BYTES    message size, 0..%d\n"
            "  COUNT    windows (window, compute) or iterations (pingpong, exchange, late), >= 1\n"
            "  --reps N       timed repetitions of each pattern, one JSON line each (default 5)\n"
            "  --compute-ns NS  busy computation before each send of the compute pattern (default 5000)\n"
            "  --wait-ns NS   the late pattern's idle spell before each timed receive (default 200000)\n"
            "  --alternate    run each repetition outside and inside the kernel region (MPI_Pcontrol 0, 1),\n"
            "                 alternately first; each line says its \"region\" (with LOGGP_SCOPE=kernel the\n"
            "                 knobs apply inside only)\n"
            "Window %d messages, ack %d bytes.\n",
            MAX_BYTES, WINDOW, ACK_BYTES);
}

/* A whole decimal number in [lo, hi], or -1 with a message naming the value
 * (and the argument it came from, if any). */
static long parse_number(const char *text, long lo, long hi, const char *what, const char *where)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        if (rank == 0 && where)
            fprintf(stderr, "loggp-patterns: bad %s '%s' in '%s' (expected a whole number in %ld..%ld)\n", what,
                    text, where, lo, hi);
        else if (rank == 0)
            fprintf(stderr, "loggp-patterns: bad %s '%s' (expected a whole number in %ld..%ld)\n", what, text, lo,
                    hi);
        return -1;
    }
    return v;
}

static int parse_spec(const char *text, struct spec *s)
{
    char copy[128];
    if (strlen(text) >= sizeof copy) {
        if (rank == 0)
            fprintf(stderr, "loggp-patterns: '%.40s...' is too long for PATTERN:BYTES:COUNT\n", text);
        return -1;
    }
    strcpy(copy, text);
    char *bytes = strchr(copy, ':'), *count = bytes ? strchr(bytes + 1, ':') : NULL;
    if (!count) {
        if (rank == 0)
            fprintf(stderr, "loggp-patterns: '%s' is not PATTERN:BYTES:COUNT\n", text);
        return -1;
    }
    *bytes++ = '\0';
    *count++ = '\0';
    int found = -1;
    for (int p = 0; p < PATTERNS; p++)
        if (!strcmp(copy, pattern_names[p]))
            found = p;
    if (found < 0) {
        if (rank == 0)
            fprintf(stderr, "loggp-patterns: unknown pattern '%s' in '%s' (window, pingpong, exchange, compute, late)\n",
                    copy, text);
        return -1;
    }
    s->pattern = (enum pattern)found;
    if ((s->bytes = parse_number(bytes, 0, MAX_BYTES, "BYTES", text)) < 0 ||
        (s->count = parse_number(count, 1, 100000000, "COUNT", text)) < 0)
        return -1;
    return 0;
}

/* Work the compiler cannot drop: one multiply-add chain. */
static uint64_t busy(uint64_t iters)
{
    uint64_t x = 88172645463325252ULL;
    for (uint64_t i = 0; i < iters; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ __volatile__("" : "+r"(x));
    }
    return x;
}

/* Iterations per compute_ns: the fastest of several timed blocks of >= 2 ms,
 * so a preempted block does not inflate the computation. */
static uint64_t calibrate(long compute_ns)
{
    if (compute_ns == 0)
        return 0;
    uint64_t n = 1000;
    double t = 0;
    for (;;) {
        double s = MPI_Wtime();
        busy(n);
        t = MPI_Wtime() - s;
        if (t >= 2e-3)
            break;
        n *= 2;
    }
    for (int i = 0; i < 5; i++) {
        double s = MPI_Wtime();
        busy(n);
        double d = MPI_Wtime() - s;
        if (d < t)
            t = d;
    }
    uint64_t iters = (uint64_t)((double)compute_ns * 1e-9 * (double)n / t + 0.5);
    return iters ? iters : 1;
}

static void window_round(const struct spec *s, int compute)
{
    MPI_Request reqs[WINDOW];
    char ack[ACK_BYTES] = {0};
    size_t stride = (size_t)s->bytes;
    for (long w = 0; w < s->count; w++) {
        if (rank == 0) {
            for (int i = 0; i < WINDOW; i++) {
                if (compute)
                    busy(compute_iters);
                MPI_Isend(send_buf + i * stride, (int)s->bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &reqs[i]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, ACK_BYTES, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < WINDOW; i++)
                MPI_Irecv(recv_buf + i * stride, (int)s->bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &reqs[i]);
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(ack, ACK_BYTES, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
}

static void pingpong_round(const struct spec *s)
{
    int n = (int)s->bytes;
    for (long i = 0; i < s->count; i++) {
        if (rank == 0) {
            MPI_Send(send_buf, n, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            MPI_Recv(recv_buf, n, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(recv_buf, n, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(send_buf, n, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
}

static void exchange_round(const struct spec *s)
{
    int n = (int)s->bytes, peer = 1 - rank;
    MPI_Request req;
    for (long i = 0; i < s->count; i++) {
        MPI_Irecv(recv_buf, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &req);
        MPI_Send(send_buf, n, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

/* Rank 0's median receive call in seconds times the count (so that dividing
 * by the count gives the median call: one preempted call in an idle
 * spell would swamp a mean). */
static double late_round(const struct spec *s)
{
    int n = (int)s->bytes;
    double *calls = rank == 0 ? malloc((size_t)s->count * sizeof *calls) : NULL;
    if (rank == 0 && !calls) {
        fprintf(stderr, "loggp-patterns: out of memory for %ld timings\n", s->count);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < s->count; i++) {
        if (rank == 0) {
            MPI_Send(NULL, 0, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
            double until = MPI_Wtime() + (double)wait_ns * 1e-9;
            while (MPI_Wtime() < until)
                ;
            double start = MPI_Wtime();
            MPI_Recv(recv_buf, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            calls[i] = MPI_Wtime() - start;
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(send_buf, n, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        }
    }
    if (rank != 0)
        return 0;
    double median = loggp_median(calls, (size_t)s->count) * (double)s->count;
    free(calls);
    return median;
}

/* The seconds the repetition reports, or a negative value for its whole duration. */
static double run_round(const struct spec *s)
{
    switch (s->pattern) {
    case WINDOWED: window_round(s, 0); break;
    case COMPUTE: window_round(s, 1); break;
    case PINGPONG: pingpong_round(s); break;
    case EXCHANGE: exchange_round(s); break;
    case LATE: return late_round(s);
    case PATTERNS: break;
    }
    return -1;
}

/* What one repetition's time is divided by. */
static double units_per_round(const struct spec *s)
{
    switch (s->pattern) {
    case WINDOWED:
    case COMPUTE: return (double)s->count * WINDOW;
    case PINGPONG: return 2.0 * (double)s->count;
    case EXCHANGE:
    case LATE: return (double)s->count;
    case PATTERNS: break;
    }
    return 1;
}

static void print_rep(const struct spec *s, long r, double elapsed, long compute_ns, const char *region)
{
    printf("{\"pattern\": \"%s\", \"bytes\": %ld, \"count\": %ld, \"rep\": %ld, \"ns\": %.2f, \"unit\": \"%s\"",
           pattern_names[s->pattern], s->bytes, s->count, r, elapsed * 1e9 / units_per_round(s), units[s->pattern]);
    if (s->pattern == WINDOWED || s->pattern == COMPUTE)
        printf(", \"window\": %d, \"ack_bytes\": %d", WINDOW, ACK_BYTES);
    if (s->pattern == COMPUTE)
        printf(", \"compute_ns\": %ld", compute_ns);
    if (s->pattern == LATE)
        printf(", \"wait_ns\": %ld", wait_ns);
    if (region)
        printf(", \"region\": \"%s\"", region);
    printf("}\n");
    fflush(stdout);
}

static void measure(const struct spec *s, long reps, long compute_ns)
{
    struct spec warm = *s;
    warm.count = s->count / 10 + 1;
    for (int half = 0; half <= alternate; half++) {
        if (alternate)
            MPI_Pcontrol(half);
        run_round(&warm);
    }
    for (long r = 0; r < reps; r++) {
        for (int half = 0; half <= alternate; half++) {
            int inside = (int)((r + half) % 2); /* outside-kernel, then kernel-outside: drift cancels */
            if (alternate)
                MPI_Pcontrol(inside);
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            double timed = run_round(s);
            double elapsed = timed >= 0 ? timed : MPI_Wtime() - start;
            if (rank == 0)
                print_rep(s, r, elapsed, compute_ns, !alternate ? NULL : inside ? "kernel" : "outside");
        }
    }
    if (alternate)
        MPI_Pcontrol(0);
}

/* 0 to run, 1 for --help, -1 after a message (rank 0) for bad input. */
static int parse_args(int argc, char **argv, long *reps, long *compute_ns, struct spec *specs, int *nspecs)
{
    *nspecs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "--alternate")) {
            alternate = 1;
            continue;
        }
        if (!strcmp(a, "--reps") || !strcmp(a, "--compute-ns") || !strcmp(a, "--wait-ns")) {
            if (i + 1 == argc) {
                if (rank == 0)
                    fprintf(stderr, "loggp-patterns: %s needs a value\n", a);
                return -1;
            }
            int is_reps = !strcmp(a, "--reps");
            long v = parse_number(argv[++i], is_reps ? 1 : 0, is_reps ? 1000000 : 1000000000, a, NULL);
            if (v < 0)
                return -1;
            *(is_reps ? reps : !strcmp(a, "--wait-ns") ? &wait_ns : compute_ns) = v;
        } else if (a[0] == '-') {
            if (rank == 0)
                fprintf(stderr,
                        "loggp-patterns: unknown option '%s' (--reps, --compute-ns, --wait-ns, --alternate, --help)\n", a);
            return -1;
        } else if (*nspecs == MAX_SPECS) {
            if (rank == 0)
                fprintf(stderr, "loggp-patterns: more than %d patterns given\n", MAX_SPECS);
            return -1;
        } else if (parse_spec(a, &specs[(*nspecs)++]) < 0) {
            return -1;
        }
    }
    if (*nspecs == 0) {
        if (rank == 0) {
            fprintf(stderr, "loggp-patterns: no pattern given\n");
            usage(stderr);
        }
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long reps = 5, compute_ns = 5000;
    struct spec specs[MAX_SPECS];
    int nspecs;
    int parsed = parse_args(argc, argv, &reps, &compute_ns, specs, &nspecs);
    if (parsed == 0 && np != 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-patterns: needs exactly 2 ranks, got %d (mpiexec -n 2)\n", np);
        parsed = -1;
    }
    if (parsed != 0) {
        if (parsed > 0 && rank == 0)
            usage(stdout);
        MPI_Finalize();
        return parsed > 0 ? 0 : EXIT_USAGE;
    }
    long max_bytes = 1;
    for (int i = 0; i < nspecs; i++)
        if (specs[i].bytes > max_bytes)
            max_bytes = specs[i].bytes;
    send_buf = calloc(WINDOW, (size_t)max_bytes);
    recv_buf = calloc(WINDOW, (size_t)max_bytes);
    if (!send_buf || !recv_buf) {
        fprintf(stderr, "loggp-patterns: rank %d: out of memory for %d x %ld bytes\n", rank, WINDOW, max_bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        for (int i = 0; i < nspecs; i++)
            if (specs[i].pattern == COMPUTE && !compute_iters)
                compute_iters = calibrate(compute_ns);
    for (int i = 0; i < nspecs; i++)
        measure(&specs[i], reps, compute_ns);
    free(send_buf);
    free(recv_buf);
    MPI_Finalize();
    return 0;
}
