/* Figures the apparatus tests check: ping-pong half round trip, a one-way
 * message stream, allreduce and RMA epoch times, CPU time spent, and a
 * windowed ping-pong for live knob changes. Rank 0 prints key=value lines.
 *   timing pingpong SIZE ITERS | stream SIZE COUNT | allreduce ITERS |
 *          rma ITERS | cpu SIZE COUNT | live SECONDS [STOP_FILE] | self SIZE ITERS |
 *          selfpersistent SIZE ITERS | send SIZE ITERS | prepost SIZE ITERS WORK_US
 * Self-contained (its own median, not loggp_core's): test_abi.py builds it
 * with Debian's mpicc.mpich and mpicc.openmpi, as a user's program is built. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int rank;

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void pingpong_round(char *buf, int size, int iters)
{
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

/* Median over batches of the per-iteration time of body(). */
#define BATCHES 15

static void pingpong(char *buf, int size, int iters)
{
    double t[BATCHES];
    pingpong_round(buf, size, iters / 4 + 1);
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        pingpong_round(buf, size, iters);
        t[b] = (MPI_Wtime() - s) / iters / 2;
    }
    if (rank == 0)
        printf("halfrtt_us=%.4f\ncpu_s=%.6f\nwall_s=%.6f\n", median(t, BATCHES) * 1e6, cpu_seconds() - cpu0,
               MPI_Wtime() - w0);
}

/* Messages a rank sends itself (MPICH copies them without libfabric): the
 * median time of one Irecv + Send + Wait on rank 0, as rank 1 idles; with
 * `persistent`, Irecv + Start + Wait + Wait of one MPI_Send_init request. */
static void self_messages(char *buf, int size, int iters, int persistent)
{
    double t[BATCHES];
    char *in = buf + (1 << 21);
    MPI_Request send = MPI_REQUEST_NULL;
    if (persistent && rank == 0)
        MPI_Send_init(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &send);
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        for (int i = 0; rank == 0 && i < iters; i++) {
            MPI_Request req;
            MPI_Irecv(in, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req);
            if (persistent) {
                MPI_Start(&send);
                MPI_Wait(&send, MPI_STATUS_IGNORE);
            } else {
                MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t[b] = (MPI_Wtime() - s) / iters;
    }
    if (send != MPI_REQUEST_NULL)
        MPI_Request_free(&send);
    if (rank == 0)
        printf("self_us=%.4f\ncpu_s=%.6f\nwall_s=%.6f\n", median(t, BATCHES) * 1e6, cpu_seconds() - cpu0,
               MPI_Wtime() - w0); /* the CPU share tells a loaded run */
}

/* Prints, on rank 0, the CPU and wall time since (cpu0, w0) of whichever of
 * ranks 0 and 1 got the lesser share of its core: each message of a stream
 * needs both, so a run in which either shared its CPU shows as loaded. */
static void print_least_cpu_share(double cpu0, double w0)
{
    double mine[2] = {cpu_seconds() - cpu0, MPI_Wtime() - w0}, theirs[2] = {1, 1};
    if (rank == 1)
        MPI_Send(mine, 2, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Recv(theirs, 2, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) {
        const double *least = theirs[0] * mine[1] < mine[0] * theirs[1] ? theirs : mine;
        printf("cpu_s=%.6f\nwall_s=%.6f\n", least[0], least[1]);
    }
}

static void stream(char *buf, int size, int count)
{
    double t[BATCHES];
    char ack;
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        if (rank == 0) {
            for (int i = 0; i < count; i++)
                MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < count; i++)
                MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&ack, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
        t[b] = (MPI_Wtime() - s) / count;
    }
    if (rank == 0)
        printf("interval_us=%.4f\nrate_per_s=%.1f\n", median(t, BATCHES) * 1e6, 1.0 / median(t, BATCHES));
    print_least_cpu_share(cpu0, w0);
}

/* How long a blocking MPI_Send takes when its receive is already posted:
 * the median over iters sends of rank 0's time in MPI_Send. */
static void blocking_send(char *buf, int size, int iters)
{
    double *t = calloc((size_t)iters, sizeof *t);
    if (!t) {
        fprintf(stderr, "timing: rank %d: no memory for %d send times\n", rank, iters);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == 1)
            MPI_Irecv(buf, size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &req);
        MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted before the send begins */
        if (rank == 0) {
            double s = MPI_Wtime();
            MPI_Send(buf, size, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
            t[i] = MPI_Wtime() - s;
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (rank == 0)
        printf("send_us=%.4f\n", median(t, iters) * 1e6);
    print_least_cpu_share(cpu0, w0);
    free(t);
}

static void allreduce(int iters)
{
    double t[BATCHES], in = rank, out;
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[b] = (MPI_Wtime() - s) / iters;
    }
    if (rank == 0)
        printf("allreduce_us=%.4f\n", median(t, BATCHES) * 1e6);
}

static void rma(int iters)
{
    double t[BATCHES], *base, value = 1.0;
    MPI_Win win;
    MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        if (rank == 0) {
            for (int i = 0; i < iters; i++) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Put(&value, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win);
                MPI_Win_unlock(1, win);
            }
        }
        t[b] = (MPI_Wtime() - s) / iters;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    if (rank == 0)
        printf("rma_epoch_us=%.4f\n", median(t, BATCHES) * 1e6);
}

/* CPU time of posting COUNT nonblocking messages and waiting for them
 * without polling (Test + sleep): o costs CPU here, L only wall time. */
static void cpu(char *buf, int size, int count)
{
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)count);
    struct timespec nap = {0, 100000};
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    if (rank < 2) {
        for (int i = 0; i < count; i++) {
            if (rank == 0)
                MPI_Isend(buf, size, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &reqs[i]);
            else
                MPI_Irecv(buf, size, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[i]);
        }
        int done = 0;
        while (!done) {
            MPI_Testall(count, reqs, &done, MPI_STATUSES_IGNORE);
            if (!done)
                nanosleep(&nap, NULL);
        }
    }
    double mine[2] = {cpu_seconds() - cpu0, MPI_Wtime() - w0}, theirs[2] = {0, 0};
    if (rank == 1)
        MPI_Send(mine, 2, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Recv(theirs, 2, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        printf("sender_cpu_s=%.6f\nreceiver_cpu_s=%.6f\nsender_wall_s=%.6f\nreceiver_wall_s=%.6f\n", mine[0],
               theirs[0], mine[1], theirs[1]);
    free(reqs);
}

/* Ping-pongs in windows of 100 round trips (both ranks run the same count);
 * rank 0 reports each window's half round trip and decides when to stop:
 * after SECONDS, or sooner once STOP_FILE (if given) exists. */
static void live(double seconds, const char *stop_file)
{
    enum { WINDOW = 100 };
    char buf[8] = {0};
    double start = MPI_Wtime();
    int stop = 0;
    while (!stop) {
        double s = MPI_Wtime();
        pingpong_round(buf, 8, WINDOW);
        double per = (MPI_Wtime() - s) / WINDOW / 2;
        if (rank == 0) {
            printf("t=%.4f halfrtt_us=%.3f\n", MPI_Wtime() - start, per * 1e6);
            fflush(stdout);
            stop = MPI_Wtime() - start > seconds || (stop_file && access(stop_file, F_OK) == 0);
        }
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
}

/* Ends the job after bad usage, which rank 0 has printed. Every rank sees
 * the same arguments and comes here, so each finalizes and exits 2: an abort
 * could end the job before the launcher had passed the message on. */
static void refuse(void)
{
    MPI_Finalize();
    exit(2);
}

static long arg(char **argv, int i, const char *what)
{
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < 0) {
        if (rank == 0)
            fprintf(stderr, "timing: bad %s '%s'\n", what, argv[i]);
        refuse();
    }
    return v;
}

/* An argument that must lie in [lo, hi] (the send buffer is 4 MiB). */
static long arg_within(char **argv, int i, const char *what, long lo, long hi)
{
    long v = arg(argv, i, what);
    if (v < lo || v > hi) {
        if (rank == 0)
            fprintf(stderr, "timing: %s '%s' is outside %ld-%ld\n", what, argv[i], lo, hi);
        refuse();
    }
    return v;
}

/* Rank 1 posts a receive of SIZE bytes, tells rank 0 to send (an empty
 * message), works WORK_US outside MPI and waits; rank 0 sends on the word:
 * rank 1's median time from its word to its wait's end. The message's
 * request lands while rank 1 works, so above shm's eager size rank 1 copies
 * the data in the read after its work, a copy an emulated rendezvous's
 * flights precede rather than overlap. */
static void prepost(int size, int iters, double work_us)
{
    char *data = malloc((size_t)size);
    double *t = calloc((size_t)iters, sizeof *t);
    if (!data || !t) {
        fprintf(stderr, "timing: rank %d: no memory for a %d-byte buffer\n", rank, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(data, rank + 1, (size_t)size);
    double cpu0 = cpu_seconds(), w0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 1) {
            MPI_Request req;
            MPI_Irecv(data, size, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
            double s = MPI_Wtime();
            MPI_Send(NULL, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
            while ((MPI_Wtime() - s) * 1e6 < work_us)
                ;
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            t[i] = MPI_Wtime() - s;
        } else if (rank == 0) {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(data, size, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        }
    }
    /* rank 0 prints, as in every mode */
    double wait_us = rank == 1 ? median(t, iters) * 1e6 : 0;
    if (rank == 1)
        MPI_Send(&wait_us, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    else if (rank == 0) {
        MPI_Recv(&wait_us, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("prepost_us=%.4f\n", wait_us);
    }
    print_least_cpu_share(cpu0, w0);
    free(t);
    free(data);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n 2 loggp-timing MODE ARGS   (every argument required, no defaults)\n"
            "  pingpong SIZE ITERS   half round trip of SIZE-byte messages, ITERS round trips\n"
            "  stream SIZE COUNT     COUNT one-way SIZE-byte messages, rank 0 to rank 1\n"
            "  allreduce ITERS       ITERS allreduces of one int\n"
            "  rma ITERS             ITERS passive-target RMA epochs (lock, put, unlock)\n"
            "  cpu SIZE COUNT        CPU time spent sending COUNT SIZE-byte messages\n"
            "  live SECONDS [STOP]   windowed ping-pong for SECONDS, or until the file STOP exists,\n"
            "                        for live knob changes\n"
            "  self SIZE ITERS       ITERS SIZE-byte messages rank 0 sends itself\n"
            "  selfpersistent SIZE ITERS   the same by one persistent send (MPI_Send_init, MPI_Start)\n"
            "  send SIZE ITERS       time in a blocking send to a posted receive, ITERS sends\n"
            "  prepost SIZE ITERS WORK_US   rank 1 posts a receive, asks rank 0 to send, works, waits\n"
            "Rank 0 prints key=value lines.\n"
            "example:\n  mpiexec -n 2 loggp-timing pingpong 8 1000\n");
}

int main(int argc, char **argv)
{
    /* Help needs no MPI: answered before MPI_Init, so it never ends in MPI_Abort. */
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    char *buf = calloc(1, 1 << 22);
    if (!strcmp(mode, "pingpong") && argc == 4)
        pingpong(buf, (int)arg(argv, 2, "size"), (int)arg(argv, 3, "iterations"));
    else if (!strcmp(mode, "stream") && argc == 4)
        stream(buf, (int)arg(argv, 2, "size"), (int)arg(argv, 3, "count"));
    else if (!strcmp(mode, "allreduce") && argc == 3)
        allreduce((int)arg(argv, 2, "iterations"));
    else if (!strcmp(mode, "rma") && argc == 3)
        rma((int)arg(argv, 2, "iterations"));
    else if (!strcmp(mode, "cpu") && argc == 4)
        cpu(buf, (int)arg(argv, 2, "size"), (int)arg(argv, 3, "count"));
    else if (!strcmp(mode, "self") && argc == 4 && arg(argv, 2, "size") <= (1 << 21))
        self_messages(buf, (int)arg(argv, 2, "size"), (int)arg(argv, 3, "iterations"), 0);
    else if (!strcmp(mode, "selfpersistent") && argc == 4 && arg(argv, 2, "size") <= (1 << 21))
        self_messages(buf, (int)arg(argv, 2, "size"), (int)arg(argv, 3, "iterations"), 1);
    else if (!strcmp(mode, "send") && argc == 4)
        blocking_send(buf, (int)arg_within(argv, 2, "size", 0, 1 << 22),
                      (int)arg_within(argv, 3, "iterations", 1, 10000000));
    else if (!strcmp(mode, "prepost") && argc == 5)
        prepost((int)arg_within(argv, 2, "size", 1, 1 << 26), (int)arg_within(argv, 3, "iterations", 1, 10000000),
                 (double)arg_within(argv, 4, "work (us)", 0, 10000000));
    else if (!strcmp(mode, "live") && (argc == 3 || argc == 4))
        live((double)arg(argv, 2, "seconds"), argc == 4 ? argv[3] : NULL);
    else {
        if (rank == 0)
            usage(stderr);
        refuse();
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
