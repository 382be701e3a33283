/* NPB CG (conjugate gradient), written from the NPB specification: the
 * inverse power method estimates the smallest eigenvalue of a random sparse
 * symmetric positive definite matrix, each outer iteration solving A z = x
 * with 25 unpreconditioned CG steps.
 *
 * Distribution and traffic follow the reference: the processes form an
 * nprows x npcols grid (npcols = nprows or 2*nprows) over matrix blocks. Each
 * matrix-vector product sums partial row results across the process row by
 * log2(npcols) pairwise exchanges, then swaps the result with the transpose
 * process; every dot product is summed by log2(npcols) pairwise exchanges of
 * one double. Everything is point-to-point (Irecv, Send, Wait). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npb.h"

enum { CG_STEPS = 25, CG_MAX_LOG2_COLS = 20 };

static const double CG_SEED = 314159265.0;
static const double CG_MULT = 1220703125.0; /* 5^13 */
static const double CG_RCOND = 0.1;
static const double CG_EPSILON = 1.0e-10;

typedef struct {
    char cls;
    int na, nonzer, niter;
    double shift, zeta_ref;
} cg_class;

/* NPB 3.4 class parameters and published zeta values. */
static const cg_class CG_CLASSES[] = {
    {'S', 1400, 7, 15, 10.0, 8.5971775078648},
    {'W', 7000, 8, 15, 12.0, 10.362595087124},
    {'A', 14000, 11, 15, 20.0, 17.130235054029},
    {'B', 75000, 13, 75, 60.0, 22.712745482631},
    {'C', 150000, 15, 75, 110.0, 28.973605592845},
};

/* This process's place in the grid and its message schedule. Row and
 * column numbers are 1-based, as in the specification. */
typedef struct {
    int me, nprocs, nprows, npcols, proc_row, proc_col;
    int firstrow, lastrow, firstcol, lastcol;
    int send_start, send_len;  /* 1-based piece of w sent to the transpose process */
    int exch_proc, exch_recv_length;
    int l2npcols;
    int reduce_exch_proc[CG_MAX_LOG2_COLS + 1];
    int reduce_send_starts[CG_MAX_LOG2_COLS + 1], reduce_send_lengths[CG_MAX_LOG2_COLS + 1];
    int reduce_recv_starts[CG_MAX_LOG2_COLS + 1], reduce_recv_lengths[CG_MAX_LOG2_COLS + 1];
} cg_grid;

typedef struct {
    int nrows;
    int *rowstr; /* nrows+1 offsets */
    int *colidx; /* local column, 0-based */
    double *a;
} cg_matrix;

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "loggp-npb-cg: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Splits n items into `parts` nearly equal pieces, the first n % parts one
 * larger; sets the 1-based first and last item of piece `index`. */
static void split_range(int n, int parts, int index, int *first, int *last)
{
    int base = n / parts, big = n - base * parts;
    if (index < big) {
        *first = index * (base + 1) + 1;
        *last = *first + base;
    } else {
        *first = big * (base + 1) + (index - big) * base + 1;
        *last = *first + base - 1;
    }
}

static void setup_grid(cg_grid *g, int na)
{
    int log2p = 0;
    while ((1 << log2p) < g->nprocs)
        log2p++;
    g->npcols = 1 << ((log2p + 1) / 2);
    g->nprows = g->nprocs / g->npcols;
    g->proc_row = g->me / g->npcols;
    g->proc_col = g->me % g->npcols;

    split_range(na, g->nprows, g->proc_row, &g->firstrow, &g->lastrow);
    if (g->npcols == g->nprows || na % g->npcols == 0) {
        split_range(na, g->npcols, g->proc_col, &g->firstcol, &g->lastcol);
    } else {
        /* Uneven and not square: split into nprows column pieces, then halve
         * each between an even and an odd process. */
        int first, last;
        split_range(na, g->npcols / 2, g->proc_col / 2, &first, &last);
        int size = last - first + 1;
        if (g->me % 2 == 0) {
            g->firstcol = first;
            g->lastcol = first + (size - 1) / 2;
        } else {
            g->firstcol = first + (size - 1) / 2 + 1;
            g->lastcol = g->firstcol - 1 + size / 2;
        }
    }

    int nrows = g->lastrow - g->firstrow + 1;
    if (g->npcols == g->nprows) {
        g->send_start = 1;
        g->send_len = nrows;
        g->exch_proc = (g->me % g->nprows) * g->nprows + g->me / g->nprows;
    } else {
        /* A process row holds two column blocks' worth of rows: the even
         * process sends the first half to its transpose, the odd the second. */
        if (g->me % 2 == 0) {
            g->send_start = 1;
            g->send_len = (1 + nrows) / 2;
        } else {
            g->send_start = (1 + nrows) / 2 + 1;
            g->send_len = nrows / 2;
        }
        g->exch_proc = 2 * ((g->me / 2 % g->nprows) * g->nprows + g->me / 2 / g->nprows) + g->me % 2;
    }

    g->l2npcols = 0;
    for (int i = g->npcols / 2; i > 0; i /= 2)
        g->l2npcols++;

    /* Step i pairs processes whose column numbers differ by npcols/2^i. */
    int div = g->npcols;
    for (int i = 1; i <= g->l2npcols; i++) {
        int j = (g->proc_col + div / 2) % div + g->proc_col / div * div;
        g->reduce_exch_proc[i] = g->proc_row * g->npcols + j;
        div /= 2;
    }
    for (int i = g->l2npcols; i >= 1; i--) {
        if (g->nprows == g->npcols) {
            g->reduce_send_starts[i] = g->send_start;
            g->reduce_send_lengths[i] = g->send_len;
            g->reduce_recv_lengths[i] = nrows;
        } else {
            g->reduce_recv_lengths[i] = g->send_len;
            if (i == g->l2npcols) {
                /* first step: give the partner the half it will send on */
                g->reduce_send_lengths[i] = nrows - g->send_len;
                g->reduce_send_starts[i] = g->me % 2 == 0 ? g->send_start + g->send_len : 1;
            } else {
                g->reduce_send_lengths[i] = g->send_len;
                g->reduce_send_starts[i] = g->send_start;
            }
        }
        g->reduce_recv_starts[i] = g->send_start;
    }
    g->exch_recv_length = g->lastcol - g->firstcol + 1;
}

/* --- matrix generation ---------------------------------------------------- */

typedef struct {
    double tran; /* generator state shared by the whole generation */
    int n, nn1;
    int *mark;   /* n+1 flags, all zero between calls */
    int *marked; /* positions flagged in this call */
} cg_sprnvc;

/* A random sparse vector with `nz` distinct nonzero positions (1-based). */
static int sparse_random_vector(cg_sprnvc *g, int nz, double *v, int *iv)
{
    int count = 0;
    while (count < nz) {
        double value = npb_randlc(&g->tran, CG_MULT);
        double where = npb_randlc(&g->tran, CG_MULT);
        int i = (int)(g->nn1 * where) + 1;
        if (i > g->n || g->mark[i])
            continue;
        g->mark[i] = 1;
        g->marked[count] = i;
        v[count] = value;
        iv[count] = i;
        count++;
    }
    for (int k = 0; k < count; k++)
        g->mark[g->marked[k]] = 0;
    return count;
}

typedef struct {
    long count, cap;
    int *row, *col;
    double *val;
} triples;

static void triples_push(triples *t, int row, int col, double val)
{
    if (t->count == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1 << 16;
        t->row = realloc(t->row, sizeof(int) * t->cap);
        t->col = realloc(t->col, sizeof(int) * t->cap);
        t->val = realloc(t->val, sizeof(double) * t->cap);
        if (!t->row || !t->col || !t->val) {
            fprintf(stderr, "loggp-npb-cg: out of memory for %ld matrix elements\n", t->cap);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    t->row[t->count] = row;
    t->col[t->count] = col;
    t->val[t->count] = val;
    t->count++;
}

/* A = sum_i w_i x_i x_i^T + (rcond - shift) I, where x_i is a random sparse
 * vector with element i set to 0.5 and w_i runs geometrically from 1 down to
 * rcond. Every process draws all the vectors and keeps its own block. */
static void make_matrix(const cg_class *c, const cg_grid *g, cg_matrix *m)
{
    int n = c->na;
    cg_sprnvc gen = {.tran = CG_SEED, .n = n, .nn1 = 1};
    while (gen.nn1 < n)
        gen.nn1 *= 2;
    npb_randlc(&gen.tran, CG_MULT); /* the reference draws one number first */
    gen.mark = calloc((size_t)n + 1, sizeof(int));
    gen.marked = checked_malloc(sizeof(int) * (c->nonzer + 1));
    double *v = checked_malloc(sizeof(double) * (c->nonzer + 1));
    int *iv = checked_malloc(sizeof(int) * (c->nonzer + 1));
    if (!gen.mark)
        MPI_Abort(MPI_COMM_WORLD, 1);

    triples t = {0};
    double size = 1.0, ratio = pow(CG_RCOND, 1.0 / n);
    for (int outer = 1; outer <= n; outer++) {
        int nzv = sparse_random_vector(&gen, c->nonzer, v, iv);
        int found = 0;
        for (int k = 0; k < nzv; k++)
            if (iv[k] == outer) {
                v[k] = 0.5;
                found = 1;
            }
        if (!found) {
            v[nzv] = 0.5;
            iv[nzv] = outer;
            nzv++;
        }
        for (int jc = 0; jc < nzv; jc++) {
            int col = iv[jc];
            if (col < g->firstcol || col > g->lastcol)
                continue;
            double scale = size * v[jc];
            for (int jr = 0; jr < nzv; jr++) {
                int row = iv[jr];
                if (row >= g->firstrow && row <= g->lastrow)
                    triples_push(&t, row, col, v[jr] * scale);
            }
        }
        size *= ratio;
    }
    for (int i = g->firstrow; i <= g->lastrow; i++)
        if (i >= g->firstcol && i <= g->lastcol)
            triples_push(&t, i, i, CG_RCOND - c->shift);
    free(gen.mark);
    free(gen.marked);
    free(v);
    free(iv);

    /* Group the triples by row, keeping their order, then add duplicates:
     * each row's columns appear in order of first (nonzero) occurrence. */
    int nrows = g->lastrow - g->firstrow + 1;
    int *start = calloc((size_t)nrows + 1, sizeof(int));
    int *order_col = checked_malloc(sizeof(int) * (t.count ? t.count : 1));
    double *order_val = checked_malloc(sizeof(double) * (t.count ? t.count : 1));
    if (!start)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long k = 0; k < t.count; k++)
        start[t.row[k] - g->firstrow + 1]++;
    for (int r = 0; r < nrows; r++)
        start[r + 1] += start[r];
    int *fill = checked_malloc(sizeof(int) * (nrows + 1));
    memcpy(fill, start, sizeof(int) * (nrows + 1));
    for (long k = 0; k < t.count; k++) {
        int at = fill[t.row[k] - g->firstrow]++;
        order_col[at] = t.col[k];
        order_val[at] = t.val[k];
    }
    free(fill);
    free(t.row);
    free(t.col);
    free(t.val);

    double *dense = calloc((size_t)n + 1, sizeof(double));
    int *seen = calloc((size_t)n + 1, sizeof(int));
    int *cols = checked_malloc(sizeof(int) * (n + 1));
    if (!dense || !seen)
        MPI_Abort(MPI_COMM_WORLD, 1);
    m->nrows = nrows;
    m->rowstr = checked_malloc(sizeof(int) * (nrows + 1));
    m->colidx = checked_malloc(sizeof(int) * (t.count ? t.count : 1));
    m->a = checked_malloc(sizeof(double) * (t.count ? t.count : 1));
    int nza = 0;
    m->rowstr[0] = 0;
    for (int r = 0; r < nrows; r++) {
        int ncols = 0;
        for (int k = start[r]; k < start[r + 1]; k++) {
            int col = order_col[k];
            dense[col] += order_val[k];
            if (!seen[col] && dense[col] != 0.0) {
                seen[col] = 1;
                cols[ncols++] = col;
            }
        }
        for (int k = 0; k < ncols; k++) {
            int col = cols[k];
            seen[col] = 0;
            double value = dense[col];
            dense[col] = 0.0;
            if (value != 0.0) {
                m->a[nza] = value;
                m->colidx[nza] = col - g->firstcol; /* local, 0-based */
                nza++;
            }
        }
        m->rowstr[r + 1] = nza;
    }
    free(dense);
    free(seen);
    free(cols);
    free(start);
    free(order_col);
    free(order_val);
}

/* --- the solver ------------------------------------------------------------ */

typedef struct {
    const cg_grid *g;
    const cg_matrix *m;
    int ncols, vec_len;
    double *x, *z, *p, *q, *r, *w;
} cg_solver;

/* Sum of a scalar across the process row, by pairwise exchanges. */
static double row_sum(const cg_grid *g, double local)
{
    for (int i = 1; i <= g->l2npcols; i++) {
        double other;
        MPI_Request req;
        MPI_Irecv(&other, 1, MPI_DOUBLE, g->reduce_exch_proc[i], i, MPI_COMM_WORLD, &req);
        MPI_Send(&local, 1, MPI_DOUBLE, g->reduce_exch_proc[i], i, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        local += other;
    }
    return local;
}

/* out = A * in for this process's block of columns, summed over the process
 * row and delivered in the column distribution; `out` also receives the
 * partner pieces during the row sum. */
static void matvec(cg_solver *s, const double *in, double *out)
{
    const cg_grid *g = s->g;
    const cg_matrix *m = s->m;
    double *w = s->w;
    for (int j = 0; j < m->nrows; j++) {
        double sum = 0.0;
        for (int k = m->rowstr[j]; k < m->rowstr[j + 1]; k++)
            sum += m->a[k] * in[m->colidx[k]];
        w[j] = sum;
    }
    for (int i = g->l2npcols; i >= 1; i--) {
        MPI_Request req;
        MPI_Irecv(out + g->reduce_recv_starts[i] - 1, g->reduce_recv_lengths[i], MPI_DOUBLE,
                  g->reduce_exch_proc[i], i, MPI_COMM_WORLD, &req);
        MPI_Send(w + g->reduce_send_starts[i] - 1, g->reduce_send_lengths[i], MPI_DOUBLE,
                 g->reduce_exch_proc[i], i, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int j = g->send_start - 1; j < g->send_start - 1 + g->reduce_recv_lengths[i]; j++)
            w[j] += out[j];
    }
    if (g->l2npcols != 0) {
        MPI_Request req;
        MPI_Irecv(out, g->exch_recv_length, MPI_DOUBLE, g->exch_proc, 1, MPI_COMM_WORLD, &req);
        MPI_Send(w + g->send_start - 1, g->send_len, MPI_DOUBLE, g->exch_proc, 1, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        memcpy(out, w, sizeof(double) * g->exch_recv_length);
    }
    memset(w, 0, sizeof(double) * s->vec_len);
}

/* 25 CG steps on A z = x from z = 0; returns ||x - A z||. */
static double conj_grad(cg_solver *s)
{
    const cg_grid *g = s->g;
    const int n = s->ncols;
    double *x = s->x, *z = s->z, *p = s->p, *q = s->q, *r = s->r;
    for (int j = 0; j < s->vec_len; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = x[j];
        s->w[j] = 0.0;
    }
    double sum = 0.0;
    for (int j = 0; j < n; j++)
        sum += r[j] * r[j];
    double rho = row_sum(g, sum);

    for (int step = 0; step < CG_STEPS; step++) {
        matvec(s, p, q);
        sum = 0.0;
        for (int j = 0; j < n; j++)
            sum += p[j] * q[j];
        double alpha = rho / row_sum(g, sum);
        double rho0 = rho;
        for (int j = 0; j < n; j++) {
            z[j] += alpha * p[j];
            r[j] -= alpha * q[j];
        }
        sum = 0.0;
        for (int j = 0; j < n; j++)
            sum += r[j] * r[j];
        rho = row_sum(g, sum);
        double beta = rho / rho0;
        for (int j = 0; j < n; j++)
            p[j] = r[j] + beta * p[j];
    }

    matvec(s, z, r); /* r = A z */
    sum = 0.0;
    for (int j = 0; j < n; j++) {
        double d = x[j] - r[j];
        sum += d * d;
    }
    return sqrt(row_sum(g, sum));
}

/* One inverse power step: solve, then zeta = shift + 1/(x.z), x = z/||z||. */
static double power_step(cg_solver *s, double shift, double *rnorm)
{
    *rnorm = conj_grad(s);
    double norms[2] = {0.0, 0.0};
    for (int j = 0; j < s->ncols; j++) {
        norms[0] += s->x[j] * s->z[j];
        norms[1] += s->z[j] * s->z[j];
    }
    for (int i = 1; i <= s->g->l2npcols; i++) {
        double other[2];
        MPI_Request req;
        MPI_Irecv(other, 2, MPI_DOUBLE, s->g->reduce_exch_proc[i], i, MPI_COMM_WORLD, &req);
        MPI_Send(norms, 2, MPI_DOUBLE, s->g->reduce_exch_proc[i], i, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        norms[0] += other[0];
        norms[1] += other[1];
    }
    double inv_norm = 1.0 / sqrt(norms[1]);
    for (int j = 0; j < s->ncols; j++)
        s->x[j] = inv_norm * s->z[j];
    return shift + 1.0 / norms[0];
}

int main(int argc, char **argv)
{
    cg_grid g = {0};
    npb_args args;
    int status = npb_begin(&argc, &argv, "cg", "SWABC", &g.me, &g.nprocs, &args);
    if (status >= 0)
        return status;
    const cg_class *c = NULL;
    for (size_t i = 0; i < sizeof CG_CLASSES / sizeof CG_CLASSES[0]; i++)
        if (CG_CLASSES[i].cls == args.cls)
            c = &CG_CLASSES[i];

    /* The grid needs a power of two (as in the reference); 1024 bounds the
     * schedule tables and keeps every block non-empty for all classes. */
    if (!npb_is_power_of_two(g.nprocs) || g.nprocs > 1024) {
        if (g.me == 0)
            fprintf(stderr, "loggp-npb-cg: %d processes: class %c needs a power of two"
                    " from 1 to %d\n", g.nprocs, c->cls, 1 << 10);
        MPI_Finalize();
        return 2;
    }
    setup_grid(&g, c->na);

    if (g.me == 0) {
        printf("\n\n NAS Parallel Benchmarks 3.4 (loggp C+MPI) -- CG Benchmark\n\n");
        printf(" Size: %10d  (class %c)\n", c->na, c->cls);
        printf(" Iterations: %5d\n", c->niter);
        printf(" Number of nonzeroes per row: %8d\n", c->nonzer);
        printf(" Eigenvalue shift: %9.3f\n", c->shift);
        printf(" Total number of processes: %6d (%d x %d grid)\n", g.nprocs, g.nprows, g.npcols);
    }

    cg_matrix m;
    make_matrix(c, &g, &m);
    if (args.perturb && g.me == 0 && m.rowstr[1] > 0)
        m.a[0] += 10.0; /* test only: one wrong matrix element */

    cg_solver s = {.g = &g, .m = &m, .ncols = g.lastcol - g.firstcol + 1};
    int nrows = g.lastrow - g.firstrow + 1;
    s.vec_len = (nrows > s.ncols ? nrows : s.ncols) + 1;
    double **vecs[] = {&s.x, &s.z, &s.p, &s.q, &s.r, &s.w};
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        *vecs[i] = checked_malloc(sizeof(double) * s.vec_len);

    double rnorm, zeta;
    /* One untimed step warms up pages and connections, as the reference does. */
    for (int j = 0; j < s.vec_len; j++)
        s.x[j] = 1.0;
    power_step(&s, c->shift, &rnorm);

    for (int j = 0; j < s.vec_len; j++)
        s.x[j] = 1.0;
    zeta = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    MPI_Pcontrol(1); /* the timed section is the kernel region (a study's scope = "kernel") */
    for (int it = 1; it <= c->niter; it++) {
        zeta = power_step(&s, c->shift, &rnorm);
        if (g.me == 0) {
            if (it == 1)
                printf("\n   iteration           ||r||                 zeta\n");
            printf("    %5d       %20.14e%20.13f\n", it, rnorm, zeta);
        }
    }
    MPI_Pcontrol(0);
    double elapsed = MPI_Wtime() - t_start, max_elapsed = 0.0;
    MPI_Reduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    int verified = 0;
    if (g.me == 0) {
        double err = fabs(zeta - c->zeta_ref) / c->zeta_ref;
        verified = err <= CG_EPSILON; /* NaN fails */
        printf("\n Benchmark completed\n");
        printf(" Zeta is    %20.13e (reference %20.13e)\n", zeta, c->zeta_ref);
        printf(" Error is   %20.13e (tolerance %.0e)\n", err, CG_EPSILON);
        double nz = c->nonzer;
        double flops = 2.0 * c->niter * c->na *
                       (3.0 + nz * (nz + 1) + 25.0 * (5.0 + nz * (nz + 1)) + 3.0);
        npb_report report = {
            .name = "CG", .cls = c->cls, .size = {c->na, 0, 0}, .niter = c->niter,
            .time_s = max_elapsed, .mops = max_elapsed > 0 ? flops / max_elapsed / 1.0e6 : 0.0,
            .optype = "floating point", .verified = verified, .nprocs = g.nprocs,
        };
        npb_print_report(&report);
    }
    MPI_Bcast(&verified, 1, MPI_INT, 0, MPI_COMM_WORLD);

    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
        free(*vecs[i]);
    free(m.rowstr);
    free(m.colidx);
    free(m.a);
    MPI_Finalize();
    return verified ? 0 : 1;
}
