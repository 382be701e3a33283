/* pairs ITERS SIZE: rank 0 ping-pongs SIZE-byte messages ITERS times with
 * each other rank in turn and prints the median half round trip per pair,
 * "pair 0 R US" (per-pair L and G: the topology tests). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 0, bytes = argc > 2 ? atoi(argv[2]) : 8;
    if (argc != 3 || iters < 1 || bytes < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N (N >= 2) pairs ITERS SIZE (ITERS, SIZE >= 1)\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)bytes, 1);
    double *half = calloc((size_t)iters, sizeof *half);
    for (int peer = 1; peer < size; peer++) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                double t0 = MPI_Wtime();
                MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                half[i] = (MPI_Wtime() - t0) * 0.5e6;
            } else if (rank == peer) {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) {
            qsort(half, (size_t)iters, sizeof *half, by_value);
            printf("pair 0 %d %.3f\n", peer, half[iters / 2]);
            fflush(stdout);
        }
    }
    free(buf);
    free(half);
    MPI_Finalize();
    return 0;
}
