#include "sampling.h"

#include <math.h>

int next_batch_size(int previous, size_t taken, size_t cap)
{
    int next = previous < 64 ? 2 * previous : previous;
    size_t left = taken < cap ? cap - taken : 0;
    return (size_t)next > left ? (int)left : next;
}

int sampling_done(median_ci r, size_t taken, double elapsed_s, const sampling_target *t)
{
    int enough = taken >= t->min_samples;
    if (enough && ci_meets_target(r, t->rel, t->abs_us))
        return 1;
    return taken >= t->max_samples || (enough && elapsed_s > t->budget_s);
}

median_ci gap_from_bursts(median_ci t_burst, median_ci t_single, int burst, size_t samples)
{
    double k = burst - 1;
    median_ci r;
    r.median = (t_burst.median - t_single.median) / k;
    r.ci_half = sqrt(t_burst.ci_half * t_burst.ci_half + t_single.ci_half * t_single.ci_half) / k;
    r.n = samples;
    return r;
}

int phase_needs_retry(median_ci best, double abs_us)
{
    return !ci_meets_target(best, 0.10, 10 * abs_us);
}

double pace_for_gap(double gap_us)
{
    return 1.25 * fmax(gap_us, 0) + PACE_SLACK_US;
}

double receive_wait_us(double t_zero_us, double t_m_us, double pace_us, double equalizer_us)
{
    return 1.5 * (t_zero_us + t_m_us) + pace_us + 2.0 + equalizer_us;
}

double knob_idle_us(const loggp_knobs *set, long m)
{
    const int64_t *ps = set->ps;
    double per_byte = m > 1 ? (double)(m - 1) * (double)ps[LOGGP_KNOB_GAP_PER_BYTE] * 1e-6 : 0;
    double one_way = (double)(ps[LOGGP_KNOB_O_S] + ps[LOGGP_KNOB_O_R] + ps[LOGGP_KNOB_LATENCY]) * 1e-6;
    double gap = fmax((double)ps[LOGGP_KNOB_GAP], fmax((double)ps[LOGGP_KNOB_O_S], (double)ps[LOGGP_KNOB_O_R])) * 1e-6;
    return 1.5 * (2 * one_way + per_byte) + 1.25 * (gap + per_byte);
}

double idle_equalizer_us(const loggp_knobs *sets, int n_sets, int current, long m)
{
    if (current < 0)
        return 0;
    double longest = 0;
    for (int k = 0; k < n_sets; k++)
        longest = fmax(longest, knob_idle_us(&sets[k], m));
    return longest - knob_idle_us(&sets[current], m);
}
