/* loggp-detours: how often, and for how long, this CPU is taken away from a
 * process that never yields (Beckman et al.'s "selfish detour" method: spin
 * reading the clock and record every gap between two readings longer than a
 * threshold). On a shared VM the host's preemptions land at the end of a
 * spin or a wait with a probability that grows with its length, and then
 * lengthen it: this is the noise under a knob's reading (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The value below which a fraction q of the n sorted values lie. */
static double quantile(const uint64_t *sorted, size_t n, double q)
{
    return n ? (double)sorted[(size_t)(q * (double)(n - 1))] : 0.0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 2.0, threshold_us = 2.0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.01, 3600, &seconds)) {
                fprintf(stderr, "loggp-detours: --seconds must be 0.01-3600, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--threshold-us") == 0 && i + 1 < argc) {
            if (parse_double(argv[++i], 0.1, 1000000, &threshold_us)) {
                fprintf(stderr, "loggp-detours: --threshold-us must be 0.1-1000000, not '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: loggp-detours [--seconds S] [--threshold-us US] [--json]\n"
                            "loggp-detours: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    uint64_t threshold = (uint64_t)(threshold_us * 1000.0);
    size_t cap = 4096, n = 0;
    uint64_t *detours = malloc(cap * sizeof *detours);
    if (!detours) {
        fprintf(stderr, "loggp-detours: out of memory\n");
        return 1;
    }
    uint64_t start = loggp_now_ns(), end = start + (uint64_t)(seconds * 1e9), last = start, lost = 0;
    for (uint64_t now = start; now < end; last = now) {
        now = loggp_now_ns();
        uint64_t gap = now - last;
        if (gap < threshold)
            continue;
        lost += gap;
        if (n == cap) {
            uint64_t *more = realloc(detours, 2 * cap * sizeof *detours);
            if (!more)
                break; /* keep what was recorded */
            detours = more;
            cap *= 2;
        }
        detours[n++] = gap;
    }
    double span = (double)(last - start) / 1e9;
    qsort(detours, n, sizeof *detours, by_value);
    if (json) {
        printf("{\"threshold_us\": %.3f, \"seconds\": %.3f, \"clock\": \"%s\", \"per_second\": %.1f, "
               "\"lost_fraction\": %.6f, \"median_us\": %.3f, \"p90_us\": %.3f, \"max_us\": %.3f}\n",
               threshold_us, span, loggp_clock_uses_tsc() ? "TSC" : "vDSO", (double)n / span,
               (double)lost / 1e9 / span, quantile(detours, n, 0.5) / 1e3, quantile(detours, n, 0.9) / 1e3,
               n ? (double)detours[n - 1] / 1e3 : 0.0);
        free(detours);
        return 0;
    }
    printf("detours of this CPU longer than %.1f us, over %.2f s of spinning (clock: %s)\n", threshold_us, span,
           loggp_clock_uses_tsc() ? "TSC" : "vDSO");
    printf("  per second  %.0f\n", (double)n / span);
    printf("  time lost   %.2f %%\n", 100.0 * (double)lost / 1e9 / span);
    printf("  length, us  median %.1f  p90 %.1f  max %.1f\n", quantile(detours, n, 0.5) / 1e3,
           quantile(detours, n, 0.9) / 1e3, n ? (double)detours[n - 1] / 1e3 : 0.0);
    free(detours);
    return 0;
}
