/* Batched Stockham FFT (see ft_fft.h). Scratch holds a block of lines as
 * [point][line], so each butterfly works on FFT_BLOCK contiguous lines. */
#include "ft_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double FFT_PI = 3.141592653589793238;

int fft_plan_init(fft_plan *p, int n)
{
    memset(p, 0, sizeof *p);
    if (n < 1 || (n & (n - 1)) != 0)
        return -1;
    p->n = n;
    while ((1 << p->logn) < n)
        p->logn++;
    size_t tw = (size_t)(n > 1 ? n - 1 : 1);
    size_t scratch = (size_t)n * FFT_BLOCK;
    p->wr = malloc(tw * sizeof(double));
    p->wi = malloc(tw * sizeof(double));
    p->xr = malloc(scratch * sizeof(double));
    p->xi = malloc(scratch * sizeof(double));
    p->yr = malloc(scratch * sizeof(double));
    p->yi = malloc(scratch * sizeof(double));
    if (!p->wr || !p->wi || !p->xr || !p->xi || !p->yr || !p->yi) {
        fft_plan_free(p);
        return -1;
    }
    /* Roots for a stage whose span is `half` sit at offset half - 1:
     * exp(+i*pi*t/half), t < half. */
    for (int half = 1; half < n; half *= 2)
        for (int t = 0; t < half; t++) {
            double angle = FFT_PI * t / half;
            p->wr[half - 1 + t] = cos(angle);
            p->wi[half - 1 + t] = sin(angle);
        }
    return 0;
}

void fft_plan_free(fft_plan *p)
{
    free(p->wr);
    free(p->wi);
    free(p->xr);
    free(p->xi);
    free(p->yr);
    free(p->yi);
    memset(p, 0, sizeof *p);
}

/* One radix-2 Stockham pass: `li` groups of `lk` points (times nb lines). */
static void pass2(int n, int lk, int li, int nb, double sign, const double *wr, const double *wi,
                  const double *restrict xr, const double *restrict xi, double *restrict yr,
                  double *restrict yi)
{
    const long half = (long)n / 2 * nb, span = (long)lk * nb;
    for (int i = 0; i < li; i++) {
        const double ur = wr[li - 1 + i], ui = sign * wi[li - 1 + i];
        const double *ar = xr + (long)i * span, *ai = xi + (long)i * span;
        const double *br = ar + half, *bi = ai + half;
        double *cr = yr + 2L * i * span, *ci = yi + 2L * i * span;
        double *dr = cr + span, *di = ci + span;
        for (long t = 0; t < span; t++) {
            double sr = ar[t] - br[t], si = ai[t] - bi[t];
            cr[t] = ar[t] + br[t];
            ci[t] = ai[t] + bi[t];
            dr[t] = ur * sr - ui * si;
            di[t] = ur * si + ui * sr;
        }
    }
}

/* Two radix-2 passes fused (lk and 2*lk), so data crosses memory once per
 * two stages: this is the radix-4 form of the same Stockham recursion. */
static void pass4(int n, int lk, int li, int nb, double sign, const double *wr, const double *wi,
                  const double *restrict xr, const double *restrict xi, double *restrict yr,
                  double *restrict yi)
{
    /* First pass: groups li, span lk; second: groups li/2, span 2*lk. */
    const long quarter = (long)n / 4 * nb, span = (long)lk * nb;
    const int li2 = li / 2;
    for (int i = 0; i < li2; i++) {
        /* Outputs of pass one that pass two combines: group i and i+li2 of
         * pass one feed group i of pass two. */
        const double u1r = wr[li - 1 + i], u1i = sign * wi[li - 1 + i];
        const double u2r = wr[li - 1 + i + li2], u2i = sign * wi[li - 1 + i + li2];
        const double vr = wr[li2 - 1 + i], vi = sign * wi[li2 - 1 + i];
        const double *a0r = xr + (long)i * span, *a0i = xi + (long)i * span;
        const double *a1r = a0r + quarter, *a1i = a0i + quarter;         /* group i + li2 */
        const double *a2r = a0r + 2 * quarter, *a2i = a0i + 2 * quarter; /* partner of a0 */
        const double *a3r = a0r + 3 * quarter, *a3i = a0i + 3 * quarter; /* partner of a1 */
        double *o0r = yr + 4L * i * span, *o0i = yi + 4L * i * span;
        double *o1r = o0r + span, *o1i = o0i + span;
        double *o2r = o0r + 2 * span, *o2i = o0i + 2 * span;
        double *o3r = o0r + 3 * span, *o3i = o0i + 3 * span;
        /* the eight output streams never overlap: let GCC vectorize
         * without its (too many) run-time alias checks */
#pragma GCC ivdep
        for (long t = 0; t < span; t++) {
            /* pass one, group i: (c0, d0); group i + li2: (c1, d1) */
            double c0r = a0r[t] + a2r[t], c0i = a0i[t] + a2i[t];
            double s0r = a0r[t] - a2r[t], s0i = a0i[t] - a2i[t];
            double d0r = u1r * s0r - u1i * s0i, d0i = u1r * s0i + u1i * s0r;
            double c1r = a1r[t] + a3r[t], c1i = a1i[t] + a3i[t];
            double s1r = a1r[t] - a3r[t], s1i = a1i[t] - a3i[t];
            double d1r = u2r * s1r - u2i * s1i, d1i = u2r * s1i + u2i * s1r;
            /* pass two on (c0, c1) and (d0, d1) */
            double er = c0r - c1r, ei = c0i - c1i;
            o0r[t] = c0r + c1r;
            o0i[t] = c0i + c1i;
            o2r[t] = vr * er - vi * ei;
            o2i[t] = vr * ei + vi * er;
            double fr = d0r - d1r, fi = d0i - d1i;
            o1r[t] = d0r + d1r;
            o1i[t] = d0i + d1i;
            o3r[t] = vr * fr - vi * fi;
            o3i[t] = vr * fi + vi * fr;
        }
    }
}

/* Transforms nb lines held in p->x; returns which buffer holds the result. */
static int fft_block(fft_plan *p, int dir, int nb)
{
    const int n = p->n, m = p->logn;
    const double sign = dir > 0 ? 1.0 : -1.0;
    double *xr = p->xr, *xi = p->xi, *yr = p->yr, *yi = p->yi;
    int in_x = 1, l = 1;
    while (l <= m) {
        int lk = 1 << (l - 1), li = 1 << (m - l);
        if (l + 1 <= m) {
            pass4(n, lk, li, nb, sign, p->wr, p->wi, xr, xi, yr, yi);
            l += 2;
        } else {
            pass2(n, lk, li, nb, sign, p->wr, p->wi, xr, xi, yr, yi);
            l += 1;
        }
        double *t;
        t = xr; xr = yr; yr = t;
        t = xi; xi = yi; yi = t;
        in_x = !in_x;
    }
    return in_x;
}

void fft_lines(fft_plan *p, int dir, const double *in, double *out, long n_inner, long inner_stride,
               long n_outer, long outer_stride, long point_stride)
{
    const int n = p->n;
    for (long o = 0; o < n_outer; o++)
        for (long q0 = 0; q0 < n_inner; q0 += FFT_BLOCK) {
            int nb = (int)(n_inner - q0 < FFT_BLOCK ? n_inner - q0 : FFT_BLOCK);
            long offset = 2 * (o * outer_stride + q0 * inner_stride);
            const double *base = in + offset;
            double *dest = out + offset;
            if (point_stride == 1) {
                /* lines contiguous: walk along each line */
                for (int j = 0; j < nb; j++) {
                    const double *line = base + 2 * j * inner_stride;
                    for (int i = 0; i < n; i++) {
                        p->xr[(long)i * nb + j] = line[2 * i];
                        p->xi[(long)i * nb + j] = line[2 * i + 1];
                    }
                }
            } else {
                /* lines side by side: walk across them */
                for (int i = 0; i < n; i++) {
                    const double *pt = base + 2 * (long)i * point_stride;
                    double *dr = p->xr + (long)i * nb, *di = p->xi + (long)i * nb;
                    for (int j = 0; j < nb; j++) {
                        dr[j] = pt[2 * j * inner_stride];
                        di[j] = pt[2 * j * inner_stride + 1];
                    }
                }
            }
            int in_x = fft_block(p, dir, nb);
            const double *rr = in_x ? p->xr : p->yr, *ri = in_x ? p->xi : p->yi;
            if (point_stride == 1) {
                for (int j = 0; j < nb; j++) {
                    double *line = dest + 2 * j * inner_stride;
                    for (int i = 0; i < n; i++) {
                        line[2 * i] = rr[(long)i * nb + j];
                        line[2 * i + 1] = ri[(long)i * nb + j];
                    }
                }
            } else {
                for (int i = 0; i < n; i++) {
                    double *pt = dest + 2 * (long)i * point_stride;
                    const double *sr = rr + (long)i * nb, *si = ri + (long)i * nb;
                    for (int j = 0; j < nb; j++) {
                        pt[2 * j * inner_stride] = sr[j];
                        pt[2 * j * inner_stride + 1] = si[j];
                    }
                }
            }
        }
}
