/* How much slower the same computation runs right after a wait than back to back, on
 * this machine, with no MPI and no emulation involved (docs/prediction-against-emulation.md, "Computation
 * that grows with waiting"). The computation is one pass of a CSR matrix-vector
 * product over a working set of KIB KiB, gathering from a 56 KB vector as NPB CG
 * does. Before each pass the program waits WAIT_US one of four ways:
 *   none   no wait: the passes run back to back
 *   spin   spin reading the clock (as a polling MPI rank's wait, minus its calls)
 *   yield  spin calling sched_yield (as MPICH's progress loop does)
 *   touch  spin reading one word of every page of the working set in turn
 * The ways are interleaved and rotated each round. Prints, per way, the median pass
 * in us, then the median of its ratio to none's pass in the same round; each with its
 * 95 % interval (order statistics):
 *   compute_after_wait KIB WAIT_US ROUNDS */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum way { NONE, SPIN, YIELD, TOUCH, WAYS };
#define MAX_ROUNDS 100000
#define VECTOR 7000 /* doubles: CG class A's 56 KB exchanged vector */
#define PER_ROW 26  /* nonzeros a row */
#define PAGE 4096

static const char *const way_names[WAYS] = {[NONE] = "none", [SPIN] = "spin", [YIELD] = "yield", [TOUCH] = "touch"};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The whole number `text` spells if it lies in [least, most], else -1. */
static long parsed(const char *text, long least, long most)
{
    char *end;
    long value = strtol(text, &end, 10);
    return end != text && !*end && value >= least && value <= most ? value : -1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct matrix {
    size_t rows, nonzeros;
    double *values;
    int *columns;
    double *x, *y;
};

static double pass(struct matrix *m)
{
    double sum = 0;
    for (size_t i = 0; i < m->rows; i++) {
        double s = 0;
        for (size_t j = i * PER_ROW; j < (i + 1) * PER_ROW; j++)
            s += m->values[j] * m->x[m->columns[j]];
        m->y[i] = s;
        sum += s;
    }
    return sum;
}

/* Wait `seconds` one way; returns something read so touching is not optimised away. */
static double wait_a_way(enum way way, double seconds, const struct matrix *m)
{
    double end = now_s() + seconds, read = 0;
    size_t page = 0;
    const size_t values_per_page = PAGE / sizeof(double), columns_per_page = PAGE / sizeof(int);
    while (way != NONE && now_s() < end) {
        if (way == YIELD) {
            sched_yield();
        } else if (way == TOUCH) {
            for (int k = 0; k < 64; k++, page++) {
                size_t v = page * values_per_page % m->nonzeros, c = page * columns_per_page % m->nonzeros;
                read += m->values[v] + m->columns[c];
            }
        }
    }
    return read;
}

int main(int argc, char **argv)
{
    long kib = argc == 4 ? parsed(argv[1], 64, 1L << 22) : -1;
    long wait_us = argc == 4 ? parsed(argv[2], 0, 1000000) : -1;
    long rounds = argc == 4 ? parsed(argv[3], 3, MAX_ROUNDS) : -1;
    if (kib < 0 || wait_us < 0 || rounds < 0) {
        fprintf(stderr, "usage: compute_after_wait KIB WAIT_US ROUNDS  (KIB 64..4194304, WAIT_US 0..1000000, "
                        "ROUNDS 3..%d)\n",
                MAX_ROUNDS);
        return 2;
    }
    struct matrix m;
    m.rows = (size_t)kib * 1024 / (PER_ROW * (sizeof(double) + sizeof(int)));
    if (m.rows == 0)
        m.rows = 1;
    m.nonzeros = m.rows * PER_ROW;
    m.values = malloc(m.nonzeros * sizeof *m.values);
    m.columns = malloc(m.nonzeros * sizeof *m.columns);
    m.x = malloc(VECTOR * sizeof *m.x);
    m.y = malloc(m.rows * sizeof *m.y);
    double *taken = malloc((size_t)rounds * WAYS * sizeof *taken);
    if (!m.values || !m.columns || !m.x || !m.y || !taken) {
        fprintf(stderr, "compute_after_wait: cannot allocate a %ld KiB working set\n", kib);
        return 1;
    }
    srand(1);
    for (size_t j = 0; j < m.nonzeros; j++) {
        m.columns[j] = rand() % VECTOR;
        m.values[j] = 1.0 / (double)(j + 1);
    }
    for (int i = 0; i < VECTOR; i++)
        m.x[i] = 1.0;
    volatile double sink = pass(&m); /* first touch of every page, outside the timing */
    for (long r = 0; r < rounds; r++) {
        for (int k = 0; k < WAYS; k++) {
            enum way way = (enum way)((k + r) % WAYS);
            sink += wait_a_way(way, (double)wait_us * 1e-6, &m);
            double start = now_s();
            sink += pass(&m);
            taken[(size_t)way * (size_t)rounds + (size_t)r] = now_s() - start;
        }
    }
    /* the ranks bounding a median's 95 % interval: n/2 -+ 1.96 sqrt(n)/2 */
    double reach = 0.98 * sqrt((double)rounds);
    long low_rank = (long)floor((double)rounds / 2 - reach), high_rank = (long)ceil((double)rounds / 2 + reach);
    if (low_rank < 0)
        low_rank = 0;
    if (high_rank > rounds - 1)
        high_rank = rounds - 1;
    double *ratios = malloc((size_t)rounds * WAYS * sizeof *ratios);
    if (!ratios) {
        fprintf(stderr, "compute_after_wait: cannot allocate the ratios\n");
        return 1;
    }
    for (int w = 0; w < WAYS; w++)
        for (long r = 0; r < rounds; r++)
            ratios[(size_t)w * (size_t)rounds + (size_t)r] =
                taken[(size_t)w * (size_t)rounds + (size_t)r] / taken[(size_t)r];
    for (int w = 0; w < WAYS; w++) {
        double *own = taken + (size_t)w * (size_t)rounds, *ratio = ratios + (size_t)w * (size_t)rounds;
        qsort(own, (size_t)rounds, sizeof *own, by_value);
        qsort(ratio, (size_t)rounds, sizeof *ratio, by_value);
        printf("%s %.1f %.1f %.1f %.3f %.3f %.3f\n", way_names[w], own[rounds / 2] * 1e6, own[low_rank] * 1e6,
               own[high_rank] * 1e6, ratio[rounds / 2], ratio[low_rank], ratio[high_rank]);
    }
    (void)sink;
    return 0;
}
