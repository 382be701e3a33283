/* NPB FT (3-D FFT PDE solver), written from the NPB specification
 * (RNR-94-007, NAS-95-020): random complex initial data u on an
 * nx x ny x nz grid, a forward 3-D FFT, then each iteration t multiplies by
 * exp(-4 alpha pi^2 |k|^2) (cumulatively, so t-fold), transforms back and
 * sums 1024 fixed points as a checksum.
 *
 * Data layouts follow the reference MPI code. One process ("0-D"): x-y-z
 * arrays, no messages. np processes ("1-D"): each holds nz/np z-planes (x
 * fastest); a forward FFT does x and y locally, transposes with one
 * MPI_Alltoall into z-x-(y/np) arrays (z fastest) and does z; the inverse
 * runs backwards with one MPI_Alltoall. Each iteration also reduces the
 * checksum (one complex) to rank 0. The reference's 2-D layout, used only
 * when np > nz, is not provided: such runs are refused. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_fft.h"
#include "npb.h"

static const double FT_SEED = 314159265.0;
static const double FT_MULT = 1220703125.0; /* 5^13 */
static const double FT_ALPHA = 1.0e-6;
static const double FT_PI = 3.141592653589793238;
static const double FT_EPSILON = 1.0e-12;

enum { MAX_ITER = 20, CHECK_POINTS = 1024 };

typedef struct {
    char cls;
    int nx, ny, nz, niter;
    double ref[MAX_ITER][2]; /* published checksums, real and imaginary */
} ft_class;

static const ft_class FT_CLASSES[] = {
    {'S', 64, 64, 64, 6,
     {{5.546087004964e+02, 4.845363331978e+02}, {5.546385409189e+02, 4.865304269511e+02},
      {5.546148406171e+02, 4.883910722336e+02}, {5.545423607415e+02, 4.901273169046e+02},
      {5.544255039624e+02, 4.917475857993e+02}, {5.542683411902e+02, 4.932597244941e+02}}},
    {'W', 128, 128, 32, 6,
     {{5.673612178944e+02, 5.293246849175e+02}, {5.631436885271e+02, 5.282149986629e+02},
      {5.594024089970e+02, 5.270996558037e+02}, {5.560698047020e+02, 5.260027904925e+02},
      {5.530898991250e+02, 5.249400845633e+02}, {5.504159734538e+02, 5.239212247086e+02}}},
    {'A', 256, 256, 128, 6,
     {{5.046735008193e+02, 5.114047905510e+02}, {5.059412319734e+02, 5.098809666433e+02},
      {5.069376896287e+02, 5.098144042213e+02}, {5.077892868474e+02, 5.101336130759e+02},
      {5.085233095391e+02, 5.104914655194e+02}, {5.091487099959e+02, 5.107917842803e+02}}},
    {'B', 512, 256, 256, 20,
     {{5.177643571579e+02, 5.077803458597e+02}, {5.154521291263e+02, 5.088249431599e+02},
      {5.146409228649e+02, 5.096208912659e+02}, {5.142378756213e+02, 5.101023387619e+02},
      {5.139626667737e+02, 5.103976610617e+02}, {5.137423460082e+02, 5.105948019802e+02},
      {5.135547056878e+02, 5.107404165783e+02}, {5.133910925466e+02, 5.108576573661e+02},
      {5.132470705390e+02, 5.109577278523e+02}, {5.131197729984e+02, 5.110460304483e+02},
      {5.130070319283e+02, 5.111252433800e+02}, {5.129070537032e+02, 5.111968077718e+02},
      {5.128182883502e+02, 5.112616233064e+02}, {5.127393733383e+02, 5.113203605551e+02},
      {5.126691062020e+02, 5.113735928093e+02}, {5.126064276004e+02, 5.114218460548e+02},
      {5.125504076570e+02, 5.114656139760e+02}, {5.125002331720e+02, 5.115053595966e+02},
      {5.124551951846e+02, 5.115415130407e+02}, {5.124146770029e+02, 5.115744692211e+02}}},
};

typedef struct {
    const ft_class *cls;
    int nprocs, me;
    long nx, ny, nz;
    long zl, yl;        /* local z planes (layout 1), local y columns (layout 3) */
    long local;         /* complex points per process */
    fft_plan px, py, pz;
    double *u0, *u1, *u2; /* interleaved complex */
    double *twiddle;
} ft_state;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "loggp-npb-ft: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* a^e mod 2^46 with NPB's generator arithmetic. */
static double lcg_power(double a, long e)
{
    double result = 1.0, aj = a;
    while (e > 0) {
        if (e & 1)
            npb_randlc(&result, aj);
        npb_randlc(&aj, aj);
        e >>= 1;
    }
    return result;
}

/* Frequency of index i on an n-point axis: 0, 1, ..., n/2-1, -n/2, ..., -1. */
static long freq(long i, long n)
{
    return (i + n / 2) % n - n / 2;
}

/* exp(-4 alpha pi^2 |k|^2) in the layout the frequency-space data has:
 * x-y-z for one process, z-x-(local y) otherwise. */
static void compute_twiddle(ft_state *s)
{
    const double ap = -4.0 * FT_ALPHA * FT_PI * FT_PI;
    if (s->nprocs == 1) {
        for (long k = 0; k < s->nz; k++)
            for (long j = 0; j < s->ny; j++)
                for (long i = 0; i < s->nx; i++) {
                    long kk = freq(k, s->nz), jj = freq(j, s->ny), ii = freq(i, s->nx);
                    s->twiddle[i + s->nx * (j + s->ny * k)] = exp(ap * (double)(kk * kk + jj * jj + ii * ii));
                }
    } else {
        long y0 = s->me * s->yl;
        for (long j = 0; j < s->yl; j++)
            for (long i = 0; i < s->nx; i++)
                for (long k = 0; k < s->nz; k++) {
                    long kk = freq(k, s->nz), jj = freq(y0 + j, s->ny), ii = freq(i, s->nx);
                    s->twiddle[k + s->nz * (i + s->nx * j)] = exp(ap * (double)(kk * kk + jj * jj + ii * ii));
                }
    }
}

/* Initial data: consecutive generator outputs fill (re, im) of the points in
 * x-y-z order; each process starts at its first z-plane. */
static void initial_conditions(ft_state *s, double *u, int perturb)
{
    double start = FT_SEED;
    long z0 = s->me * s->zl;
    npb_randlc(&start, lcg_power(FT_MULT, 2 * s->nx * s->ny * z0));
    double plane_step = lcg_power(FT_MULT, 2 * s->nx * s->ny);
    for (long k = 0; k < s->zl; k++) {
        double x0 = start;
        npb_vranlc((int)(2 * s->nx * s->ny), &x0, FT_MULT, u + 2 * s->nx * s->ny * k);
        npb_randlc(&start, plane_step);
    }
    if (perturb && s->me == 0)
        u[0] += 1.0; /* test only: point (0,0,0), which the checksum samples */
}

/* Local transpose of an n1 x n2 matrix of complex numbers (n1 fastest) into
 * n2 x n1, in tiles so both sides stay in cache. */
static void transpose_local(const double *in, double *out, long n1, long n2)
{
    enum { TILE = 32 };
    for (long j0 = 0; j0 < n2; j0 += TILE)
        for (long i0 = 0; i0 < n1; i0 += TILE) {
            long jm = j0 + TILE < n2 ? j0 + TILE : n2, im = i0 + TILE < n1 ? i0 + TILE : n1;
            for (long i = i0; i < im; i++)
                for (long j = j0; j < jm; j++) {
                    out[2 * (j + n2 * i)] = in[2 * (i + n1 * j)];
                    out[2 * (j + n2 * i) + 1] = in[2 * (i + n1 * j) + 1];
                }
        }
}

/* After the all-to-all, `in` holds np blocks of (n2 x n1/np); stack them
 * along the first index into (n2*np) x (n1/np). */
static void transpose_finish(const double *in, double *out, long n1, long n2, int np)
{
    long cols = n1 / np;
    for (int p = 0; p < np; p++)
        for (long j = 0; j < cols; j++)
            memcpy(out + 2 * (p * n2 + (long)np * n2 * j), in + 2 * (n2 * (j + cols * p)),
                   sizeof(double) * 2 * (size_t)n2);
}

static void alltoall(ft_state *s, const double *in, double *out)
{
    int count = (int)(s->local / s->nprocs);
    MPI_Alltoall(in, count, MPI_C_DOUBLE_COMPLEX, out, count, MPI_C_DOUBLE_COMPLEX, MPI_COMM_WORLD);
}

/* Forward 3-D FFT of x1 into x2 (x1 is overwritten). */
static void fft_forward(ft_state *s, double *x1, double *x2)
{
    const long nx = s->nx, ny = s->ny, nz = s->nz;
    fft_lines(&s->px, 1, x1, x1, ny, nx, s->zl, nx * ny, 1);  /* x-lines */
    fft_lines(&s->py, 1, x1, x1, nx, 1, s->zl, nx * ny, nx);  /* y-lines */
    if (s->nprocs == 1) {
        fft_lines(&s->pz, 1, x1, x2, nx, 1, ny, nx, nx * ny); /* z-lines */
        return;
    }
    transpose_local(x1, x2, nx * ny, s->zl);
    alltoall(s, x2, x1);
    transpose_finish(x1, x2, nx * ny, s->zl, s->nprocs);
    fft_lines(&s->pz, 1, x2, x2, nx * s->yl, nz, 1, 0, 1);    /* z-lines, now contiguous */
}

/* Inverse 3-D FFT (unscaled) of x1 into x2 (x1 is overwritten). */
static void fft_inverse(ft_state *s, double *x1, double *x2)
{
    const long nx = s->nx, ny = s->ny, nz = s->nz;
    if (s->nprocs == 1) {
        fft_lines(&s->pz, -1, x1, x2, nx, 1, ny, nx, nx * ny);
        fft_lines(&s->py, -1, x2, x2, nx, 1, s->zl, nx * ny, nx);
        fft_lines(&s->px, -1, x2, x2, ny, nx, s->zl, nx * ny, 1);
        return;
    }
    fft_lines(&s->pz, -1, x1, x1, nx * s->yl, nz, 1, 0, 1);
    transpose_local(x1, x2, nz, nx * s->yl);
    alltoall(s, x2, x1);
    transpose_finish(x1, x2, nz, nx * s->yl, s->nprocs);
    fft_lines(&s->py, -1, x2, x2, nx, 1, s->zl, nx * ny, nx);
    fft_lines(&s->px, -1, x2, x2, ny, nx, s->zl, nx * ny, 1);
}

/* u0 *= twiddle; u1 = u0. */
static void evolve(ft_state *s)
{
    double *restrict u0 = s->u0, *restrict u1 = s->u1;
    const double *restrict tw = s->twiddle;
    for (long i = 0; i < s->local; i++) {
        u0[2 * i] *= tw[i];
        u0[2 * i + 1] *= tw[i];
        u1[2 * i] = u0[2 * i];
        u1[2 * i + 1] = u0[2 * i + 1];
    }
}

/* Sum of 1024 fixed points of u (x-y-z layout, own z-planes), divided by
 * the point count, reduced to rank 0. */
static void checksum(ft_state *s, const double *u, double sum[2])
{
    double chk[2] = {0.0, 0.0};
    long z0 = s->me * s->zl;
    for (long j = 1; j <= CHECK_POINTS; j++) {
        long q = j % s->nx, r = (3 * j) % s->ny, z = (5 * j) % s->nz;
        if (z >= z0 && z < z0 + s->zl) {
            long at = q + s->nx * (r + s->ny * (z - z0));
            chk[0] += u[2 * at];
            chk[1] += u[2 * at + 1];
        }
    }
    double ntotal = (double)s->nx * s->ny * s->nz;
    chk[0] /= ntotal;
    chk[1] /= ntotal;
    MPI_Reduce(chk, sum, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    ft_state s;
    memset(&s, 0, sizeof s);
    npb_args args;
    int status = npb_begin(&argc, &argv, "ft", "SWAB", &s.me, &s.nprocs, &args);
    if (status >= 0)
        return status;
    for (size_t i = 0; i < sizeof FT_CLASSES / sizeof FT_CLASSES[0]; i++)
        if (FT_CLASSES[i].cls == args.cls)
            s.cls = &FT_CLASSES[i];
    const ft_class *cls = s.cls;
    s.nx = cls->nx;
    s.ny = cls->ny;
    s.nz = cls->nz;
    long maxnp = s.nz < s.ny ? s.nz : s.ny;
    if (!npb_is_power_of_two(s.nprocs) || s.nprocs > maxnp) {
        if (s.me == 0)
            fprintf(stderr, "loggp-npb-ft: %d processes: class %c needs a power-of-two process count "
                            "from 1 to %ld (only NPB's 1-D layout is implemented)\n",
                    s.nprocs, cls->cls, maxnp);
        MPI_Finalize();
        return 2;
    }
    s.zl = s.nz / s.nprocs;
    s.yl = s.ny / s.nprocs;
    s.local = s.nx * s.ny * s.zl;
    if (fft_plan_init(&s.px, (int)s.nx) || fft_plan_init(&s.py, (int)s.ny) || fft_plan_init(&s.pz, (int)s.nz)) {
        fprintf(stderr, "loggp-npb-ft: cannot set up FFTs of %ldx%ldx%ld\n", s.nx, s.ny, s.nz);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t bytes = sizeof(double) * 2 * (size_t)s.local;
    s.u0 = xmalloc(bytes);
    s.u1 = xmalloc(bytes);
    s.u2 = xmalloc(bytes);
    s.twiddle = xmalloc(bytes / 2);

    if (s.me == 0) {
        printf("\n\n NAS Parallel Benchmarks 3.4 (loggp C+MPI) -- FT Benchmark\n\n");
        printf(" Size                : %4ldx%4ldx%4ld  (class %c)\n", s.nx, s.ny, s.nz, cls->cls);
        printf(" Iterations          :        %7d\n", cls->niter);
        printf(" Number of processes :        %7d\n", s.nprocs);
        printf(" Layout type         :        %7s\n\n", s.nprocs == 1 ? "0D" : "1D");
        fflush(stdout);
    }

    /* Untimed warm-up that touches all data, as the reference does. */
    compute_twiddle(&s);
    initial_conditions(&s, s.u1, 0);
    fft_forward(&s, s.u1, s.u0);

    double sums[MAX_ITER][2];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Pcontrol(1); /* the timed section is the kernel region (a study's scope = "kernel") */
    compute_twiddle(&s);
    initial_conditions(&s, s.u1, args.perturb);
    fft_forward(&s, s.u1, s.u0);
    for (int it = 0; it < cls->niter; it++) {
        evolve(&s);
        fft_inverse(&s, s.u1, s.u2);
        checksum(&s, s.u2, sums[it]);
        if (s.me == 0)
            printf(" T = %4d     Checksum = %22.12E %22.12E\n", it + 1, sums[it][0], sums[it][1]);
    }
    int verified = 0;
    if (s.me == 0) {
        verified = 1;
        for (int it = 0; it < cls->niter; it++) {
            double dr = sums[it][0] - cls->ref[it][0], di = sums[it][1] - cls->ref[it][1];
            double err = sqrt((dr * dr + di * di) /
                              (cls->ref[it][0] * cls->ref[it][0] + cls->ref[it][1] * cls->ref[it][1]));
            if (!(err <= FT_EPSILON)) /* NaN fails too */
                verified = 0;
        }
    }
    MPI_Pcontrol(0);
    double elapsed = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&elapsed, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (s.me == 0) {
        printf(" Result verification %s\n", verified ? "successful" : "failed");
        double ntotal = (double)s.nx * s.ny * s.nz;
        double mops = tmax > 0 ? 1.0e-6 * ntotal *
                                     (14.8157 + 7.19641 * log(ntotal) +
                                      (5.23518 + 7.21113 * log(ntotal)) * cls->niter) / tmax
                               : 0.0;
        npb_report report = {
            .name = "FT", .cls = cls->cls, .size = {s.nx, s.ny, s.nz}, .niter = cls->niter,
            .time_s = tmax, .mops = mops, .optype = "floating point", .verified = verified,
            .nprocs = s.nprocs,
        };
        npb_print_report(&report);
    }
    MPI_Bcast(&verified, 1, MPI_INT, 0, MPI_COMM_WORLD);

    free(s.u0);
    free(s.u1);
    free(s.u2);
    free(s.twiddle);
    fft_plan_free(&s.px);
    fft_plan_free(&s.py);
    fft_plan_free(&s.pz);
    MPI_Finalize();
    return verified ? 0 : 1;
}
