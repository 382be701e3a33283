/* Batched complex FFTs of power-of-two length for FT: a self-sorting
 * (Stockham) radix-2/radix-4 transform applied to a block of lines at once,
 * so that the innermost loop runs across lines and vectorizes. */
#ifndef LOGGP_FT_FFT_H
#define LOGGP_FT_FFT_H

enum { FFT_BLOCK = 16 }; /* lines transformed together */

typedef struct {
    int n, logn;
    double *wr, *wi;        /* roots of unity for every stage (n - 1 entries) */
    double *xr, *xi, *yr, *yi; /* scratch: n x FFT_BLOCK, split real/imaginary */
} fft_plan;

/* Returns 0, or -1 if n is not a power of two >= 1 or memory runs out. */
int fft_plan_init(fft_plan *p, int n);
void fft_plan_free(fft_plan *p);

/* Transforms lines of interleaved complex data (re, im pairs):
 * y[k] = sum_j x[j] * exp(dir * 2*pi*i * j*k / n), dir = +1 or -1, no scaling.
 * Line (o, q) for o < n_outer, q < n_inner starts at complex index
 * o*outer_stride + q*inner_stride; its points are point_stride apart. The
 * result goes to the same positions of `out`, which may be `in`. */
void fft_lines(fft_plan *p, int dir, const double *in, double *out, long n_inner, long inner_stride,
               long n_outer, long outer_stride, long point_stride);

#endif
