/* What the spun_* bench programs share: a spin on MPI's clock, argument parsing, and the
 * median, alone or with its 95 % interval from order statistics. Header-only, so that each program
 * still builds from its one source with `mpicc -O2 -o NAME analysis/bench/NAME.c -lm`. */
#ifndef SPUN_H
#define SPUN_H

#include <math.h>
#include <mpi.h>
#include <stdlib.h>

/* Spends `us` microseconds of CPU time reading the clock. */
static inline void spin_us(double us)
{
    double end = MPI_Wtime() + us * 1e-6;
    while (us > 0 && MPI_Wtime() < end)
        ;
}

/* The number `text` spells if it lies in [least, most], else -1. */
static inline double parsed(const char *text, double least, double most)
{
    char *end;
    double value = strtod(text, &end);
    return end != text && !*end && value >= least && value <= most ? value : -1;
}

static inline int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts `values` and gives their median. */
static inline double median_of(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, by_value);
    return values[n / 2];
}

/* Sorts `values` and gives their median and the 95 % interval's low and high ends. */
static inline void median_interval(double *values, int n, double out[3])
{
    qsort(values, (size_t)n, sizeof *values, by_value);
    double reach = 0.98 * sqrt((double)n);
    int low = (int)floor(n / 2.0 - reach), high = (int)ceil(n / 2.0 + reach);
    out[0] = values[n / 2];
    out[1] = values[low < 0 ? 0 : low];
    out[2] = values[high > n - 1 ? n - 1 : high];
}

#endif
