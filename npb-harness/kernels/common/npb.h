/* Shared pieces of loggp's NPB kernels: NPB's random number generator,
 * command-line handling and the report in NPB's format. */
#ifndef LOGGP_NPB_H
#define LOGGP_NPB_H

/* NPB's linear congruential generator: x_{k+1} = a * x_k mod 2^46, done in
 * double precision exactly as the NPB specification prescribes. Returns the
 * new x * 2^-46 in (0, 1) and updates *x. */
double npb_randlc(double *x, double a);

/* Fills y[0..n-1] with the next n numbers of the same sequence; updates *x. */
void npb_vranlc(int n, double *x, double a, double *y);

/* Parsed command line: `<prog> CLASS [--perturb]` with CLASS one of S W A B
 * (and C where a kernel supports it). */
typedef struct {
    char cls;     /* 'S', 'W', 'A', 'B', 'C' */
    int perturb;  /* test-only: corrupt one value so verification must fail */
} npb_args;

/* `--help` or `-h` anywhere on the command line: prints what the kernel
 * takes, with an example, to stdout and returns 1 (the caller exits 0 before
 * MPI_Init, so help needs no MPI); else 0. */
int npb_help_asked(int argc, char **argv, const char *kernel, const char *classes);

/* Parses argv on every rank. On bad input, rank 0 prints an error naming the
 * bad token and usage to stderr; returns 0 on success, 2 on bad usage (the
 * caller then calls MPI_Finalize and exits 2). `classes` lists the accepted
 * class letters, e.g. "SWAB". */
int npb_parse_args(int argc, char **argv, const char *kernel, const char *classes, npb_args *out);

/* The start every kernel shares: `--help` (answered before MPI_Init, so help
 * needs no MPI), MPI_Init, this rank and the number of processes, then the
 * command line. Returns -1 when the kernel goes on; otherwise the status to
 * exit with: 0 after help, 2 after bad usage (MPI then finalized). */
int npb_begin(int *argc, char ***argv, const char *kernel, const char *classes, int *rank, int *nprocs,
              npb_args *args);

/* Is n one of 1, 2, 4, 8, ...? (the process counts several kernels need) */
static inline int npb_is_power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

typedef struct {
    const char *name;    /* "CG" */
    char cls;
    long size[3];        /* problem size; unused dimensions 0 */
    int niter;
    double time_s;       /* timed section, max over ranks */
    double mops;         /* Mop/s total */
    const char *optype;  /* "floating point", "keys ranked", "Random numbers generated" */
    int verified;        /* 1 SUCCESSFUL, 0 UNSUCCESSFUL */
    int nprocs;
} npb_report;

/* Prints the report in NPB's format on stdout (call on rank 0 only). Lines
 * tools parse: " <NAME> Benchmark Completed.", " Class           =",
 * " Size            =", " Iterations      =", " Time in seconds =",
 * " Total processes =", " Mop/s total     =", " Operation type  =",
 * " Verification    =      SUCCESSFUL" (or UNSUCCESSFUL). */
void npb_print_report(const npb_report *r);

#endif
