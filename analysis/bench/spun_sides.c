/* The stream interval g(m) at two sizes with CPU time spun by the program itself on the
 * send side, the receive side or both, against no spin, under plain MPI: rank 0 spins
 * S us before each send, rank 1 S us after each receive. g(m) is measured as loggp-probe
 * does, (t(16) - t(1)) / 15 from bursts of 16 messages and single ones, each burst
 * ended by a one-byte reply. Each round measures every spin mode at both sizes, modes in
 * a rotating order; per round, each mode less no spin gives the two intervals' growth
 * and G's slope between the sizes. It is the apparatus-free twin of
 * analysis/bench/bulk_slope_by_side.py (docs/benchmarks.md, "Known defects"). Rank 0
 * prints one line per mode: its name, then median, low and high of the 95 % interval
 * (order statistics) of the slope's change (ns/B), the small size's growth and the
 * large size's (us):
 *   spun_sides S_US ROUNDS SAMPLES SMALL LARGE */
#include <stdio.h>

#include "spun.h"

#define BURST 16
#define MAX_ROUNDS 1000
#define MAX_SAMPLES 10000
#define MAX_BYTES (1 << 24)

enum mode { NONE, BOTH, RECEIVE, SEND, MODES };
static const char *const MODE_NAMES[MODES] = {"none", "both", "receive", "send"};

/* One burst of n messages of `bytes`, spun as `mode` says; rank 0 returns its time in us. */
static double burst(int rank, enum mode mode, double spin, int n, char *buffer, int bytes)
{
    char reply = 0;
    double send_spin = mode == BOTH || mode == SEND ? spin : 0;
    double receive_spin = mode == BOTH || mode == RECEIVE ? spin : 0;
    double start = MPI_Wtime();
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            spin_us(send_spin);
            MPI_Send(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
        MPI_Recv(&reply, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < n; i++) {
            MPI_Recv(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            spin_us(receive_spin);
        }
        MPI_Send(&reply, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    return (MPI_Wtime() - start) * 1e6;
}

/* g(m) in us from `samples` bursts of BURST and as many single messages, alternating. */
static double gap(int rank, enum mode mode, double spin, int samples, char *buffer, int bytes, double *many,
                  double *one)
{
    for (int i = 0; i < samples; i++) {
        many[i] = burst(rank, mode, spin, BURST, buffer, bytes);
        one[i] = burst(rank, mode, spin, 1, buffer, bytes);
    }
    return (median_of(many, samples) - median_of(one, samples)) / (BURST - 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int known = argc == 6;
    double spin = known ? parsed(argv[1], 0, 1e6) : -1;
    double rounds = known ? parsed(argv[2], 3, MAX_ROUNDS) : -1;
    double samples = known ? parsed(argv[3], 1, MAX_SAMPLES) : -1;
    double small = known ? parsed(argv[4], 1, MAX_BYTES) : -1, large = known ? parsed(argv[5], 1, MAX_BYTES) : -1;
    if (size != 2 || spin < 0 || rounds < 0 || samples < 0 || small < 0 || large <= small ||
        rounds != (int)rounds || samples != (int)samples || small != (int)small || large != (int)large) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 spun_sides S_US ROUNDS SAMPLES SMALL LARGE  (S_US >= 0, ROUNDS "
                            "3..%d, SAMPLES 1..%d, 1 <= SMALL < LARGE <= %d bytes)\n",
                    MAX_ROUNDS, MAX_SAMPLES, MAX_BYTES);
        MPI_Finalize();
        return 2;
    }
    int n = (int)rounds, s = (int)samples, sizes[2] = {(int)small, (int)large};
    char *buffer = calloc((size_t)large, 1);
    double *many = malloc((size_t)s * sizeof *many), *one = malloc((size_t)s * sizeof *one);
    double *change[MODES][3]; /* per mode: slope (ns/B), small growth, large growth (us), per round */
    for (int m = 0; m < MODES; m++)
        for (int k = 0; k < 3; k++)
            if (!(change[m][k] = malloc((size_t)n * sizeof(double))))
                MPI_Abort(MPI_COMM_WORLD, 1);
    if (!buffer || !many || !one)
        MPI_Abort(MPI_COMM_WORLD, 1);
    gap(rank, NONE, spin, s, buffer, sizes[1], many, one); /* warm-up */
    for (int r = 0; r < n; r++) {
        double g[MODES][2];
        for (int k = 0; k < MODES; k++) {
            enum mode mode = (enum mode)((r + k) % MODES); /* each round starts one mode further on */
            for (int z = 0; z < 2; z++)
                g[mode][z] = gap(rank, mode, spin, s, buffer, sizes[z], many, one);
        }
        for (int m = 0; m < MODES; m++) {
            double grown_small = g[m][0] - g[NONE][0], grown_large = g[m][1] - g[NONE][1];
            change[m][0][r] = (grown_large - grown_small) * 1000.0 / (sizes[1] - sizes[0]);
            change[m][1][r] = grown_small;
            change[m][2][r] = grown_large;
        }
    }
    if (rank == 0) {
        for (int m = BOTH; m < MODES; m++) {
            double out[3][3];
            for (int k = 0; k < 3; k++)
                median_interval(change[m][k], n, out[k]);
            printf("%s %.5f %.5f %.5f %.3f %.3f %.3f %.3f %.3f %.3f\n", MODE_NAMES[m], out[0][0], out[0][1],
                   out[0][2], out[1][0], out[1][1], out[1][2], out[2][0], out[2][1], out[2][2]);
        }
    }
    for (int m = 0; m < MODES; m++)
        for (int k = 0; k < 3; k++)
            free(change[m][k]);
    free(buffer);
    free(many);
    free(one);
    MPI_Finalize();
    return 0;
}
