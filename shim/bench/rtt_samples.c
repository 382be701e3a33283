/* loggp-rtt-samples: every round trip of a ping-pong between ranks 0 and 1,
 * one line each ("rtt_ns N"), for checking a latency distribution
 * (`loggp bench knobs --L-jitter`): with L drawn per message, a round trip
 * holds two draws. Usage: loggp-rtt-samples COUNT [BYTES] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) { /* before MPI_Init */
        printf("usage: mpiexec -n 2 loggp-rtt-samples COUNT [BYTES]\n"
               "Every round trip of a COUNT-long ping-pong of BYTES (default 8, up to 1 MiB), one\n"
               "'rtt_ns N' line each: the program behind `loggp bench knobs --L-jitter`.\n"
               "example: mpiexec -n 2 loggp-rtt-samples 100 8\n");
        return 0;
    }
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char *end = NULL;
    long count = argc > 1 ? strtol(argv[1], &end, 10) : 0;
    long bytes = argc > 2 ? strtol(argv[2], NULL, 10) : 8;
    if (np != 2 || count <= 0 || (end && *end) || bytes < 0 || bytes > (1 << 20)) {
        if (rank == 0)
            fprintf(stderr, "usage: loggp-rtt-samples COUNT [BYTES] (2 ranks, BYTES up to 1 MiB)\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)bytes + 1, 1);
    long long *rtt = malloc((size_t)count * sizeof *rtt);
    int peer = 1 - rank;
    for (int warm = 0; warm < 50; warm++) {
        if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
    }
    for (long i = 0; i < count; i++) {
        if (rank == 0) {
            long long t0 = now_ns();
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rtt[i] = now_ns() - t0;
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        for (long i = 0; i < count; i++)
            printf("rtt_ns %lld\n", rtt[i]);
    free(buf);
    free(rtt);
    MPI_Finalize();
    return 0;
}
