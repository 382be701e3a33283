/* An 8 B ping-pong whose ranks spend CPU time of their own: each rank spins S us
 * after each receive and before each send, as o_r and o_s would. Run under plain
 * MPI it shows how much a half round trip grows with those spins on this machine,
 * against LogP's o_s + o_r = 2 S, with no emulation involved (docs/benchmarks.md,
 * "Known defects": L's reading under o). Each round times a batch of MESSAGES
 * round trips without spins and one with, in alternating order; rank 0 prints the
 * median over the rounds of the growth of the median half round trip, with its
 * 95 % interval (order statistics), in us:
 *   spun_pingpong S_US ROUNDS MESSAGES */
#include <stdio.h>

#include "spun.h"

#define MAX_ROUNDS 1000
#define MAX_MESSAGES 100000

/* The median half round trip of a batch, in us; rank 1 returns 0. */
static double batch(int rank, double spin, int messages, double *times)
{
    char byte[8] = {0};
    for (int i = 0; i < messages; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            spin_us(spin);
            MPI_Send(byte, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(byte, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_us(spin);
        } else {
            MPI_Recv(byte, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_us(spin);
            spin_us(spin);
            MPI_Send(byte, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
        times[i] = (MPI_Wtime() - start) * 1e6 / 2;
    }
    return rank == 0 ? median_of(times, messages) : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double spin = argc == 4 ? parsed(argv[1], 0, 1e6) : -1;
    double rounds = argc == 4 ? parsed(argv[2], 3, MAX_ROUNDS) : -1;
    double messages = argc == 4 ? parsed(argv[3], 1, MAX_MESSAGES) : -1;
    if (size != 2 || spin < 0 || rounds < 0 || messages < 0 || rounds != (int)rounds || messages != (int)messages) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 spun_pingpong S_US ROUNDS MESSAGES  (S_US >= 0, ROUNDS 3..%d, "
                            "MESSAGES 1..%d)\n",
                    MAX_ROUNDS, MAX_MESSAGES);
        MPI_Finalize();
        return 2;
    }
    int n = (int)rounds, m = (int)messages;
    double *times = malloc((size_t)m * sizeof *times), *growth = malloc((size_t)n * sizeof *growth);
    if (!times || !growth)
        MPI_Abort(MPI_COMM_WORLD, 1);
    batch(rank, 0, m, times); /* warm-up */
    for (int r = 0; r < n; r++) {
        double plain, spun;
        if (r % 2 == 0) {
            plain = batch(rank, 0, m, times);
            spun = batch(rank, spin, m, times);
        } else {
            spun = batch(rank, spin, m, times);
            plain = batch(rank, 0, m, times);
        }
        growth[r] = spun - plain;
    }
    if (rank == 0) {
        double out[3];
        median_interval(growth, n, out);
        printf("%.3f %.3f %.3f\n", out[0], out[1], out[2]);
    }
    free(times);
    free(growth);
    MPI_Finalize();
    return 0;
}
