"""From a study store to slowdown curves, sensitivity fits and model checks."""
import json
import math
import os
import sqlite3
from dataclasses import dataclass, field

import numpy as np

from loggp.experiments import precision
from loggp.harness import paired
from loggp.harness.studyfile import ARMED_SWEEP, DEFAULT_PRECISION, ZERO_SWEEP
from loggp.knobs.vocabulary import FIELDS, SETTINGS, TIME_PER_BYTE, knobs_of, unit_of

from . import models, stats

KNOB_ORDER = SETTINGS
KNOB_COLUMN = {s: FIELDS[knobs_of(s)[0]] for s in SETTINGS}
# Display units: times in us, G in ns/B. NS_PER_UNIT converts back.
UNIT = {s: "ns/B" if unit_of(s) == TIME_PER_BYTE else "us" for s in SETTINGS}
NS_PER_UNIT = {"us": 1000.0, "ns/B": 1.0}
KNOB_TITLE = {"o": "overhead o (o_s = o_r)", "o_s": "send overhead o_s",
              "o_r": "receive overhead o_r", "g": "gap g", "G": "per-byte gap G (1/bandwidth)",
              "L": "latency L"}
# Measurement and model agree when their slopes are within this factor.
AGREEMENT = 1.5
# Slowdowns closer to 1 than this count as no effect.
MIN_EFFECT = 0.02


@dataclass
class Point:
    value: float            # knob value in display units
    n: int
    median_s: float
    slowdown: float
    low: float
    high: float
    model: float | None = None      # count x delta prediction (slowdown)
    injected: float | None = None   # baseline + delay the shim reports it added
    pairs: int | None = None        # rounds holding this run and the zero-knob one, when paired

    @property
    def bounded(self):
        """Its interval is finite: unbounded ends mean too few pairs for one."""
        return bool(np.isfinite(self.low) and np.isfinite(self.high))

    def interval_text(self, digits=2):
        """'[1.18, 1.22]', or in words why there is none: never an infinite bound."""
        if self.bounded:
            return f"[{self.low:.{digits}f}, {self.high:.{digits}f}]"
        have = self.n if self.pairs is None else self.pairs
        return f"(too few pairs for an interval: {have} of the {precision.MIN_SAMPLES} needed)"


@dataclass
class Curve:
    benchmark: str
    np: int
    klass: str | None
    knob: str
    baseline_s: float
    points: list                    # ascending value, baseline (0) first
    fit: stats.Fit | None = None          # least squares over the points: flags and the drawn line
    slope: precision.Interval | None = None  # %/unit from paired runs: the sensitivity
    slope_low: float | None = None        # its 95 % interval, None while unbounded
    slope_high: float | None = None
    goal: precision.Precision | None = None  # the precision the study asked of slopes
    flags: list = field(default_factory=list)
    model_slope: float | None = None      # % per unit
    profile_count: float | None = None    # the model's count from the profile
    effective_count: float | None = None  # the count the measured slope implies
    verdict: str = ""

    @property
    def unit(self):
        return UNIT[self.knob]

    @property
    def resolved(self):
        """The slope's interval excludes zero: an effect, with its sign."""
        return self.slope is not None and precision.sign(self.slope) != 0

    @property
    def sensitivity(self):
        """The slope a reader may use, or None: never one whose interval holds zero."""
        return self.slope.estimate if self.resolved else None

    @property
    def precise(self):
        return self.goal is not None and paired.settled(self.slope, self.goal)

    def slope_text(self):
        """'+0.12 %/us [+0.11, +0.13], within 4 % (goal 5 %)', or 'no effect resolved, below X %/us'."""
        if self.slope is None:
            return "no pairs of runs: no slope"
        text = precision.describe_effect(self.slope, f"%/{self.unit}")
        if self.resolved:
            reached = self.slope.half_width / abs(self.slope.estimate)
            goal = f" (goal {self.goal.text()})" if self.goal else ""
            text += f", within {100 * reached:.2g} %{goal}"
        return text

    @property
    def label(self):
        c = f" class {self.klass}" if self.klass else ""
        return f"{self.benchmark}{c} np={self.np}"


@dataclass
class Analysis:
    facts: dict
    runs: list
    curves: list
    baselines: dict          # (benchmark, np, class) -> {"median_s", "n", "counts"}
    problems: list           # runs not ok
    notes: list


def load_runs(results_dir):
    path = os.path.join(results_dir, "results.sqlite")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        facts = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM study")}
        runs = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        conn.close()
    return facts, runs


def analyse(facts, runs, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    try:
        goal = precision.parse_precision(facts.get("precision") or DEFAULT_PRECISION)
    except ValueError:
        goal = precision.parse_precision(DEFAULT_PRECISION)
    ok = [r for r in runs if r["status"] == "ok" and r["runtime_seconds"] is not None]
    problems = [r for r in runs if r["status"] != "ok"]
    notes = []
    groups = {}
    for r in ok:
        groups.setdefault((r["benchmark"], r["np"], r["class"]), []).append(r)
    grid = sum(1 for r in ok if r["sweep"] == "grid")
    if grid:
        notes.append(f"{grid} runs moved several knobs at once (grid = true); they are in "
                     f"runs.csv but not in the one-knob curves")
    curves, baselines = [], {}
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2] or "")):
        rows = groups[key]
        base = [r for r in rows if r["sweep"] == ZERO_SWEEP]
        if not base:
            notes.append(f"{key[0]} np={key[1]}: no successful baseline run, no slowdowns")
            continue
        base_t = [r["runtime_seconds"] for r in base]
        t0 = float(np.median(base_t))
        if t0 <= 0:
            notes.append(f"{key[0]} np={key[1]}: baseline runtime {t0} s is not positive "
                         f"(timer resolution?), no slowdowns")
            continue
        counts = _counts_from(base)
        spread = float(np.std(base_t, ddof=1) / np.mean(base_t)) if len(base_t) > 1 else None
        baselines[key] = {"median_s": t0, "n": len(base), "counts": counts, "cv": spread}
        for knob in KNOB_ORDER:
            knob_rows = [r for r in rows if r["sweep"] == knob]
            if not knob_rows:
                continue
            curves.append(_curve(key, knob, rows, knob_rows, t0, counts, rng, goal))
    return curves, baselines, problems, notes


def _counts_from(base_rows):
    """Model counts from the baseline runs' profiles (median over runs)."""
    per_run = []
    for r in base_rows:
        if r.get("profile"):
            c = models.busiest(json.loads(r["profile"]))
            if c:
                per_run.append(c)
    if not per_run:
        return None
    out = dict(per_run[0])
    for k, v in per_run[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = float(np.median([c[k] for c in per_run]))
    return out


def _curve(key, knob, rows, knob_rows, t0, counts, rng, goal=None):
    """One knob's curve of a benchmark: slowdowns against the zero-knob run of each round,
    the slope from each setting minus the armed run of its round (paired.py)."""
    unit = UNIT[knob]
    per_ns = NS_PER_UNIT[unit]
    base = [r for r in rows if r["sweep"] == ZERO_SWEEP]
    base_t = [r["runtime_seconds"] for r in base]
    by_value = {}
    for r in knob_rows:
        by_value.setdefault(r[KNOB_COLUMN[knob]], []).append(r)
    cost = models.per_unit_cost(counts, knob)
    s, lo, hi = _bounded_or_infinite(*stats.slowdown(base_t, base_t, rng))
    points = [Point(0.0, len(base_t), t0, s, lo, hi, 1.0 if cost is not None or knob == "g" else None,
                    1.0)]
    for value_ns in sorted(by_value):
        at_value = by_value[value_ns]
        times = [r["runtime_seconds"] for r in at_value]
        ratio = paired.slowdown(at_value + base, knob, KNOB_COLUMN[knob], value_ns)
        pairs = None
        if ratio is not None and (ratio.bounded or not unpaired_enough(times, base_t)):
            s, lo, hi, pairs = ratio.estimate, ratio.low, ratio.high, ratio.n
        else:   # no round holds both runs, or failed runs broke the pairs: the medians' ratio, unpaired
            s, lo, hi = _bounded_or_infinite(*stats.slowdown(times, base_t, rng))
        injected = [models.injected_busiest(json.loads(r["profile"]), knob)
                    for r in at_value if r.get("profile")]
        injected = [i for i in injected if i is not None]
        inj = 1 + float(np.median(injected)) / t0 if injected else None
        if cost is not None:
            model = 1 + cost * value_ns / t0
        elif knob == "g":
            model = inj   # the stalls the shim added in bursts
        else:
            model = None
        points.append(Point(value_ns / per_ns, len(at_value), float(np.median(times)), s, lo, hi,
                            model, inj, pairs))
    curve = Curve(key[0], key[1], key[2], knob, t0, points, goal=goal)
    x = [p.value for p in points]
    y = [100 * (p.slowdown - 1) for p in points]
    # the drawn line and the flags: through the armed baseline's slowdown at 0 where the study
    # has one (the settings carry the layer's cost too), so the line's slope is the knob's
    armed = [r for r in rows if r["sweep"] == ARMED_SWEEP]
    armed_ratio = paired.slowdown(rows, ARMED_SWEEP, KNOB_COLUMN[knob], armed[0][KNOB_COLUMN[knob]]) if armed else None
    fit_y = [100 * (armed_ratio.estimate - 1)] + y[1:] if armed_ratio is not None else y
    curve.fit = stats.linear_fit(x, fit_y)
    raw = paired.slope(rows, knob, t0)
    if raw is not None:
        scale = 100 * per_ns   # fraction per ns -> % per display unit
        curve.slope = precision.Interval(raw.estimate * scale, raw.low * scale, raw.high * scale, raw.n)
        if curve.slope.bounded:
            curve.slope_low, curve.slope_high = curve.slope.low, curve.slope.high
    half = [100 * (p.high - p.low) / 2 if np.isfinite(p.high - p.low) else np.inf for p in points]
    curve.flags = stats.flags(x, fit_y, half, curve.fit)
    if cost is not None:
        curve.profile_count = cost * 1e9
        curve.model_slope = 100 * cost * per_ns / t0
    elif knob == "g" and all(p.model is not None for p in points) and len(points) > 1:
        fit = stats.linear_fit(x, [100 * (p.model - 1) for p in points])
        curve.model_slope = fit.slope if fit else None
        if counts is not None:
            curve.profile_count = counts["network_messages"]
    if curve.sensitivity is not None:
        curve.effective_count = curve.sensitivity / 100 * t0 / (per_ns * 1e-9)
    curve.verdict = verdict(curve)
    return curve


def _bounded_or_infinite(estimate, low, high):
    """stats.slowdown's result as a Point's: no interval is an unbounded one."""
    if low is None or high is None:
        return estimate, -math.inf, math.inf
    return estimate, low, high


def unpaired_enough(times, baseline_times):
    """Runs enough on each side for the unpaired interval where pairs are too few (runs
    whose partner failed)."""
    return min(len(times), len(baseline_times)) >= precision.MIN_SAMPLES


def verdict(curve):
    """One sentence: does the count x delta model explain the measurement? Compared only
    where the measured slope is resolved (its interval excludes zero)."""
    if curve.slope is None:
        return "no pairs of runs: no slope"
    if not curve.resolved:
        if curve.model_slope is None or not curve.slope.bounded:
            return f"{curve.slope_text()}: not compared"
        bound = max(abs(curve.slope.low), abs(curve.slope.high))
        if abs(curve.model_slope) > bound:
            # what is resolved is an upper bound, and the model lies beyond it
            return (f"{curve.slope_text()}, where the model predicts {curve.model_slope:+.3g} %/{curve.unit}: "
                    f"the program hides the delay")
        return (f"{curve.slope_text()}; the model's {curve.model_slope:+.3g} %/{curve.unit} lies inside "
                f"that bound: too noisy to tell")
    if curve.model_slope is None:
        return "no profile: no model to compare"
    top = curve.points[-1]
    model_top = top.model if top.model is not None else 1 + curve.model_slope * top.value / 100
    if not top.bounded:
        # the largest setting's own pairs are too few for an interval; the slope, from the pairs
        # of every setting, is resolved: it alone tells
        return _verdict_from_slope(curve, note=f"; at the largest setting alone, {top.interval_text()[1:-1]}")
    measured_visible = not (top.low <= 1.0 <= top.high)
    model_visible = abs(model_top - 1) >= MIN_EFFECT
    if not measured_visible:
        if not model_visible:
            return "neither measurement nor model shows an effect"
        if top.low <= model_top <= top.high:
            return (f"too noisy to tell: the model's {model_top:.2f}x lies inside the "
                    f"95 % interval {top.interval_text()} at the largest setting")
        return (f"the model predicts {model_top:.2f}x at the largest setting, the measurement "
                f"shows no significant change: the program hides the delay")
    return _verdict_from_slope(curve, top.low <= model_top <= top.high)


def _verdict_from_slope(curve, model_inside_top=False, note=""):
    """The measured slope (resolved) against the model's; model_inside_top: the model's
    slowdown at the largest setting lies inside that setting's interval."""
    if curve.model_slope <= 0:
        return "the model predicts no effect but the runtime moved" + note
    ratio = curve.sensitivity / curve.model_slope
    if 1 / AGREEMENT <= ratio <= AGREEMENT:
        return (f"model agrees (measured/model slope = {ratio:.2f}, within the tolerance "
                f"{1 / AGREEMENT:.2f}..{AGREEMENT:g}){note}")
    if model_inside_top:
        return (f"consistent within the noise, though the slopes differ "
                f"(measured/model = {ratio:.2f})")
    if ratio > AGREEMENT:
        return (f"measured {ratio:.1f}x the model: delays add up along the critical path "
                f"more than the busiest rank's count says (waiting ranks pass them on){note}")
    return (f"measured {ratio:.2f}x the model: the program overlaps or hides part of "
            f"the delay (the count overstates the critical path){note}")


def analyse_dir(results_dir):
    facts, runs = load_runs(results_dir)
    curves, baselines, problems, notes = analyse(facts, runs)
    return Analysis(facts, runs, curves, baselines, problems, notes)
