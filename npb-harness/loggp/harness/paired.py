"""A study's runs as pairs: each knob setting's run against the baseline runs of its
own round (studyfile.round_order keeps them minutes apart at most). Slopes come from
the setting minus the armed baseline (every knob at its smallest step, so the layer's
own cost cancels), slowdowns from the setting over the zero-knob baseline (the
unperturbed program); both with nonparametric intervals (loggp.experiments.precision).
Studies recorded before the armed baseline existed pair with the zero-knob one."""
import math

from loggp.experiments import precision

from .studyfile import ARMED_SWEEP, ZERO_SWEEP

# the column that carries each sweep knob's setting, in ns (G: ns per byte)
KNOB_COLUMN = {"o": "o_s_ns", "o_s": "o_s_ns", "o_r": "o_r_ns", "g": "g_ns", "G": "G_ns_per_byte", "L": "L_ns"}


def group_of(run):
    return run["benchmark"], run["np"], run["class"]


def ok(runs):
    return [r for r in runs if r["status"] == "ok" and r["runtime_seconds"] is not None]


def by_round(runs, sweep):
    """{round: run} of one group's successful runs of one sweep (the first of a round)."""
    out = {}
    for r in ok(runs):
        if r["sweep"] == sweep:
            out.setdefault(r["round"], r)
    return out


def slope_pairs(group_runs, knob):
    """[(added setting in ns, added runtime in s)] of a group's runs of `knob` against the
    armed baseline of their round (the zero-knob one where a round has no armed run)."""
    armed, zero = by_round(group_runs, ARMED_SWEEP), by_round(group_runs, ZERO_SWEEP)
    column = KNOB_COLUMN[knob]
    out = []
    for r in ok(group_runs):
        if r["sweep"] != knob:
            continue
        base = armed.get(r["round"]) or zero.get(r["round"])
        if base is None:
            continue
        dx = r[column] - base[column]
        if dx > 0:
            out.append((dx, r["runtime_seconds"] - base["runtime_seconds"]))
    return out


def slope(group_runs, knob, reference_s):
    """The knob's slope as a fraction of `reference_s` (the unperturbed runtime) per ns of
    setting: the median of every pair's added time over its added setting, through zero
    (the armed baseline shares every constant cost), with its 95 % interval; None
    without pairs."""
    pairs = slope_pairs(group_runs, knob)
    if not pairs or reference_s <= 0:
        return None
    return precision.median_interval([dt / reference_s / dx for dx, dt in pairs])


def slowdown(group_runs, sweep, value_column, value):
    """Median over rounds of the run at `value` over the zero-knob run of its round, with its
    interval; None without pairs."""
    zero = by_round(group_runs, ZERO_SWEEP)
    ratios = [r["runtime_seconds"] / zero[r["round"]]["runtime_seconds"] for r in ok(group_runs)
              if r["sweep"] == sweep and r[value_column] == value and r["round"] in zero
              and zero[r["round"]]["runtime_seconds"] > 0]
    return precision.median_interval(ratios) if ratios else None


def settled(interval, goal):
    """Precise enough: a bounded interval whose half-width is within the goal's share of
    the estimate (a slope within 5 % of itself). A slope that holds zero never is."""
    if interval is None or not interval.bounded or precision.sign(interval) == 0:
        return False
    return interval.half_width <= goal.allowed(interval.estimate)


def shortfall(interval, goal):
    """How many times too wide an interval is for its goal (inf: unbounded or no effect)."""
    if interval is None or not interval.bounded or interval.estimate == 0:
        return math.inf
    return interval.half_width / goal.allowed(interval.estimate)
