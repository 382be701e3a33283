/* A ping-pong whose ranks wait D us after each receive before they send again, under
 * plain MPI, at the sizes loggp calibrate reads L over (8, 64, 512 and 4096 B): how much
 * a half round trip grows for a delay of D on this machine, against D, with no
 * emulation involved. A hold of L or of (m-1)G delays a message as such a wait does;
 * docs/benchmarks.md ("Known defects": L under G) compares the two. Each round times,
 * for every size and delay, a batch of MESSAGES round trips without the wait and one
 * with it, in alternating order; rank 0 prints one line per size and delay: the size,
 * the delay, then the median over the rounds of the growth of the median half round
 * trip with its 95 % interval (order statistics), in us:
 *   spun_reply ROUNDS MESSAGES D_US [D_US ...] */
#include <stdio.h>

#include "spun.h"

#define MAX_ROUNDS 1000
#define MAX_MESSAGES 100000
#define MAX_DELAYS 8
#define SIZES 4

static const int SIZE_BYTES[SIZES] = {8, 64, 512, 4096};
static char buffer[4096];

/* The median half round trip of a batch of `bytes`, in us; rank 1 returns 0. */
static double batch(int rank, int bytes, double wait, int messages, double *times)
{
    for (int i = 0; i < messages; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buffer, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buffer, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_us(wait);
        } else {
            MPI_Recv(buffer, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_us(wait);
            MPI_Send(buffer, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
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
    int delays = argc - 3, ok = size == 2 && delays >= 1 && delays <= MAX_DELAYS;
    double rounds = ok ? parsed(argv[1], 3, MAX_ROUNDS) : -1;
    double messages = ok ? parsed(argv[2], 1, MAX_MESSAGES) : -1;
    double delay[MAX_DELAYS];
    for (int d = 0; ok && d < delays; d++) {
        delay[d] = parsed(argv[3 + d], 0, 1e6);
        ok = delay[d] > 0;
    }
    if (!ok || rounds < 0 || messages < 0 || rounds != (int)rounds || messages != (int)messages) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 spun_reply ROUNDS MESSAGES D_US [D_US ...]  (ROUNDS 3..%d, "
                            "MESSAGES 1..%d, 1..%d delays each > 0 and <= 1e6)\n",
                    MAX_ROUNDS, MAX_MESSAGES, MAX_DELAYS);
        MPI_Finalize();
        return 2;
    }
    int n = (int)rounds, m = (int)messages;
    double *times = malloc((size_t)m * sizeof *times);
    double *growth = malloc((size_t)(SIZES * delays * n) * sizeof *growth);
    if (!times || !growth) {
        fprintf(stderr, "spun_reply: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < n; r++)
        for (int s = 0; s < SIZES; s++)
            for (int d = 0; d < delays; d++) {
                double plain, waited;
                if ((r + d) % 2) {
                    plain = batch(rank, SIZE_BYTES[s], 0, m, times);
                    waited = batch(rank, SIZE_BYTES[s], delay[d], m, times);
                } else {
                    waited = batch(rank, SIZE_BYTES[s], delay[d], m, times);
                    plain = batch(rank, SIZE_BYTES[s], 0, m, times);
                }
                growth[(s * delays + d) * n + r] = waited - plain;
            }
    if (rank == 0)
        for (int s = 0; s < SIZES; s++)
            for (int d = 0; d < delays; d++) {
                double out[3];
                median_interval(growth + (s * delays + d) * n, n, out);
                printf("%d %g %.4f %.4f %.4f\n", SIZE_BYTES[s], delay[d], out[0], out[1], out[2]);
            }
    free(times);
    free(growth);
    MPI_Finalize();
    return 0;
}
