/* Jitter at the MPI level (np=2).
 *   order N     rank 0 sends N numbered messages at once; rank 1, after they
 *               have all had time to arrive, receives them one by one and
 *               checks that they come in the order sent (MPI's non-overtaking rule)
 *   pingpong N  N round trips of 1 byte; rank 0 prints each one's time in ns */
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
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc == 3 ? atoi(argv[2]) : 0;
    if (argc != 3 || size != 2 || n < 1 || (strcmp(argv[1], "order") != 0 && strcmp(argv[1], "pingpong") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: loggp-test-jitter order|pingpong N (np=2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bad = 0;
    if (strcmp(argv[1], "order") == 0) {
        int *out = malloc(sizeof *out * (size_t)n);
        MPI_Request *reqs = malloc(sizeof *reqs * (size_t)n);
        if (rank == 0) {
            for (int i = 0; i < n; i++) {
                out[i] = i;
                MPI_Isend(&out[i], 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &reqs[i]);
            }
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        } else {
            for (int i = 0; i < n; i++) {
                int got = -1;
                MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (got != i && !bad++)
                    printf("out of order: message %d arrived as number %d\n", got, i);
            }
            if (!bad)
                printf("in order: %d\n", n);
        }
        free(out);
        free(reqs);
    } else {
        char byte = 0;
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                long long t0 = now_ns();
                MPI_Send(&byte, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(&byte, 1, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                printf("%lld\n", now_ns() - t0);
            } else {
                MPI_Recv(&byte, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&byte, 1, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    MPI_Finalize();
    return bad != 0;
}
