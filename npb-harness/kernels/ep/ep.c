/* NPB EP ("embarrassingly parallel"), written from the NPB specification:
 * 2^(M+1) uniform numbers of NPB's generator become pairs; accepted pairs
 * are turned into Gaussian deviates by the Marsaglia polar method; NPB 3.4
 * verifies the sums of their absolute values and the number of accepted
 * pairs. Communication: only the final reductions. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "npb.h"

enum { BATCH_LOG2 = 16, BATCH_PAIRS = 1 << BATCH_LOG2, ANNULI = 10 };

static const double EP_SEED = 271828183.0;
static const double EP_MULT = 1220703125.0; /* 5^13 */
static const double EP_EPSILON = 1.0e-8;

typedef struct {
    char cls;
    int log2_pairs;   /* M: 2^M pairs in all */
    double sx_ref, sy_ref; /* sums of |X| and |Y| */
    double pairs_ref;      /* accepted pairs */
} ep_class;

/* Published verification values of NPB 3.4 (which sums absolute values:
 * earlier versions' signed sums lost digits to cancellation). */
static const ep_class EP_CLASSES[] = {
    {'S', 24, 1.051299420395306e+7, 1.051517131857535e+7, 13176389.0},
    {'W', 25, 2.102505525182392e+7, 2.103162209578822e+7, 26354769.0},
    {'A', 28, 1.682235632304711e+8, 1.682195123368299e+8, 210832767.0},
    {'B', 30, 6.728927543423024e+8, 6.728951822504275e+8, 843345606.0},
    {'C', 32, 2.691444083862931e+9, 2.691519118724585e+9, 3373275903.0},
};

/* Seed of batch `batch`: EP_SEED * step^batch mod 2^46, by binary powering. */
static double batch_seed(long batch, double step)
{
    double seed = EP_SEED, power = step;
    while (batch > 0) {
        if (batch & 1)
            npb_randlc(&seed, power);
        batch >>= 1;
        if (batch > 0)
            npb_randlc(&power, power);
    }
    return seed;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    npb_args args;
    int status = npb_begin(&argc, &argv, "ep", "SWABC", &rank, &nprocs, &args);
    if (status >= 0)
        return status;
    const ep_class *cls = NULL;
    for (size_t i = 0; i < sizeof EP_CLASSES / sizeof EP_CLASSES[0]; i++)
        if (EP_CLASSES[i].cls == args.cls)
            cls = &EP_CLASSES[i];

    const long batches = 1L << (cls->log2_pairs - BATCH_LOG2);
    /* Any process count works; extra processes beyond the batch count idle. */
    long per_proc = batches / nprocs, extra = batches % nprocs;
    long my_first = rank * per_proc + (rank < extra ? rank : extra);
    long my_count = per_proc + (rank < extra ? 1 : 0);

    if (rank == 0) {
        printf("\n\n NAS Parallel Benchmarks 3.4 (loggp C+MPI) -- EP Benchmark\n\n");
        printf(" Number of random numbers generated: %15.0f\n", ldexp(1.0, cls->log2_pairs + 1));
        printf(" Number of active processes:         %15d\n", nprocs);
    }

    double *uniforms = malloc(sizeof(double) * 2 * BATCH_PAIRS);
    if (!uniforms) {
        fprintf(stderr, "loggp-npb-ep: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* step = a^(2*BATCH_PAIRS): the generator advanced by one whole batch. */
    double step = EP_MULT;
    for (int i = 0; i <= BATCH_LOG2; i++)
        npb_randlc(&step, step);

    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    MPI_Pcontrol(1); /* the timed section is the kernel region (a study's scope = "kernel") */

    double sx = 0.0, sy = 0.0, counts[ANNULI] = {0};
    for (long b = 0; b < my_count; b++) {
        double seed = batch_seed(my_first + b, step);
        npb_vranlc(2 * BATCH_PAIRS, &seed, EP_MULT, uniforms);
        if (args.perturb && rank == 0 && b == 0)
            uniforms[0] = uniforms[1] = 0.75; /* test only: a pair the reference never draws */
        for (int i = 0; i < BATCH_PAIRS; i++) {
            double x1 = 2.0 * uniforms[2 * i] - 1.0;
            double x2 = 2.0 * uniforms[2 * i + 1] - 1.0;
            double r2 = x1 * x1 + x2 * x2;
            if (r2 <= 1.0) {
                double scale = sqrt(-2.0 * log(r2) / r2);
                double g1 = fabs(x1 * scale), g2 = fabs(x2 * scale);
                double ring = fmax(g1, g2);
                counts[(int)ring] += 1.0;
                sx += g1;
                sy += g2;
            }
        }
    }

    /* The reference's three reductions: sx, sy, then the annulus counts. */
    double total_counts[ANNULI];
    MPI_Allreduce(MPI_IN_PLACE, &sx, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &sy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(counts, total_counts, ANNULI, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    MPI_Pcontrol(0);
    double elapsed = MPI_Wtime() - t_start;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(uniforms);

    int verified = 0;
    if (rank == 0) {
        double sx_err = fabs((sx - cls->sx_ref) / cls->sx_ref);
        double sy_err = fabs((sy - cls->sy_ref) / cls->sy_ref);
        double pairs = 0.0;
        for (int i = 0; i < ANNULI; i++)
            pairs += total_counts[i];
        double pairs_err = fabs((pairs - cls->pairs_ref) / cls->pairs_ref);
        verified = sx_err <= EP_EPSILON && sy_err <= EP_EPSILON &&
                   pairs_err <= EP_EPSILON; /* NaN fails */
        printf("\n EP Benchmark Results:\n\n");
        printf(" N = 2^%5d\n", cls->log2_pairs);
        printf(" No. Gaussian Pairs = %15.0f (reference %.0f)\n", pairs, cls->pairs_ref);
        printf(" Sums of |X|, |Y| = %25.15e %25.15e\n", sx, sy);
        printf(" Reference sums = %25.15e %25.15e\n", cls->sx_ref, cls->sy_ref);
        printf(" Relative errors = %10.3e %10.3e (tolerance %.0e)\n", sx_err, sy_err, EP_EPSILON);
        printf(" Counts:\n");
        for (int i = 0; i < ANNULI; i++)
            printf("%3d%15.0f\n", i, total_counts[i]);

        npb_report report = {
            .name = "EP", .cls = cls->cls,
            .size = {1L << (cls->log2_pairs + 1), 0, 0}, .niter = 0,
            .time_s = elapsed,
            .mops = elapsed > 0 ? ldexp(1.0, cls->log2_pairs + 1) / elapsed / 1.0e6 : 0.0,
            .optype = "Random numbers generated", .verified = verified, .nprocs = nprocs,
        };
        npb_print_report(&report);
    }
    MPI_Bcast(&verified, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return verified ? 0 : 1;
}
