/* Known MPI calls for the trace test (np=2): a ping-pong of N messages of
 * SIZE bytes (tag 7), a window of W Isend/Irecv pairs of SIZE bytes each way
 * (tags 100..100+W-1) completed by one Waitall, one Bcast of 64 doubles from
 * rank 1 and one Allreduce of 16 ints.
 * usage: loggp-test-tracecalls N SIZE W */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: loggp-test-tracecalls N SIZE W (np=2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[1]), bytes = atoi(argv[2]), window = atoi(argv[3]);
    int peer = 1 - rank;
    char *buf = calloc((size_t)bytes * (size_t)(2 * window + 1), 1);
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(2 * window));
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        }
    }
    for (int i = 0; i < window; i++) {
        MPI_Irecv(buf + (size_t)bytes * (size_t)(i + 1), bytes, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD, &reqs[i]);
        MPI_Isend(buf + (size_t)bytes * (size_t)(window + i + 1), bytes, MPI_BYTE, peer, 100 + i, MPI_COMM_WORLD,
                  &reqs[window + i]);
    }
    MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
    double d[64] = {0};
    MPI_Bcast(d, 64, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    int in[16] = {0}, out[16];
    MPI_Allreduce(in, out, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    free(reqs);
    free(buf);
    MPI_Finalize();
    return 0;
}
