"""Slowdown statistics: ratio of medians with a bootstrap interval, linear
sensitivity fits, and flags for plateaus and jumps."""
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def slowdown(times, baseline_times, rng=None, resamples=BOOTSTRAP_RESAMPLES):
    """Ratio of medians T(knob)/T(0) and its 95 % percentile-bootstrap interval,
    resampling the knob runs and the baseline runs independently.
    Returns (ratio, low, high); low and high are None when a side has a single run:
    resampling one run shows none of its spread, so such an interval would look
    narrower than the runs allow (no_interval_words says so)."""
    t = np.asarray(times, dtype=float)
    b = np.asarray(baseline_times, dtype=float)
    if t.size == 0 or b.size == 0:
        raise ValueError("slowdown needs at least one run and one baseline run")
    if np.any(b <= 0):
        raise ValueError(f"baseline runtimes must be > 0, got {b.min()}")
    ratio = float(np.median(t) / np.median(b))
    if t.size == 1 or b.size == 1:
        return ratio, None, None
    rng = np.random.default_rng(0) if rng is None else rng
    ts = np.median(rng.choice(t, size=(resamples, t.size), replace=True), axis=1)
    bs = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(ts / bs, [alpha, 1 - alpha])
    return ratio, float(low), float(high)


def no_interval_words(runs, baseline_runs):
    """Why a slowdown has no interval, for a reader."""
    if runs == 1 and baseline_runs == 1:
        return "one run each: no interval"
    def count(n, what):
        return f"{n} {what}" + ("s" if n != 1 else "")
    return f"{count(runs, 'run')} over {count(baseline_runs, 'baseline run')}: a single run gives no interval"


def interval_cells(point, words=False):
    """(low, high) table cells of a point dict with slowdown, low, high, runs and
    baseline_runs: the bounds, or where there are none, empty cells (None) or with
    words=True the reason in the first."""
    if point["low"] is not None and point["high"] is not None:
        return point["low"], point["high"]
    if not words:
        return None, None
    return no_interval_words(point["runs"], point["baseline_runs"]), None


def error_lengths(estimate, low, high):
    """(below, above) for an error bar; none drawn (0, 0) where there is no interval."""
    if low is None or high is None:
        return 0.0, 0.0
    return estimate - low, high - estimate


@dataclass
class Fit:
    slope: float        # % slowdown per unit of x
    intercept: float    # % at x = 0
    r2: float | None    # None for fewer than 3 points or a constant y
    n: int


def linear_fit(x, y):
    """Least squares y = intercept + slope * x. Needs two distinct x values."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        return None
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (intercept + slope * x)
    total = np.sum((y - y.mean()) ** 2)
    # Two points always lie on a line: R^2 says something from three on.
    r2 = None if total == 0 or x.size < 3 else float(1 - np.sum(residual ** 2) / total)
    return Fit(float(slope), float(intercept), r2, int(x.size))


def flags(x, slowdown_pct, ci_halfwidth_pct, fit, min_effect_pct=2.0):
    """Plateaus and jumps along a sweep (x ascending, baseline at x = 0 first).

    A segment between neighbouring settings is a jump when its rise exceeds
    three times what the overall slope predicts and is larger than the
    noise (the two points' interval half-widths) and min_effect_pct; it is a
    plateau when the curve has risen before but the segment adds less than a
    quarter of the predicted rise (within noise). Returns [(kind, x_from, x_to)]."""
    out = []
    if fit is None or len(x) < 3:
        return out
    for i in range(1, len(x)):
        dx = x[i] - x[i - 1]
        rise = slowdown_pct[i] - slowdown_pct[i - 1]
        predicted = fit.slope * dx
        noise = ci_halfwidth_pct[i] + ci_halfwidth_pct[i - 1]
        if rise > max(3 * predicted, noise, min_effect_pct) and predicted >= 0:
            out.append(("jump", x[i - 1], x[i]))
        elif (predicted > max(noise, min_effect_pct) and rise < 0.25 * predicted
              and slowdown_pct[i - 1] > min_effect_pct):
            out.append(("plateau", x[i - 1], x[i]))
    return out


def slope_interval(x, samples, rng=None, resamples=BOOTSTRAP_RESAMPLES):
    """95 % percentile-bootstrap interval of the slope (% per unit of x) of
    100*(median(T(x))/median(T(0)) - 1) against x. samples[0] are the baseline
    runtimes (x[0] = 0), samples[i] the runtimes at x[i]; each resample draws
    every setting's runs (baseline included) with replacement."""
    rng = np.random.default_rng(0) if rng is None else rng
    x = np.asarray(x, dtype=float)
    medians = np.empty((resamples, len(samples)))
    for i, t in enumerate(samples):
        t = np.asarray(t, dtype=float)
        medians[:, i] = np.median(rng.choice(t, size=(resamples, t.size), replace=True), axis=1)
    y = 100 * (medians / medians[:, :1] - 1)
    xc = x - x.mean()
    slopes = (y - y.mean(axis=1, keepdims=True)) @ xc / np.sum(xc ** 2)
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(slopes, [alpha, 1 - alpha])
    return float(low), float(high)
