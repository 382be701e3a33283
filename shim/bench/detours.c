/* loggp-detours: how often, and for how long, this CPU is taken away from a
 * process that never yields (Beckman et al.'s "selfish detour" method: spin
 * reading the clock and record every gap between two readings longer than a
 * threshold). On a shared virtual machine the host's preemptions land at the end of a
 * spin or a wait with a probability that grows with its length, and then
 * lengthen it: this is the noise under a knob's reading (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "order.h"

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: loggp-detours [--seconds S] [--threshold-us US] [--json]\n"
                 "How often and for how long this CPU is taken from a process that never yields:\n"
                 "spins reading the clock and reports every gap longer than the threshold.\n"
                 "  --seconds S        how long to spin (default 2)\n"
                 "  --threshold-us US  the shortest gap that counts, in us (default 2)\n"
                 "  --json             one JSON object instead of the text report\n"
                 "example:\n  loggp-detours --seconds 3\n");
}

int main(int argc, char **argv)
{
    double seconds = 2.0, threshold_us = 2.0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
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
            usage(stderr);
            fprintf(stderr, "loggp-detours: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    uint64_t threshold = (uint64_t)(threshold_us * 1000.0);
    size_t cap = 4096, n = 0;
    double *detours_us = malloc(cap * sizeof *detours_us);
    if (!detours_us) {
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
            double *more = realloc(detours_us, 2 * cap * sizeof *detours_us);
            if (!more)
                break; /* keep what was recorded */
            detours_us = more;
            cap *= 2;
        }
        detours_us[n++] = (double)gap / 1e3;
    }
    double span = (double)(last - start) / 1e9;
    loggp_sort_doubles(detours_us, n);
    double median = loggp_quantile_sorted(detours_us, n, 0.5), p90 = loggp_quantile_sorted(detours_us, n, 0.9);
    double longest = loggp_quantile_sorted(detours_us, n, 1.0);
    const char *clock = loggp_clock_uses_tsc() ? "TSC" : "vDSO";
    if (json)
        printf("{\"threshold_us\": %.3f, \"seconds\": %.3f, \"clock\": \"%s\", \"per_second\": %.1f, "
               "\"lost_fraction\": %.6f, \"median_us\": %.3f, \"p90_us\": %.3f, \"max_us\": %.3f}\n",
               threshold_us, span, clock, (double)n / span, (double)lost / 1e9 / span, median, p90, longest);
    else
        printf("detours of this CPU longer than %.1f us, over %.2f s of spinning (clock: %s)\n"
               "  per second  %.0f\n  time lost   %.2f %%\n  length, us  median %.1f  p90 %.1f  max %.1f\n",
               threshold_us, span, clock, (double)n / span, 100.0 * (double)lost / 1e9 / span, median, p90, longest);
    free(detours_us);
    return 0;
}
