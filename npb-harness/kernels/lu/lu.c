/* NPB LU (SSOR solver for the 3-D compressible Navier-Stokes equations),
 * written from the NPB specification (RNR-94-007, NAS-95-020): the steady
 * state of a five-equation system on an n^3 grid with a manufactured exact
 * solution (a quartic polynomial per equation) is approached by symmetric
 * successive over-relaxation in pseudo-time: per step, rsd = dt * residual,
 * a lower block-triangular sweep and an upper one with 5x5 blocks built from
 * the flux Jacobians, u += rsd / (omega (2 - omega)), new residual.
 *
 * Decomposition and messages follow the reference MPI code: an xdim x ydim
 * process grid over (i, j), whole k columns per process. The triangular
 * sweeps are a wavefront pipelined by k-planes: for each plane a process
 * receives one row from north and west, solves its plane, sends one row south
 * and east (the upper sweep runs the other way). The residual needs two ghost
 * layers, exchanged with north/south and then west/east before each
 * evaluation.
 *
 * Arrays hold 5 values per point, i fastest, with i and j running from -1 to
 * n+2 (two ghost layers) and k from 1 to nz (1-based, as the specification). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npb.h"

static const double C1 = 1.40, C2 = 0.40, C3 = 1.00e-01, C4 = 1.00, C5 = 1.40;
static const double OMEGA = 1.2;
static const double LU_EPSILON = 1.0e-8;

typedef struct {
    char cls;
    int n, itmax;
    double dt;
    double xcr[5], xce[5], xci; /* published residual norms, error norms, surface integral */
} lu_class;

static const lu_class LU_CLASSES[] = {
    {'S', 12, 50, 0.5,
     {1.6196343210976702e-02, 2.1976745164821318e-03, 1.5179927653399185e-03, 1.5029584435994323e-03,
      3.4264073155896461e-02},
     {6.4223319957960924e-04, 8.4144342047347926e-05, 5.8588269616485186e-05, 5.8474222595157350e-05,
      1.3103347914111294e-03},
     7.8418928865937083e+00},
    {'W', 33, 300, 1.5e-3,
     {0.1236511638192e+02, 0.1317228477799e+01, 0.2550120713095e+01, 0.2326187750252e+01,
      0.2826799444189e+02},
     {0.4867877144216e+00, 0.5064652880982e-01, 0.9281818101960e-01, 0.8570126542733e-01,
      0.1084277417792e+01},
     0.1161399311023e+02},
    {'A', 64, 250, 2.0,
     {7.7902107606689367e+02, 6.3402765259692870e+01, 1.9499249727292479e+02, 1.7845301160418537e+02,
      1.8384760349464247e+03},
     {2.9964085685471943e+01, 2.8194576365003349e+00, 7.3473412698774742e+00, 6.7139225687777051e+00,
      7.0715315688392578e+01},
     2.6030925604886277e+01},
    {'B', 102, 250, 2.0,
     {3.5532672969982736e+03, 2.6214750795310692e+02, 8.8333721850952190e+02, 7.7812774739425265e+02,
      7.3087969592545314e+03},
     {1.1401176380212709e+02, 8.1098963655421574e+00, 2.8480597317698308e+01, 2.5905394567832939e+01,
      2.6054907504857413e+02},
     4.7887162703308227e+01},
};

/* Coefficients of the exact solution, ce[m][0..12] (NPB). */
static const double CE[5][13] = {
    {2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3},
    {1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3},
    {5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2},
};

/* Per-direction constants: t1 = 1/h^2, t2 = 1/(2h), t3 = 1/h and the
 * second-difference dissipation weights (0.75 in x and y, 1.0 in z). */
typedef struct {
    double t1, t2, t3, dd[5];
} direction;

static struct {
    const lu_class *cls;
    int id, num, xdim, ydim, row, col;
    int north, south, east, west;
    int nx0, ny0, nz0, nx, ny, nz, ipt, jpt;
    int ist, iend, jst, jend;
    double dxi, deta, dzeta, dssp, dt;
    direction dir[3];
    double *u, *rsd, *frct;
    double (*a)[5][5], (*b)[5][5], (*c)[5][5];
    double (*dfac)[5][5]; /* factored diagonal block per point: u is fixed during both sweeps */
    double *sbuf, *rbuf, *line_flux, *tv;
    double rsdnm[5], errnm[5], frc;
} g;

/* i runs over -2..nx+2 (two ghost planes on each side, and the one below
 * them that a zeta line's stride may point at), j likewise; k over 1..nz. */
#define LU_PAD 5
#define AT(arr, i, j, k) \
    ((arr) + 5 * ((long)(i) + 2 + (long)(g.nx + LU_PAD) * ((long)(j) + 2 + (long)(g.ny + LU_PAD) * ((long)(k) - 1))))

static void *xmalloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "loggp-npb-lu: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* ---- process grid --------------------------------------------------------- */

/* NPB's choice of xdim x ydim for `num` processes: xdim >= ydim, as square
 * as possible, xdim <= 2 ydim. Returns 0 if there is none. */
static int choose_grid(int num, int *xdim, int *ydim)
{
    /* x = sqrt(num) if exact; else from the smallest x with x*x > num,
     * widen until x*y == num */
    int x = 1;
    while (x * x < num)
        x++;
    if (x * x != num) {
        int y = num / x;
        while (x * y != num && 2 * y >= x) {
            x++;
            y = num / x;
        }
        if (x * y != num || 2 * y < x)
            return 0;
    }
    *xdim = x;
    *ydim = num / x;
    return 1;
}

static int setup_grid(void)
{
    if (!choose_grid(g.num, &g.xdim, &g.ydim))
        return 0;
    g.row = g.id % g.xdim + 1;
    g.col = g.id / g.xdim + 1;
    g.north = g.row > 1 ? g.id - 1 : -1;
    g.south = g.row < g.xdim ? g.id + 1 : -1;
    g.west = g.col > 1 ? g.id - g.xdim : -1;
    g.east = g.col < g.ydim ? g.id + g.xdim : -1;

    int mm = g.nx0 % g.xdim;
    if (g.row <= mm) {
        g.nx = g.nx0 / g.xdim + 1;
        g.ipt = (g.row - 1) * g.nx;
    } else {
        g.nx = g.nx0 / g.xdim;
        g.ipt = (g.row - 1) * g.nx + mm;
    }
    mm = g.ny0 % g.ydim;
    if (g.col <= mm) {
        g.ny = g.ny0 / g.ydim + 1;
        g.jpt = (g.col - 1) * g.ny;
    } else {
        g.ny = g.ny0 / g.ydim;
        g.jpt = (g.col - 1) * g.ny + mm;
    }
    g.nz = g.nz0;
    int ok = g.nx >= 3 && g.ny >= 3;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok)
        return 0;
    g.ist = g.north == -1 ? 2 : 1;
    g.iend = g.south == -1 ? g.nx - 1 : g.nx;
    g.jst = g.west == -1 ? 2 : 1;
    g.jend = g.east == -1 ? g.ny - 1 : g.ny;
    return 1;
}

static void setcoeff(void)
{
    g.dxi = 1.0 / (g.nx0 - 1);
    g.deta = 1.0 / (g.ny0 - 1);
    g.dzeta = 1.0 / (g.nz0 - 1);
    double h[3] = {g.dxi, g.deta, g.dzeta}, diss[3] = {0.75, 0.75, 1.00};
    for (int d = 0; d < 3; d++) {
        g.dir[d].t1 = 1.0 / (h[d] * h[d]);
        g.dir[d].t2 = 1.0 / (2.0 * h[d]);
        g.dir[d].t3 = 1.0 / h[d];
        for (int m = 0; m < 5; m++)
            g.dir[d].dd[m] = diss[d];
    }
    g.dssp = fmax(fmax(diss[0], diss[1]), diss[2]) / 4.0;
}

/* ---- exact solution, boundary and initial values ----------------------------- */

static void exact(int i, int j, int k, double *out)
{
    double xi = (double)(i - 1) / (g.nx0 - 1);
    double eta = (double)(j - 1) / (g.ny0 - 1);
    double zeta = (double)(k - 1) / (g.nz - 1);
    for (int m = 0; m < 5; m++) {
        const double *e = CE[m];
        out[m] = e[0] + e[1] * xi + e[2] * eta + e[3] * zeta + e[4] * xi * xi + e[5] * eta * eta +
                 e[6] * zeta * zeta + e[7] * xi * xi * xi + e[8] * eta * eta * eta +
                 e[9] * zeta * zeta * zeta + e[10] * xi * xi * xi * xi + e[11] * eta * eta * eta * eta +
                 e[12] * zeta * zeta * zeta * zeta;
    }
}

/* u = exact solution on the faces of the global box. */
static void setbv(void)
{
    for (int j = 1; j <= g.ny; j++)
        for (int i = 1; i <= g.nx; i++) {
            exact(g.ipt + i, g.jpt + j, 1, AT(g.u, i, j, 1));
            exact(g.ipt + i, g.jpt + j, g.nz, AT(g.u, i, j, g.nz));
        }
    for (int k = 1; k <= g.nz; k++) {
        if (g.west == -1)
            for (int i = 1; i <= g.nx; i++)
                exact(g.ipt + i, 1, k, AT(g.u, i, 1, k));
        if (g.east == -1)
            for (int i = 1; i <= g.nx; i++)
                exact(g.ipt + i, g.ny0, k, AT(g.u, i, g.ny, k));
        if (g.north == -1)
            for (int j = 1; j <= g.ny; j++)
                exact(1, g.jpt + j, k, AT(g.u, 1, j, k));
        if (g.south == -1)
            for (int j = 1; j <= g.ny; j++)
                exact(g.nx0, g.jpt + j, k, AT(g.u, g.nx, j, k));
    }
}

/* Interior: transfinite interpolation of the face values. */
static void setiv(void)
{
    for (int k = 2; k <= g.nz - 1; k++) {
        double zeta = (double)(k - 1) / (g.nz - 1);
        for (int j = 1; j <= g.ny; j++) {
            int jg = g.jpt + j;
            if (jg == 1 || jg == g.ny0)
                continue;
            double eta = (double)(jg - 1) / (g.ny0 - 1);
            for (int i = 1; i <= g.nx; i++) {
                int ig = g.ipt + i;
                if (ig == 1 || ig == g.nx0)
                    continue;
                double xi = (double)(ig - 1) / (g.nx0 - 1);
                double e_w[5], e_e[5], e_s[5], e_n[5], e_b[5], e_t[5];
                exact(1, jg, k, e_w);
                exact(g.nx0, jg, k, e_e);
                exact(ig, 1, k, e_s);
                exact(ig, g.ny0, k, e_n);
                exact(ig, jg, 1, e_b);
                exact(ig, jg, g.nz, e_t);
                double *p = AT(g.u, i, j, k);
                for (int m = 0; m < 5; m++) {
                    double pxi = (1.0 - xi) * e_w[m] + xi * e_e[m];
                    double peta = (1.0 - eta) * e_s[m] + eta * e_n[m];
                    double pzeta = (1.0 - zeta) * e_b[m] + zeta * e_t[m];
                    p[m] = pxi + peta + pzeta - pxi * peta - peta * pzeta - pzeta * pxi + pxi * peta * pzeta;
                }
            }
        }
    }
}

/* ---- ghost exchange for the residual ------------------------------------------ */

enum { TAG_FROM_S = 1, TAG_FROM_N = 2, TAG_FROM_E = 3, TAG_FROM_W = 4 };

/* Copies two planes (i = p0, p1 for axis 0; j = p0, p1 for axis 1) of w
 * to or from buf, 5 values per point, over the owned range of the other
 * horizontal index and all k. */
static size_t planes_copy(double *w, int axis, int p0, int p1, double *buf, int to_buf)
{
    size_t n = 0;
    int other = axis == 0 ? g.ny : g.nx;
    for (int half = 0; half < 2; half++) {
        int p = half ? p1 : p0;
        for (int k = 1; k <= g.nz; k++)
            for (int q = 1; q <= other; q++) {
                double *pt = axis == 0 ? AT(w, p, q, k) : AT(w, q, p, k);
                for (int m = 0; m < 5; m++) {
                    if (to_buf)
                        buf[n++] = pt[m];
                    else
                        pt[m] = buf[n++];
                }
            }
    }
    return n;
}

/* Two ghost layers of w along i (axis 0: north/south) or j (axis 1:
 * west/east), in the reference's order: one direction, then the other. */
static void exchange_3(double *w, int axis)
{
    int lo = axis == 0 ? g.north : g.west, hi = axis == 0 ? g.south : g.east;
    int n = axis == 0 ? g.nx : g.ny;
    int count = 10 * (axis == 0 ? g.ny : g.nx) * g.nz;
    int tag_down = axis == 0 ? TAG_FROM_N : TAG_FROM_W, tag_up = axis == 0 ? TAG_FROM_S : TAG_FROM_E;
    MPI_Request req;
    /* toward hi: my last two planes become hi's low ghosts */
    if (lo != -1)
        MPI_Irecv(g.rbuf, count, MPI_DOUBLE, lo, tag_down, MPI_COMM_WORLD, &req);
    if (hi != -1) {
        planes_copy(w, axis, n - 1, n, g.sbuf, 1);
        MPI_Send(g.sbuf, count, MPI_DOUBLE, hi, tag_down, MPI_COMM_WORLD);
    }
    if (lo != -1) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        planes_copy(w, axis, -1, 0, g.rbuf, 0);
    }
    /* toward lo: my first two planes become lo's high ghosts */
    if (hi != -1)
        MPI_Irecv(g.rbuf, count, MPI_DOUBLE, hi, tag_up, MPI_COMM_WORLD, &req);
    if (lo != -1) {
        planes_copy(w, axis, 2, 1, g.sbuf, 1);
        MPI_Send(g.sbuf, count, MPI_DOUBLE, lo, tag_up, MPI_COMM_WORLD);
    }
    if (hi != -1) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        planes_copy(w, axis, n + 2, n + 1, g.rbuf, 0);
    }
}

/* ---- residual ------------------------------------------------------------------ */

/* Along one grid line: out += -d(F)/dx + viscous terms + dissipation, for
 * direction `dir` (0: xi, 1: eta, 2: zeta), where w(p) = w + p*stride.
 * Fluxes are needed on [lo_flux, hi_flux]; results go to [first, last];
 * the fourth-difference dissipation uses its one-sided forms next to a
 * physical boundary (lo_wall / hi_wall) of a line of `len` points. */
static void residual_line(const double *w, double *out, long stride, int dir, int lo_flux, int hi_flux,
                          int first, int last, int lo_wall, int hi_wall, int len)
{
    const direction *D = &g.dir[dir];
    const int n = dir + 1; /* momentum component along the line */
    double (*fl)[5] = (double (*)[5])g.line_flux + 2; /* fl[p] for p >= -2 */
#define W(p) (w + (long)(p) * stride)
#define O(p) (out + (long)(p) * stride)
    for (int p = lo_flux; p <= hi_flux; p++) {
        const double *x = W(p);
        double vn = x[n] / x[0];
        double q = 0.50 * (x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) / x[0];
        fl[p][0] = x[n];
        for (int m = 1; m <= 3; m++)
            fl[p][m] = x[m] * vn;
        fl[p][n] += C2 * (x[4] - q);
        fl[p][4] = (C1 * x[4] - C2 * q) * vn;
    }
    for (int p = first; p <= last; p++)
        for (int m = 0; m < 5; m++)
            O(p)[m] -= D->t2 * (fl[p + 1][m] - fl[p - 1][m]);
    for (int p = first; p <= hi_flux; p++) {
        const double *x = W(p), *y = W(p - 1);
        double ti = 1.0 / x[0], tm = 1.0 / y[0];
        double vi[4], vm[4];
        for (int m = 1; m <= 4; m++) {
            vi[m - 1] = ti * x[m];
            vm[m - 1] = tm * y[m];
        }
        for (int m = 1; m <= 3; m++)
            fl[p][m] = (m == n ? 4.0 / 3.0 : 1.0) * D->t3 * (vi[m - 1] - vm[m - 1]);
        fl[p][4] = 0.50 * (1.0 - C1 * C5) * D->t3 *
                       ((vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]) -
                        (vm[0] * vm[0] + vm[1] * vm[1] + vm[2] * vm[2])) +
                   (1.0 / 6.0) * D->t3 * (vi[n - 1] * vi[n - 1] - vm[n - 1] * vm[n - 1]) +
                   C1 * C5 * D->t3 * (vi[3] - vm[3]);
    }
    for (int p = first; p <= last; p++) {
        const double *x = W(p), *xm = W(p - 1), *xp = W(p + 1);
        double *o = O(p);
        o[0] += D->dd[0] * D->t1 * (xm[0] - 2.0 * x[0] + xp[0]);
        for (int m = 1; m < 5; m++)
            o[m] += D->t3 * C3 * C4 * (fl[p + 1][m] - fl[p][m]) + D->dd[m] * D->t1 * (xm[m] - 2.0 * x[m] + xp[m]);
    }
    const double s = g.dssp;
    int first4 = lo_wall ? 4 : first, last4 = hi_wall ? len - 3 : last;
    if (lo_wall)
        for (int m = 0; m < 5; m++) {
            O(2)[m] -= s * (5.0 * W(2)[m] - 4.0 * W(3)[m] + W(4)[m]);
            O(3)[m] -= s * (-4.0 * W(2)[m] + 6.0 * W(3)[m] - 4.0 * W(4)[m] + W(5)[m]);
        }
    for (int p = first4; p <= last4; p++)
        for (int m = 0; m < 5; m++)
            O(p)[m] -= s * (W(p - 2)[m] - 4.0 * W(p - 1)[m] + 6.0 * W(p)[m] - 4.0 * W(p + 1)[m] + W(p + 2)[m]);
    if (hi_wall)
        for (int m = 0; m < 5; m++) {
            O(len - 2)[m] -= s * (W(len - 4)[m] - 4.0 * W(len - 3)[m] + 6.0 * W(len - 2)[m] - 4.0 * W(len - 1)[m]);
            O(len - 1)[m] -= s * (W(len - 3)[m] - 4.0 * W(len - 2)[m] + 5.0 * W(len - 1)[m]);
        }
#undef W
#undef O
}

/* out += R(w), the discrete steady-state operator, on the owned interior.
 * Exchanges w's ghosts first (north/south, then west/east). */
static void residual(double *w, double *out)
{
    const long sx = 5, sy = 5L * (g.nx + LU_PAD), sz = 5L * (g.nx + LU_PAD) * (g.ny + LU_PAD);
    exchange_3(w, 0);
    int nwall = g.north == -1, swall = g.south == -1;
    for (int k = 2; k <= g.nz - 1; k++)
        for (int j = g.jst; j <= g.jend; j++)
            residual_line(AT(w, 0, j, k), AT(out, 0, j, k), sx, 0, nwall ? 1 : 0, swall ? g.nx : g.nx + 1,
                          g.ist, g.iend, nwall, swall, g.nx);
    exchange_3(w, 1);
    int wwall = g.west == -1, ewall = g.east == -1;
    for (int k = 2; k <= g.nz - 1; k++)
        for (int i = g.ist; i <= g.iend; i++)
            residual_line(AT(w, i, 0, k), AT(out, i, 0, k), sy, 1, wwall ? 1 : 0, ewall ? g.ny : g.ny + 1,
                          g.jst, g.jend, wwall, ewall, g.ny);
    for (int j = g.jst; j <= g.jend; j++)
        for (int i = g.ist; i <= g.iend; i++)
            residual_line(AT(w, i, j, 0), AT(out, i, j, 0), sz, 2, 1, g.nz, 2, g.nz - 1, 1, 1, g.nz);
}

/* frct = R(exact polynomial), the forcing that makes it the solution. */
static void erhs(void)
{
    memset(g.frct, 0, sizeof(double) * 5 * (size_t)(g.nx + LU_PAD) * (g.ny + LU_PAD) * g.nz);
    for (int k = 1; k <= g.nz; k++)
        for (int j = 1; j <= g.ny; j++)
            for (int i = 1; i <= g.nx; i++)
                exact(g.ipt + i, g.jpt + j, k, AT(g.rsd, i, j, k));
    residual(g.rsd, g.frct);
}

/* rsd = R(u) - frct. */
static void rhs(void)
{
    for (int k = 1; k <= g.nz; k++)
        for (int j = 1; j <= g.ny; j++)
            for (int i = 1; i <= g.nx; i++)
                for (int m = 0; m < 5; m++)
                    AT(g.rsd, i, j, k)[m] = -AT(g.frct, i, j, k)[m];
    residual(g.u, g.rsd);
}

/* ---- Jacobian blocks ------------------------------------------------------------- */

/* Off-diagonal block for the neighbour at state x along dir: side = -1 for
 * the lower sweep (neighbour behind), +1 for the upper (neighbour ahead).
 * M = side dt t2 J - dt t1 (V + diag(dd)), with J the inviscid flux
 * Jacobian dF/dU and V the Jacobian of the viscous flux. */
/* always inlined: every call site has constant dir and side */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void neighbour_block(int dir, int side, const double *x, double M[5][5])
{
    /* Every entry is written (no memset: a library call per block costs
     * more than the block). */
    const direction *D = &g.dir[dir];
    const int n = dir + 1; /* momentum component along dir */
    const double c34 = C3 * C4, c1345 = C1 * C3 * C4 * C5, fn = (4.0 / 3.0) * c34;
    const double ai = side * g.dt * D->t2, av = g.dt * D->t1;
    const double t1 = 1.0 / x[0], t2 = t1 * t1, t3 = t1 * t2;
    const double sq = x[1] * x[1] + x[2] * x[2] + x[3] * x[3];
    const double vn = x[n] * t1;
    M[0][0] = -av * D->dd[0];
    for (int c = 1; c <= 3; c++)
        M[0][c] = c == n ? ai : 0.0;
    M[0][4] = 0.0;
    double v40 = 0.0;
    for (int m = 1; m <= 3; m++) {
        double f = m == n ? fn : c34;
        v40 -= (f - c1345) * t3 * (x[m] * x[m]);
        if (m == n) {
            M[n][0] = ai * (-vn * vn + 0.50 * C2 * (sq * t2)) - av * (-fn * t2 * x[n]);
            for (int c = 1; c <= 3; c++)
                M[n][c] = c == n ? ai * ((2.0 - C2) * vn) - av * fn * t1 - av * D->dd[n]
                                 : ai * (-C2 * (x[c] * t1));
            M[n][4] = ai * C2;
            M[4][n] = -av * (fn - c1345) * t2 * x[n] +
                      ai * (C1 * (x[4] * t1) - 0.50 * C2 * ((sq + 2.0 * x[n] * x[n]) * t2));
        } else {
            M[m][0] = ai * (-(x[m] * x[n]) * t2) - av * (-c34 * t2 * x[m]);
            for (int c = 1; c <= 3; c++)
                M[m][c] = c == m ? ai * vn - av * c34 * t1 - av * D->dd[m] : c == n ? ai * (x[m] * t1) : 0.0;
            M[m][4] = 0.0;
            M[4][m] = -av * (c34 - c1345) * t2 * x[m] + ai * (-C2 * (x[m] * x[n]) * t2);
        }
    }
    M[4][0] = ai * ((C2 * sq * t2 - C1 * (x[4] * t1)) * vn) - av * (v40 - c1345 * t2 * x[4]);
    M[4][4] = ai * (C1 * vn) - av * c1345 * t1 - av * D->dd[4];
}

/* Diagonal block I + 2 dt sum over directions of t1 (V + diag(dd)); the
 * direction sums are folded into constants set by setcoeff(). */
static struct {
    double f[4];     /* sum_d t1_d * (4/3 if m is d's component else 1) * c3 c4, m = 1..3 */
    double t1sum;    /* sum_d t1_d */
    double ddsum[5]; /* sum_d t1_d dd_d[m] */
} diag_k;

static void diag_constants(void)
{
    const double c34 = C3 * C4;
    diag_k.t1sum = 0.0;
    for (int m = 0; m < 5; m++)
        diag_k.ddsum[m] = 0.0;
    for (int m = 1; m <= 3; m++)
        diag_k.f[m] = 0.0;
    for (int d = 0; d < 3; d++) {
        diag_k.t1sum += g.dir[d].t1;
        for (int m = 0; m < 5; m++)
            diag_k.ddsum[m] += g.dir[d].t1 * g.dir[d].dd[m];
        for (int m = 1; m <= 3; m++)
            diag_k.f[m] += g.dir[d].t1 * (m == d + 1 ? (4.0 / 3.0) * c34 : c34);
    }
}

static void diagonal_block(const double *x, double M[5][5])
{
    const double c1345 = C1 * C3 * C4 * C5, s = 2.0 * g.dt;
    const double t1 = 1.0 / x[0], t2 = t1 * t1, t3 = t1 * t2;
    const double tc = diag_k.t1sum * c1345;
    M[0][0] = 1.0 + s * diag_k.ddsum[0];
    for (int c = 1; c < 5; c++)
        M[0][c] = 0.0;
    double v40 = 0.0;
    for (int m = 1; m <= 3; m++) {
        double f = diag_k.f[m];
        M[m][0] = s * (-f * t2 * x[m]);
        for (int c = 1; c < 5; c++)
            M[m][c] = c == m ? 1.0 + s * (f * t1) + s * diag_k.ddsum[m] : 0.0;
        M[4][m] = s * (f - tc) * t2 * x[m];
        v40 -= (f - tc) * t3 * (x[m] * x[m]);
    }
    M[4][0] = s * (v40 - tc * t2 * x[4]);
    M[4][4] = 1.0 + s * tc * t1 + s * diag_k.ddsum[4];
}

/* LU factorization of a 5x5 block in place (Gaussian elimination without
 * pivoting: the diagonal blocks are diagonally dominant); the multipliers
 * replace the eliminated entries and the pivots are stored inverted, so
 * that each of the two solves per step multiplies instead of divides. */
static inline void factor5(double M[5][5])
{
#pragma GCC unroll 5
    for (int p = 0; p < 5; p++) {
        double inv = 1.0 / M[p][p];
        M[p][p] = inv;
#pragma GCC unroll 4
        for (int r = p + 1; r < 5; r++) {
            double f = inv * M[r][p];
            M[r][p] = f;
#pragma GCC unroll 4
            for (int c = p + 1; c < 5; c++)
                M[r][c] -= f * M[p][c];
        }
    }
}

/* Solves M x = v in place with the factors from factor5(). */
static inline void solve5(const double (*restrict M)[5], double *restrict v)
{
    double x0 = v[0], x1 = v[1], x2 = v[2], x3 = v[3], x4 = v[4];
    x1 -= x0 * M[1][0];
    x2 -= x0 * M[2][0];
    x3 -= x0 * M[3][0];
    x4 -= x0 * M[4][0];
    x2 -= x1 * M[2][1];
    x3 -= x1 * M[3][1];
    x4 -= x1 * M[4][1];
    x3 -= x2 * M[3][2];
    x4 -= x2 * M[4][2];
    x4 -= x3 * M[4][3];
    x4 *= M[4][4];
    x3 = (x3 - M[3][4] * x4) * M[3][3];
    x2 = (x2 - M[2][3] * x3 - M[2][4] * x4) * M[2][2];
    x1 = (x1 - M[1][2] * x2 - M[1][3] * x3 - M[1][4] * x4) * M[1][1];
    x0 = (x0 - M[0][1] * x1 - M[0][2] * x2 - M[0][3] * x3 - M[0][4] * x4) * M[0][0];
    v[0] = x0;
    v[1] = x1;
    v[2] = x2;
    v[3] = x3;
    v[4] = x4;
}

static inline void matvec_sub(const double (*restrict M)[5], const double *restrict x, double scale,
                              double *restrict acc)
{
    for (int r = 0; r < 5; r++)
        acc[r] -= scale * (M[r][0] * x[0] + M[r][1] * x[1] + M[r][2] * x[2] + M[r][3] * x[3] + M[r][4] * x[4]);
}

/* Lower sweep for line j of plane k: blocks from the k-1, j-1, i-1 neighbours. */
#define DFAC(i, j, k) g.dfac[(i) + (size_t)(g.nx + 2) * ((j) + (size_t)(g.ny + 2) * (k))]

static void lower_line(int j, int k)
{
    for (int i = g.ist; i <= g.iend; i++) {
        diagonal_block(AT(g.u, i, j, k), DFAC(i, j, k));
        factor5(DFAC(i, j, k));
        neighbour_block(2, -1, AT(g.u, i, j, k - 1), g.a[i]);
        neighbour_block(1, -1, AT(g.u, i, j - 1, k), g.b[i]);
        neighbour_block(0, -1, AT(g.u, i - 1, j, k), g.c[i]);
    }
    for (int i = g.ist; i <= g.iend; i++)
        matvec_sub(g.a[i], AT(g.rsd, i, j, k - 1), OMEGA, AT(g.rsd, i, j, k));
    for (int i = g.ist; i <= g.iend; i++) {
        double *v = AT(g.rsd, i, j, k);
        matvec_sub(g.b[i], AT(g.rsd, i, j - 1, k), OMEGA, v);
        matvec_sub(g.c[i], AT(g.rsd, i - 1, j, k), OMEGA, v);
        solve5(DFAC(i, j, k), v);
    }
}

/* Upper sweep for line j of plane k: blocks from the k+1, j+1, i+1 neighbours. */
static void upper_line(int j, int k)
{
    for (int i = g.ist; i <= g.iend; i++) {
        neighbour_block(0, +1, AT(g.u, i + 1, j, k), g.a[i]);
        neighbour_block(1, +1, AT(g.u, i, j + 1, k), g.b[i]);
        neighbour_block(2, +1, AT(g.u, i, j, k + 1), g.c[i]);
    }
    double *tv = g.tv;
    for (int i = g.iend; i >= g.ist; i--) {
        double *t = tv + 5 * i;
        for (int m = 0; m < 5; m++)
            t[m] = 0.0;
        matvec_sub(g.c[i], AT(g.rsd, i, j, k + 1), -OMEGA, t);
    }
    for (int i = g.iend; i >= g.ist; i--) {
        double *t = tv + 5 * i;
        matvec_sub(g.b[i], AT(g.rsd, i, j + 1, k), -OMEGA, t);
        matvec_sub(g.a[i], AT(g.rsd, i + 1, j, k), -OMEGA, t);
        solve5(DFAC(i, j, k), t);
        double *v = AT(g.rsd, i, j, k);
        for (int m = 0; m < 5; m++)
            v[m] -= t[m];
    }
}

/* ---- wavefront messages -------------------------------------------------------- */

/* Rows of rsd at plane k: receive (from north: i = 0 row; from west: j = 0
 * column) before the lower sweep, send after it; mirrored for the upper. */
static void recv_row(int from, int tag, int axis, int at, int k)
{
    int lo = axis == 0 ? g.jst : g.ist, hi = axis == 0 ? g.jend : g.iend;
    int count = 5 * (hi - lo + 1);
    MPI_Recv(g.rbuf, count, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int q = lo; q <= hi; q++)
        memcpy(axis == 0 ? AT(g.rsd, at, q, k) : AT(g.rsd, q, at, k), g.rbuf + 5 * (q - lo), 5 * sizeof(double));
}

static void send_row(int to, int tag, int axis, int at, int k)
{
    int lo = axis == 0 ? g.jst : g.ist, hi = axis == 0 ? g.jend : g.iend;
    int count = 5 * (hi - lo + 1);
    for (int q = lo; q <= hi; q++)
        memcpy(g.sbuf + 5 * (q - lo), axis == 0 ? AT(g.rsd, at, q, k) : AT(g.rsd, q, at, k), 5 * sizeof(double));
    MPI_Send(g.sbuf, count, MPI_DOUBLE, to, tag, MPI_COMM_WORLD);
}

/* ---- norms, error, surface integral --------------------------------------------- */

static void l2norm(const double *v, double *norm)
{
    double sum[5] = {0, 0, 0, 0, 0};
    for (int k = 2; k <= g.nz0 - 1; k++)
        for (int j = g.jst; j <= g.jend; j++)
            for (int i = g.ist; i <= g.iend; i++) {
                const double *p = AT((double *)v, i, j, k);
                for (int m = 0; m < 5; m++)
                    sum[m] += p[m] * p[m];
            }
    MPI_Allreduce(MPI_IN_PLACE, sum, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int m = 0; m < 5; m++)
        norm[m] = sqrt(sum[m] / ((double)(g.nx0 - 2) * (g.ny0 - 2) * (g.nz0 - 2)));
}

static void error_norms(void)
{
    double sum[5] = {0, 0, 0, 0, 0}, e[5];
    for (int k = 2; k <= g.nz - 1; k++)
        for (int j = g.jst; j <= g.jend; j++)
            for (int i = g.ist; i <= g.iend; i++) {
                exact(g.ipt + i, g.jpt + j, k, e);
                const double *p = AT(g.u, i, j, k);
                for (int m = 0; m < 5; m++)
                    sum[m] += (e[m] - p[m]) * (e[m] - p[m]);
            }
    MPI_Allreduce(MPI_IN_PLACE, sum, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int m = 0; m < 5; m++)
        g.errnm[m] = sqrt(sum[m] / ((double)(g.nx0 - 2) * (g.ny0 - 2) * (g.nz0 - 2)));
}

static double pressure_like(const double *x)
{
    return C2 * (x[4] - 0.50 * (x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) / x[0]);
}

/* Surface integral of c2 (e - |m|^2 / 2 rho) over the faces of the box
 * i in [2, nx0-1], j in [2, ny0-2], k in [3, nz0-1] (global, as NPB), by the
 * corner rule on every face cell. Each process contributes the points it
 * owns to global face arrays, summed with one MPI_Allreduce; this part is
 * after the timed section, so its messages need not mimic the reference. */
static void surface_integral(void)
{
    const int i1 = 2, i2 = g.nx0 - 1, j1 = 2, j2 = g.ny0 - 2, k1 = 3, k2 = g.nz0 - 1;
    const int NI = g.nx0 + 1, NJ = g.ny0 + 1, NK = g.nz0 + 1; /* 1-based global indices */
    size_t sk = (size_t)NI * NJ, sj = (size_t)NI * NK, si = (size_t)NJ * NK;
    double *all = xmalloc(sizeof(double) * 2 * (sk + sj + si));
    double *fk[2] = {all, all + sk}, *fj[2] = {all + 2 * sk, all + 2 * sk + sj};
    double *fi[2] = {all + 2 * sk + 2 * sj, all + 2 * sk + 2 * sj + si};
    for (int j = 1; j <= g.ny; j++)
        for (int i = 1; i <= g.nx; i++) {
            int ig = g.ipt + i, jg = g.jpt + j;
            if (ig < i1 || ig > i2)
                continue;
            if (jg >= j1 && jg <= j2) {
                fk[0][ig + (size_t)NI * jg] = pressure_like(AT(g.u, i, j, k1));
                fk[1][ig + (size_t)NI * jg] = pressure_like(AT(g.u, i, j, k2));
            }
            for (int k = k1; k <= k2; k++) {
                if (jg == j1)
                    fj[0][ig + (size_t)NI * k] = pressure_like(AT(g.u, i, j, k));
                if (jg == j2)
                    fj[1][ig + (size_t)NI * k] = pressure_like(AT(g.u, i, j, k));
            }
        }
    for (int j = 1; j <= g.ny; j++) {
        int jg = g.jpt + j;
        if (jg < j1 || jg > j2)
            continue;
        for (int i = 1; i <= g.nx; i++) {
            int ig = g.ipt + i;
            for (int k = k1; k <= k2; k++) {
                if (ig == i1)
                    fi[0][jg + (size_t)NJ * k] = pressure_like(AT(g.u, i, j, k));
                if (ig == i2)
                    fi[1][jg + (size_t)NJ * k] = pressure_like(AT(g.u, i, j, k));
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, all, (int)(2 * (sk + sj + si)), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int f = 0; f < 2; f++) {
        for (int j = j1; j < j2; j++)
            for (int i = i1; i < i2; i++) {
                const double *p = fk[f];
                s1 += p[i + (size_t)NI * j] + p[i + 1 + (size_t)NI * j] + p[i + (size_t)NI * (j + 1)] +
                      p[i + 1 + (size_t)NI * (j + 1)];
            }
        for (int k = k1; k < k2; k++)
            for (int i = i1; i < i2; i++) {
                const double *p = fj[f];
                s2 += p[i + (size_t)NI * k] + p[i + 1 + (size_t)NI * k] + p[i + (size_t)NI * (k + 1)] +
                      p[i + 1 + (size_t)NI * (k + 1)];
            }
        for (int k = k1; k < k2; k++)
            for (int j = j1; j < j2; j++) {
                const double *p = fi[f];
                s3 += p[j + (size_t)NJ * k] + p[j + 1 + (size_t)NJ * k] + p[j + (size_t)NJ * (k + 1)] +
                      p[j + 1 + (size_t)NJ * (k + 1)];
            }
    }
    g.frc = 0.25 * (g.dxi * g.deta * s1 + g.dxi * g.dzeta * s2 + g.deta * g.dzeta * s3);
    free(all);
}

/* ---- SSOR ---------------------------------------------------------------------------- */

/* niter pseudo-time steps; returns the time of the step loop (max over ranks). */
static double ssor(int niter)
{
    const double relax = 1.0 / (OMEGA * (2.0 - OMEGA));
    const int itmax = g.cls->itmax, inorm = itmax;
    double delunm[5];
    rhs();
    l2norm(g.rsd, g.rsdnm);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Pcontrol(1); /* the timed section is the kernel region (a study's scope = "kernel") */
    for (int step = 1; step <= niter; step++) {
        if (g.id == 0 && niter > 1 && (step % 20 == 0 || step == itmax || step == 1)) {
            printf(" Time step %4d\n", step);
            fflush(stdout);
        }
        for (int k = 2; k <= g.nz - 1; k++)
            for (int j = g.jst; j <= g.jend; j++)
                for (int i = g.ist; i <= g.iend; i++)
                    for (int m = 0; m < 5; m++)
                        AT(g.rsd, i, j, k)[m] *= g.dt;
        for (int k = 2; k <= g.nz - 1; k++) {
            if (g.north != -1)
                recv_row(g.north, TAG_FROM_N, 0, 0, k);
            if (g.west != -1)
                recv_row(g.west, TAG_FROM_W, 1, 0, k);
            for (int j = g.jst; j <= g.jend; j++)
                lower_line(j, k);
            if (g.south != -1)
                send_row(g.south, TAG_FROM_N, 0, g.nx, k);
            if (g.east != -1)
                send_row(g.east, TAG_FROM_W, 1, g.ny, k);
        }
        for (int k = g.nz - 1; k >= 2; k--) {
            if (g.south != -1)
                recv_row(g.south, TAG_FROM_S, 0, g.nx + 1, k);
            if (g.east != -1)
                recv_row(g.east, TAG_FROM_E, 1, g.ny + 1, k);
            for (int j = g.jend; j >= g.jst; j--)
                upper_line(j, k);
            if (g.north != -1)
                send_row(g.north, TAG_FROM_S, 0, 1, k);
            if (g.west != -1)
                send_row(g.west, TAG_FROM_E, 1, 1, k);
        }
        for (int k = 2; k <= g.nz - 1; k++)
            for (int j = g.jst; j <= g.jend; j++)
                for (int i = g.ist; i <= g.iend; i++)
                    for (int m = 0; m < 5; m++)
                        AT(g.u, i, j, k)[m] += relax * AT(g.rsd, i, j, k)[m];
        if (step % inorm == 0)
            l2norm(g.rsd, delunm);
        rhs();
        if (step % inorm == 0 || step == itmax)
            l2norm(g.rsd, g.rsdnm);
    }
    MPI_Pcontrol(0);
    double elapsed = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return elapsed;
}

static int verify(void)
{
    const lu_class *c = g.cls;
    int ok = 1;
    printf("\n Verification being performed for class %c\n", c->cls);
    printf(" Accuracy setting for epsilon = %20.13E\n", LU_EPSILON);
    printf(" Comparison of RMS-norms of residual\n");
    for (int m = 0; m < 5; m++) {
        double err = fabs((g.rsdnm[m] - c->xcr[m]) / c->xcr[m]);
        ok = ok && err <= LU_EPSILON;
        printf("          %d %20.13E%20.13E%20.13E\n", m + 1, g.rsdnm[m], c->xcr[m], err);
    }
    printf(" Comparison of RMS-norms of solution error\n");
    for (int m = 0; m < 5; m++) {
        double err = fabs((g.errnm[m] - c->xce[m]) / c->xce[m]);
        ok = ok && err <= LU_EPSILON;
        printf("          %d %20.13E%20.13E%20.13E\n", m + 1, g.errnm[m], c->xce[m], err);
    }
    double err = fabs((g.frc - c->xci) / c->xci);
    ok = ok && err <= LU_EPSILON; /* NaN fails every comparison */
    printf(" Comparison of surface integral\n");
    printf("            %20.13E%20.13E%20.13E\n", g.frc, c->xci, err);
    printf(" Verification %s\n", ok ? "Successful" : "failed");
    return ok;
}

int main(int argc, char **argv)
{
    npb_args args;
    int status = npb_begin(&argc, &argv, "lu", "SWAB", &g.id, &g.num, &args);
    if (status >= 0)
        return status;
    for (size_t i = 0; i < sizeof LU_CLASSES / sizeof LU_CLASSES[0]; i++)
        if (LU_CLASSES[i].cls == args.cls)
            g.cls = &LU_CLASSES[i];
    g.nx0 = g.ny0 = g.nz0 = g.cls->n;
    g.dt = g.cls->dt;
    if (!setup_grid()) {
        if (g.id == 0)
            fprintf(stderr, "loggp-npb-lu: %d processes: need xdim x ydim = NP with ydim <= xdim <= 2 ydim "
                            "(e.g. 1, 2, 4, 8, 16) and at least 3 grid points per process and direction "
                            "(class %c has %d)\n",
                    g.num, g.cls->cls, g.cls->n);
        MPI_Finalize();
        return 2;
    }
    setcoeff();
    diag_constants();

    /* one spare plane in front, so that the pointer to k = 0 of a
     * zeta line (never dereferenced) stays inside the allocation */
    size_t plane = 5 * (size_t)(g.nx + LU_PAD) * (g.ny + LU_PAD);
    double *store[3];
    for (int a = 0; a < 3; a++)
        store[a] = xmalloc(sizeof(double) * plane * (size_t)(g.nz + 1));
    g.u = store[0] + plane;
    g.rsd = store[1] + plane;
    g.frct = store[2] + plane;
    int nmax = g.nx > g.ny ? g.nx : g.ny;
    g.a = xmalloc(sizeof(double[5][5]) * (size_t)(g.nx + 2));
    g.b = xmalloc(sizeof(double[5][5]) * (size_t)(g.nx + 2));
    g.c = xmalloc(sizeof(double[5][5]) * (size_t)(g.nx + 2));
    g.dfac = xmalloc(sizeof(double[5][5]) * (size_t)(g.nx + 2) * (g.ny + 2) * (g.nz + 1));
    g.tv = xmalloc(sizeof(double) * 5 * (size_t)(g.nx + 2));
    size_t buf = 10 * (size_t)nmax * g.nz;
    g.sbuf = xmalloc(sizeof(double) * buf);
    g.rbuf = xmalloc(sizeof(double) * buf);
    int lmax = nmax > g.nz ? nmax : g.nz;
    g.line_flux = xmalloc(sizeof(double) * 5 * (size_t)(lmax + 6));

    if (g.id == 0) {
        printf("\n\n NAS Parallel Benchmarks 3.4 (loggp C+MPI) -- LU Benchmark\n\n");
        printf(" Size: %4dx%4dx%4d  (class %c)\n", g.nx0, g.ny0, g.nz0, g.cls->cls);
        printf(" Iterations: %4d\n", g.cls->itmax);
        printf(" Total number of processes: %6d  (process grid %dx%d)\n\n", g.num, g.xdim, g.ydim);
        fflush(stdout);
    }

    setbv();
    setiv();
    erhs();
    if (args.perturb && g.id == 0)
        AT(g.frct, 2, 2, 2)[0] += 1.0; /* test only: one wrong forcing value */
    ssor(1); /* untimed warm-up step, as in the reference */
    setbv();
    setiv();
    double t = ssor(g.cls->itmax);
    error_norms();
    surface_integral();

    int verified = 0;
    if (g.id == 0) {
        verified = verify();
        double n0 = g.nx0, sum3 = (double)(g.nx0 + g.ny0 + g.nz0) / 3.0;
        double mops = t > 0 ? 1.0e-6 * g.cls->itmax *
                                  (1984.77 * n0 * g.ny0 * g.nz0 - 10923.3 * sum3 * sum3 + 27770.9 * sum3 - 144010.0) / t
                            : 0.0;
        npb_report report = {
            .name = "LU", .cls = g.cls->cls, .size = {g.nx0, g.ny0, g.nz0}, .niter = g.cls->itmax,
            .time_s = t, .mops = mops, .optype = "floating point", .verified = verified, .nprocs = g.num,
        };
        npb_print_report(&report);
    }
    MPI_Bcast(&verified, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int a = 0; a < 3; a++)
        free(store[a]);
    free(g.a);
    free(g.b);
    free(g.c);
    free(g.dfac);
    free(g.tv);
    free(g.sbuf);
    free(g.rbuf);
    free(g.line_flux);
    MPI_Finalize();
    return verified ? 0 : 1;
}
