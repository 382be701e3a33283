#include "signature.h"

#include <math.h>
#include <stddef.h>

const median_ci *size_quantity(const size_result *r, size_t field)
{
    return (const median_ci *)((const char *)r + field);
}

int size_result_by_bytes(const void *a, const void *b)
{
    long x = ((const size_result *)a)->bytes, y = ((const size_result *)b)->bytes;
    return (x > y) - (x < y);
}

double bend_departure(double xa, double ya, double xb, double yb, double xc, double yc, double floor_us)
{
    double pred = yb + (yb - ya) * (xc - xb) / (xb - xa);
    double dev = fabs(yc - pred);
    return dev <= floor_us ? 0 : dev / fmax(fabs(yc), 1e-9);
}

int find_bends(const size_result *r, int n, int *at, int max_bends)
{
    double score[MAX_SIZES] = {0};
    for (int i = 2; i < n && i < MAX_SIZES; i++) {
        const size_result *a = &r[i - 2], *b = &r[i - 1], *c = &r[i];
        if (c->bytes - b->bytes < 2)
            continue;
        double s = fmax(bend_departure((double)a->bytes, a->T.median, (double)b->bytes, b->T.median,
                                       (double)c->bytes, c->T.median, 0.3),
                        bend_departure((double)a->bytes, a->g.median, (double)b->bytes, b->g.median,
                                       (double)c->bytes, c->g.median, 0.3));
        score[i] = s > 0.10 ? s : 0;
    }
    int k = 0;
    while (k < max_bends) {
        int pick = -1;
        for (int i = 2; i < n && i < MAX_SIZES; i++)
            if (score[i] > 0 && (pick < 0 || score[i] > score[pick]))
                pick = i;
        if (pick < 0)
            break;
        score[pick] = 0;
        at[k++] = pick;
    }
    return k;
}

long bisection_midpoint(long lo, long hi)
{
    long mid = lo + (hi - lo) / 2;
    if (mid > 64)
        mid -= mid % 8;
    return (mid <= lo || mid >= hi) ? -1 : mid;
}

int bend_in_lower_half(double T_lo, double T_mid, double T_hi)
{
    return fabs(T_mid - T_lo) >= fabs(T_hi - T_mid);
}

/* Where y(i) stands above the line through the two points below (flat when that line
 * falls, or with only one point below). */
static double excess_over_trend(const size_result *r, int i, size_t field)
{
    double yb = size_quantity(&r[i - 1], field)->median, pred = yb;
    if (i >= 2) {
        double ya = size_quantity(&r[i - 2], field)->median;
        double xa = (double)r[i - 2].bytes, xb = (double)r[i - 1].bytes;
        if (xb > xa && yb > ya)
            pred = yb + (yb - ya) * ((double)r[i].bytes - xb) / (xb - xa);
    }
    return size_quantity(&r[i], field)->median - pred;
}

int overheads_exceed_one_way(const size_result *r)
{
    double ci = sqrt(r->T.ci_half * r->T.ci_half + r->o_s.ci_half * r->o_s.ci_half +
                     r->o_r.ci_half * r->o_r.ci_half);
    return r->L_us < -fmax(fmax(0.25, 0.1 * r->T.median), 2 * ci);
}

int find_protocol_switch(const size_result *res, int n)
{
    for (int i = 1; i < n; i++) {
        /* Eager limits are kilobytes; a size <= 64 B is never past the switch. */
        if (res[i].bytes > 64 && overheads_exceed_one_way(&res[i]) &&
            (i + 1 == n || overheads_exceed_one_way(&res[i + 1])))
            return i;
        double t_jump = excess_over_trend(res, i, offsetof(size_result, T));
        if (!(t_jump > fmax(0.3, 0.5 * res[i - 1].T.median)))
            continue;
        double or_jump = excess_over_trend(res, i, offsetof(size_result, o_r));
        if (!(or_jump >= 0.3 * t_jump))
            continue;
        double before = res[i - 1].o_r.median, rise = res[i].o_r.median - before;
        if (i + 1 < n && !(res[i + 1].o_r.median >= before + 0.5 * rise))
            continue;
        return i;
    }
    return n;
}

unsigned columns_past_switch(int send_waits)
{
    return COLUMN_O_R | COLUMN_L | (send_waits ? COLUMN_O_S : 0u);
}

double size_latency_us(const size_result *r, int index, const summary *s)
{
    if (index >= s->switch_index || overheads_exceed_one_way(r))
        return NAN;
    return fmax(r->L_us, 0.0);
}

/* The sizes G is fitted over, [*from, *to): one protocol's, so that the step a
 * switch puts into g(m) (a rendezvous's flights) is not read as bytes; the
 * largest sizes' protocol when it has two sizes or more. */
static void G_regime(int n, int switch_index, int *from, int *to)
{
    *from = 0;
    *to = n;
    if (switch_index < n && switch_index > 0) {
        if (n - switch_index >= 2)
            *from = switch_index;
        else if (switch_index >= 2)
            *to = switch_index;
    }
}

summary summarize_signature(const size_result *res, int n, long max_size)
{
    summary s = {0};
    s.switch_index = find_protocol_switch(res, n);
    int from, to;
    G_regime(n < MAX_SIZES ? n : MAX_SIZES, s.switch_index, &from, &to);
    long top = to == n ? max_size : res[to - 1].bytes;
    long lo_bytes = top / 16 > 1 ? top / 16 : 1;
    double xs[MAX_SIZES], ys[MAX_SIZES];
    int k = 0;
    for (int i = from; i < to; i++)
        if (res[i].bytes >= lo_bytes || i >= to - 2) {
            xs[k] = (double)res[i].bytes;
            ys[k] = res[i].g.median;
            k++;
        }
    double slope = 0, icpt = 0;
    if (least_squares(xs, ys, (size_t)k, &slope, &icpt) == 0) {
        s.G_raw = slope * 1000.0;
        s.G_lo = xs[0];
        s.G_hi = xs[k - 1];
    }
    s.G_clamped = s.G_raw < 0;
    s.G_ns_per_byte = s.G_raw < 0 ? 0 : s.G_raw;
    /* L from small messages before the switch, where (m-1)G is a correction and not the
     * bulk of T. */
    double ls[MAX_SIZES];
    int nl = 0;
    for (int i = 0; i < n && i < MAX_SIZES; i++)
        if ((res[i].bytes <= 64 && i < s.switch_index) || i == 0) {
            ls[nl++] = res[i].L_us - (double)(res[i].bytes > 0 ? res[i].bytes - 1 : 0) * s.G_ns_per_byte / 1000.0;
            s.L_lo = nl == 1 ? res[i].bytes : s.L_lo;
            s.L_hi = res[i].bytes;
            /* the CI of a difference of independent medians */
            double ci = sqrt(res[i].T.ci_half * res[i].T.ci_half + res[i].o_s.ci_half * res[i].o_s.ci_half +
                             res[i].o_r.ci_half * res[i].o_r.ci_half);
            s.L_ci_half = fmax(s.L_ci_half, ci);
        }
    s.L_raw = nl ? median_with_ci(ls, (size_t)nl).median : NAN;
    s.L_clamped = s.L_raw < 0;
    s.L_us = s.L_clamped ? 0.0 : s.L_raw;
    return s;
}

median_ci combine_rounds(const size_result *const *rounds, int n_rounds, int size, size_t field)
{
    double v[100];
    median_ci out = {0};
    for (int r = 0; r < n_rounds && r < 100; r++) {
        const median_ci *m = size_quantity(&rounds[r][size], field);
        v[r] = m->median;
        out.n += m->n;
        if (!(m->ci_half <= out.ci_half)) /* an infinite (too few samples) or NaN half-width wins */
            out.ci_half = m->ci_half;
    }
    out.median = median_with_ci(v, (size_t)(n_rounds < 100 ? n_rounds : 100)).median;
    return out;
}
