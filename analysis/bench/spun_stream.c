/* A one-way stream of blocking sends and receives (8 B unless BYTES says) whose
 * ranks spend CPU time of their own: rank 0 spins S us before each send, rank 1
 * R us after each receive. Run under plain MPI it shows what LogP's max(o_s, o_r)
 * leaves out on this machine, and how a slowed stream's interval depends on the
 * message's size, with no emulation involved (docs/benchmarks.md, "Known
 * defects"). Prints the median interval per message over the batches, in us.
 *   spun_stream S_US R_US MESSAGES BATCHES [BYTES] */
#include <stdio.h>

#include "spun.h"

#define MAX_BATCHES 1000
#define MAX_BYTES (1 << 24)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int known = argc == 5 || argc == 6;
    double send_spin = known ? parsed(argv[1], 0, HUGE_VAL) : -1;
    double receive_spin = known ? parsed(argv[2], 0, HUGE_VAL) : -1;
    int messages = known ? (int)parsed(argv[3], 1, HUGE_VAL) : -1;
    int batches = known ? (int)parsed(argv[4], 1, HUGE_VAL) : -1;
    double bytes = argc == 6 ? parsed(argv[5], 1, HUGE_VAL) : 8;
    if (size != 2 || send_spin < 0 || receive_spin < 0 || messages < 1 || batches < 1 || batches > MAX_BATCHES ||
        bytes < 1 || bytes > MAX_BYTES || bytes != (int)bytes) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 spun_stream S_US R_US MESSAGES BATCHES [BYTES] (1-%d batches, "
                    "1-%d bytes)\n", MAX_BATCHES, MAX_BYTES);
        MPI_Finalize();
        return 2;
    }
    double interval[MAX_BATCHES];
    char *message = calloc((size_t)bytes, 1), ack = 0;
    for (int b = 0; b < batches; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        if (rank == 0) {
            for (int i = 0; i < messages; i++) {
                spin_us(send_spin);
                MPI_Send(message, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            }
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int i = 0; i < messages; i++) {
                MPI_Recv(message, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                spin_us(receive_spin);
            }
            MPI_Send(&ack, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
        interval[b] = (MPI_Wtime() - start) * 1e6 / messages;
    }
    if (rank == 0) {
        qsort(interval, (size_t)batches, sizeof *interval, by_value);
        printf("%.4f\n", interval[batches / 2]);
    }
    free(message);
    MPI_Finalize();
    return 0;
}
