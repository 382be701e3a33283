/* NPB's random number generator, command line and report (see npb.h). */
#include "npb.h"

#include <ctype.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The generator works on integers below 2^46. The specification computes
 * a*x mod 2^46 in doubles by splitting each factor into 23-bit halves; since
 * 2^46 divides 2^64, the wrapping 64-bit product masked to 46 bits is the
 * same number, exactly, and much faster. */
#define NPB_MASK46 ((UINT64_C(1) << 46) - 1)
static const double npb_r46 = 1.0 / 70368744177664.0; /* 2^-46 */

static inline uint64_t npb_mulmod46(uint64_t a, uint64_t x)
{
    return (a * x) & NPB_MASK46;
}

/* Values below 2^46 convert exactly; the signed conversion is the cheap one. */
static inline double npb_to_unit(uint64_t x)
{
    return (double)(int64_t)x * npb_r46;
}

double npb_randlc(double *x, double a)
{
    uint64_t next = npb_mulmod46((uint64_t)a, (uint64_t)*x);
    *x = (double)(int64_t)next;
    return npb_to_unit(next);
}

enum { NPB_LANES = 4 };

void npb_vranlc(int n, double *x, double a, double *y)
{
    uint64_t mult = (uint64_t)a, state = (uint64_t)*x;
    if (n < 2 * NPB_LANES) {
        for (int i = 0; i < n; i++) {
            state = npb_mulmod46(mult, state);
            y[i] = npb_to_unit(state);
        }
        *x = (double)(int64_t)state;
        return;
    }
    /* Four interleaved chains, each stepping by a^4, break the serial
     * dependency of one chain; they produce the same sequence in order. */
    uint64_t lane[NPB_LANES];
    for (int k = 0; k < NPB_LANES; k++) {
        state = npb_mulmod46(mult, state);
        lane[k] = state;
        y[k] = npb_to_unit(state);
    }
    uint64_t mult4 = npb_mulmod46(npb_mulmod46(mult, mult), npb_mulmod46(mult, mult));
    int i = NPB_LANES;
    for (; i + NPB_LANES <= n; i += NPB_LANES) {
        for (int k = 0; k < NPB_LANES; k++) {
            lane[k] = npb_mulmod46(mult4, lane[k]);
            y[i + k] = npb_to_unit(lane[k]);
        }
    }
    state = lane[NPB_LANES - 1];
    for (; i < n; i++) {
        state = npb_mulmod46(mult, state);
        y[i] = npb_to_unit(state);
    }
    *x = (double)(int64_t)state;
}

static int npb_rank_or_zero(void)
{
    int initialized = 0, finalized = 0, rank = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void npb_usage(FILE *out, const char *kernel, const char *classes)
{
    fprintf(out, "usage: mpiexec -n NP loggp-npb-%s CLASS [--perturb]\n  CLASS: one of", kernel);
    for (const char *c = classes; *c; c++)
        fprintf(out, " %c", *c);
    fprintf(out, "\n  --perturb: test only, corrupt one value so verification must fail\n");
}

int npb_help_asked(int argc, char **argv, const char *kernel, const char *classes)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("loggp's NPB ");
            for (const char *k = kernel; *k; k++)
                putchar(toupper((unsigned char)*k));
            printf(" kernel: NPB 3.4's problem and verification (npb-harness/kernels/README.md).\n");
            npb_usage(stdout, kernel, classes);
            printf("example:\n  loggp run -n 2 -- loggp-npb-%s S\n", kernel);
            return 1;
        }
    }
    return 0;
}

int npb_parse_args(int argc, char **argv, const char *kernel, const char *classes, npb_args *out)
{
    int rank = npb_rank_or_zero();
    out->cls = 0;
    out->perturb = 0;
    const char *bad = NULL, *why = NULL;

    for (int i = 1; i < argc && !bad; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--perturb") == 0) {
            if (out->perturb) { bad = arg; why = "given twice"; }
            out->perturb = 1;
        } else if (arg[0] == '-') {
            bad = arg; why = "unknown option";
        } else if (out->cls) {
            bad = arg; why = "extra argument (the class is already given)";
        } else if (strlen(arg) == 1 && strchr(classes, toupper((unsigned char)arg[0]))) {
            out->cls = (char)toupper((unsigned char)arg[0]);
        } else {
            bad = arg; why = "unknown or unsupported class";
        }
    }
    if (!bad && !out->cls)
        why = "missing CLASS";
    if (why) {
        if (rank == 0) {
            if (bad)
                fprintf(stderr, "loggp-npb-%s: '%s': %s\n", kernel, bad, why);
            else
                fprintf(stderr, "loggp-npb-%s: %s\n", kernel, why);
            npb_usage(stderr, kernel, classes);
        }
        return 2;
    }
    return 0;
}

int npb_begin(int *argc, char ***argv, const char *kernel, const char *classes, int *rank, int *nprocs,
              npb_args *args)
{
    if (npb_help_asked(*argc, *argv, kernel, classes))
        return 0;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nprocs);
    if (npb_parse_args(*argc, *argv, kernel, classes, args) != 0) {
        MPI_Finalize();
        return 2;
    }
    return -1;
}

void npb_print_report(const npb_report *r)
{
    printf("\n\n %s Benchmark Completed.\n", r->name);
    printf(" Class           =                        %c\n", r->cls);
    if (r->size[1] == 0 && r->size[2] == 0)
        printf(" Size            =          %15ld\n", r->size[0]);
    else
        printf(" Size            =           %4ldx%4ldx%4ld\n", r->size[0], r->size[1], r->size[2]);
    printf(" Iterations      =                   %6d\n", r->niter);
    /* NPB prints %.2f; microseconds keep short runs measurable. */
    printf(" Time in seconds =             %12.6f\n", r->time_s);
    printf(" Total processes =                   %6d\n", r->nprocs);
    printf(" Mop/s total     =             %12.2f\n", r->mops);
    printf(" Mop/s/process   =             %12.2f\n", r->nprocs > 0 ? r->mops / r->nprocs : 0.0);
    printf(" Operation type  = %24s\n", r->optype);
    printf(" Verification    =             %12s\n", r->verified ? "SUCCESSFUL" : "UNSUCCESSFUL");
    printf(" Version         =                      3.4 (loggp)\n");
    fflush(stdout);
}
