"""`loggp calibrate`: proves each knob does what it says, to a stated precision.

First the machine's noise: one probe run measures zero knobs against zero knobs. Then, for
every knob, probe runs under `loggp run` measure its sweep side by side: the probe switches
libloggp's knobs between sets in interleaved rounds, and each round's reading of a setting
is its difference to the ARMED baseline of the same round (every knob at its smallest step),
so the machine's drifts fall on both sides and the armed layer's own cost per message
cancels; that cost itself is read as armed minus zero knobs. Runs repeat until every
reading's 95 % interval (order statistics of the per-round differences) is settled or the
time budget is spent, and each reading gets a verdict: met (its interval inside the goal),
missed (outside it) or unresolved (neither). Orchestration (`calibrate`) and judging
(`judge`) are separate so that they can be tested on synthetic probe results.

What is read, per round (see experiments/README.md for the probe's methods):
  o_s, o_r   send and receive overhead at the small sizes
  g          gap at the small sizes
  g_excess   g - max(o_s, o_r): in LogP a burst cannot go faster than its overhead, so
             the o knob raises g itself; its cross-talk on the gap is judged on g_excess
  L          T - o_s - o_r at the small sizes
  G          slope of g(m) against m for m >= 8 KiB (ns/B), relative to the baseline
  G_T        the same slope taken from T(m): the transfer time a message sees
"""
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from loggp.experiments import fit as fitmod
from loggp.experiments.calibration_output import (advice, closing_sentence, panel_contents,  # noqa: F401
                                                   plot_calibration, probe_rows, report_text, rows_to_csv,
                                                   verdicts_text, write_outputs)
from loggp.experiments import precision as pr
from loggp.experiments import probe as probemod
from loggp.experiments import target_calibration
import loggp.knobs as knob_values
from loggp.knobs import progress
from loggp.shim import machine_load
from loggp.shim.patterns_run import detours_text, host_detours
from loggp.knobs import grammar
from loggp.knobs.command import EXIT_FAILED, EXIT_MISSED, EXIT_OK, Command, CommandError, Parser
from loggp.knobs.programs import MissingProgram
from loggp.knobs.vocabulary import ARMED_STEP_NS, VOCABULARY

KNOBS = ("o", "g", "L", "G")
# The exit status `loggp main` shares: the run completed, but a reading missed its goal.
MISSED_GOAL = EXIT_MISSED
DEFAULT_SWEEPS = {
    "o": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "g": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "L": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "G": [0, 0.1, 0.2, 0.5, 1, 2, 5],
}
QUICK_SWEEPS = {"o": [0, 1, 10], "g": [0, 1, 10], "L": [0, 1, 10], "G": [0, 0.5, 2]}
UNITS = {"o": "us", "g": "us", "L": "us", "G": "ns/B"}
CAL_SIZES = [8, 64, 512, 4096, 16384, 65536]
# G is read where every size crosses one protocol: above shm's 4 KiB eager limit, where L
# costs every flight of the rendezvous (docs/protocols.md), so L does not bend the slope.
BULK_MIN_BYTES = 8192
MAX_SWEEP_VALUES = 15  # loggp-probe takes 16 knob sets: the armed frame, zero knobs and 14 nonzero values
# The knob's own measures (expected to rise by the set value) and the parameters that
# must not move.
PRIMARY = {"o": ("o_s", "o_r"), "g": ("g",), "L": ("L",), "G": ("G", "G_T")}
CROSSTALK = {"o": ("g_excess", "L", "G"), "g": ("o_s", "o_r", "L", "G"),
             "L": ("o_s", "o_r", "g", "G"), "G": ("o_s", "o_r", "g", "L")}
PER_BYTE = ("G", "G_T")


class CalibrationError(ValueError):
    """Bad input or a failed run, reported without a traceback."""


# ------------------------------------------------------------------ extraction

def _by_size(run):
    fitmod.check_probe(run)
    sizes = sorted(run["sizes"], key=lambda e: e["bytes"])
    m = np.array([e["bytes"] for e in sizes], dtype=float)
    med = {k: np.array([e[k]["median"] for e in sizes], dtype=float) for k in ("T_us", "o_s_us", "o_r_us", "g_us")}
    return m, med


def per_size(run):
    """Sizes and every parameter of one probe run, per size."""
    m, med = _by_size(run)
    o_s, o_r, g, t = med["o_s_us"], med["o_r_us"], med["g_us"], med["T_us"]
    return m, {"o_s": o_s, "o_r": o_r, "g": g, "g_excess": g - np.maximum(o_s, o_r), "L": t - o_s - o_r, "T": t}


def _small(m):
    """Sizes below the bulk range: o, g and L are read there, as a median over sizes so
    that one size hit by a burst of machine noise cannot decide the value."""
    keep = m < BULK_MIN_BYTES
    return keep if keep.any() else m == m.min()


def point_parameters(run):
    """Parameters of one probe run: medians over its small sizes."""
    m, p = per_size(run)
    small = _small(m)
    out = {k: float(np.median(p[k][small])) for k in ("o_s", "o_r", "g", "g_excess", "L")}
    out["sizes"] = m[small].astype(int).tolist()
    return out


def _bulk_slope(m, y):
    keep = m >= BULK_MIN_BYTES
    if keep.sum() < 2:
        raise CalibrationError(f"need at least two probed sizes >= {BULK_MIN_BYTES} B to measure G, "
                               f"got {m[keep].astype(int).tolist()}")
    return float(np.polyfit(m[keep] - 1, y[keep], 1)[0]) * 1000.0  # us/B -> ns/B


def spacing_residual(increase, per_byte_us, natural_us):
    """What is left of a stream interval's increase once the (m-1)G a set G owes is
    accounted for as LogP's minimum spacing: the stream runs at max(natural,
    g_machine + (m-1)G) with g_machine between 0 and the natural interval, so any
    increase from (m-1)G - natural to (m-1)G (never below 0) is exactly G's; the
    residual is the distance from that range."""
    low = np.maximum(per_byte_us - np.maximum(natural_us, 0.0), 0.0)
    return np.where(increase < low, increase - low, np.maximum(increase - per_byte_us, 0.0))


def increases(run, reference, G_set=0.0):
    """Measured increase of every parameter of `run` over `reference` (same sizes), and
    the run's absolute values. LogGP expects g(m) and T(m) to grow by (m-1)G, so with a
    set G that share is taken out of g, g_excess and L before they count as cross-talk."""
    m, p = per_size(run)
    m0, p0 = per_size(reference)
    if not np.array_equal(m, m0):
        raise CalibrationError(f"probe sizes differ from the reference run: {m.astype(int).tolist()} vs "
                               f"{m0.astype(int).tolist()}")
    small = _small(m)
    per_byte_us = (m - 1) * G_set / 1000.0
    out, absolute = {}, {}
    for k in ("o_s", "o_r", "g", "g_excess", "L"):
        d = p[k] - p0[k]
        if k == "g":
            d = spacing_residual(d, per_byte_us, p0[k])
        elif k in ("g_excess", "L"):
            d = d - per_byte_us
        out[k] = float(np.median(d[small]))
        absolute[k] = float(np.median(p[k][small]))
    out["G"] = _bulk_slope(m, p["g"] - p0["g"])
    out["G_T"] = _bulk_slope(m, p["T"] - p0["T"])
    absolute["G"] = _bulk_slope(m, p["g"])
    absolute["G_T"] = _bulk_slope(m, p["T"])
    return out, absolute


QUANTITIES = ("T_us", "o_s_us", "o_r_us", "g_us")
PARAMS = ("o_s", "o_r", "g", "g_excess", "L", "G", "G_T")


def median_run(runs):
    """Element-wise median of several probe results of the same sizes: a run disturbed as
    a whole by other work on the machine is outvoted by the others."""
    if len(runs) == 1:
        return runs[0]
    sizes = [sorted(r["sizes"], key=lambda e: e["bytes"]) for r in runs]
    ref_bytes = [e["bytes"] for e in sizes[0]]
    for s in sizes[1:]:
        if [e["bytes"] for e in s] != ref_bytes:
            raise CalibrationError("cannot combine probe runs of different sizes")
    combined = dict(runs[0])
    combined["sizes"] = []
    for i, b in enumerate(ref_bytes):
        entry = {"bytes": b, "refined": False, "combined_runs": len(runs)}
        for k in QUANTITIES:
            vals = [s[i][k]["median"] for s in sizes]
            entry[k] = {"median": float(np.median(vals)), "runs": vals}
        combined["sizes"].append(entry)
    return combined


def split_rounds(result):
    """One probe result per interleaved round of a --knob-set run (each quantity's round
    median); a result without per-round medians (one round) is its own single round."""
    sizes = sorted(result["sizes"], key=lambda e: e["bytes"])
    counts = [len(e[q].get("rounds_us") or ()) for e in sizes for q in QUANTITIES]
    if not counts or min(counts) < 2:
        return [result]
    common = {k: v for k, v in result.items() if k != "sizes"}
    return [{**common, "sizes": [{"bytes": e["bytes"], **{q: {"median": e[q]["rounds_us"][r]} for q in QUANTITIES}}
                                 for e in sizes]}
            for r in range(min(counts))]


# ------------------------------------------------------------------ what one run reads

# The armed baseline (vocabulary.ARMED_STEP_NS), in this command's units (UNITS: us, G ns/B).
# The layer then takes its armed path on both sides of every difference, so its own cost per
# message cancels instead of landing on the knob.
ARMED = {k.name: ARMED_STEP_NS[k.unit] / (1.0 if k.per_byte else 1000.0) for k in VOCABULARY}
ZERO = {k: 0.0 for k in ARMED}


def armed_step(knob):
    return ARMED["o_s" if knob == "o" else knob]


def armed_settings(knob, value):
    """The armed set with one knob (o: o_s and o_r) at `value`."""
    settings = dict(ARMED)
    for name in (("o_s", "o_r") if knob == "o" else (knob,)):
        settings[name] = float(value)
    return settings


def sweep_points(values):
    """The settings judged against the armed baseline: a sweep's nonzero values (its 0 is
    the zero-knob set every run measures anyway)."""
    return sorted({float(v) for v in values if v != 0})


def sweep_sets(knob, values):
    """One run's knob sets: the armed baseline (the frame every reading is taken against),
    zero knobs (for the armed layer's own cost), then each nonzero value armed."""
    return [dict(ARMED), dict(ZERO)] + [armed_settings(knob, v) for v in sweep_points(values)]


def _round_pairs(results):
    rounds = [split_rounds(r) for r in results]
    n = min(len(r) for r in rounds)
    return [[r[i] for r in rounds] for i in range(n)]


def noise_readings(results):
    """Per round, the second zero-knob set minus the first: the machine's own run-to-run
    difference, nothing being set."""
    out = {p: [] for p in PARAMS}
    for first, second in _round_pairs(results[:2]):
        moved, _ = increases(second, first)
        for p in PARAMS:
            out[p].append(moved[p])
    return out


def run_readings(knob, results, values):
    """One run of sweep_sets(knob, values): per round, the armed layer's cost (armed minus
    zero knobs) of every parameter, and every setting's increase over the armed baseline."""
    points = sweep_points(values)
    if len(results) != 2 + len(points):
        raise CalibrationError(f"a {knob} run returned {len(results)} knob sets for {2 + len(points)}")
    cost = {p: [] for p in PARAMS}
    read = {v: {p: [] for p in PRIMARY[knob] + CROSSTALK[knob]} for v in points}
    for rnd in _round_pairs(results):
        armed, zero, settings = rnd[0], rnd[1], rnd[2:]
        armed_cost, _ = increases(armed, zero)
        for p in PARAMS:
            cost[p].append(armed_cost[p])
        for v, run in zip(points, settings):
            delta = v - armed_step(knob)
            inc, _ = increases(run, armed, G_set=delta if knob == "G" else 0.0)
            for p in read[v]:
                read[v][p].append(inc[p])
    return cost, read


class Collected:
    """Everything measured so far, pooled over runs: per-round differences."""
    def __init__(self, sweeps):
        self.sweeps = sweeps
        self.noise = {p: [] for p in PARAMS}
        self.armed_cost = {p: [] for p in PARAMS}
        self.points = {k: {v: {p: [] for p in PRIMARY[k] + CROSSTALK[k]} for v in sweep_points(vals)}
                       for k, vals in sweeps.items()}
        self.runs = {k: 0 for k in sweeps}
        self.armed_results, self.zero_results = [], []

    def add_noise(self, results):
        for p, values in noise_readings(results).items():
            self.noise[p] += values
        self.zero_results += results[:2]

    def add_run(self, knob, results):
        cost, read = run_readings(knob, results, self.sweeps[knob])
        for p, values in cost.items():
            self.armed_cost[p] += values
        for v, params in read.items():
            for p, values in params.items():
                self.points[knob][v][p] += values
        self.armed_results.append(results[0])
        self.zero_results.append(results[1])
        self.runs[knob] += 1


# ------------------------------------------------------------------ judging

def tolerance(param, knob, set_value, bulk_bytes, goal=pr.KNOB_PRECISION):
    """How far `param` may read from its expectation when `knob` is set to `set_value` (us,
    ns/B for G): the precision around the set value; for a per-byte reading, the same
    time spread over the largest bulk message (G's own reading: the relative part of G,
    with that floor); the G knob adds only (m-1)G to small messages, so the time
    readings it must not move get the absolute part alone."""
    if knob == "G":
        time_us = goal.absolute_ns / 1000.0
    else:
        time_us = goal.allowed(set_value, unit_ns=1000.0)
    if param in PER_BYTE:
        floor = 1000.0 * time_us / max(bulk_bytes - 1, 1)
        return max(goal.relative * abs(set_value), floor) if knob == "G" else floor
    return time_us


def machine_gap(set_value, increase, reference_g):
    """The machine's own gap in LogP's g_total = g_machine + set, read from the largest
    setting of a g sweep: there the stream runs at g_machine + set, so g_machine is what
    is left after the set value; it lies between 0 and the stream's natural interval."""
    return min(max(increase + reference_g - set_value, 0.0), max(reference_g, 0.0))


def expected_increase(knob, param, set_value, reference_g, g_machine):
    """What LogGP expects a knob's own measure to rise by over the baseline (set_value:
    the knob's increase over it). o, L and G add their value. g is LogP's minimum spacing:
    the probe's stream (natural interval reference_g) runs at max(reference_g, g_machine + set)."""
    if knob == "g" and param == "g":
        return max(reference_g, g_machine + set_value) - reference_g
    return set_value


worst = pr.worst


def spread_summary(values, unit):
    """The machine's noise on one parameter: the median |difference| between two zero-knob
    rounds, and the interval of the median difference."""
    if not values:
        return {"unit": unit, "median_abs": None, "interval": None, "rounds": 0}
    return {"unit": unit, "median_abs": float(np.median(np.abs(values))),
            "interval": pr.median_interval(values).as_dict(), "rounds": len(values)}


# Readings to 1 ns (us) and to 0.1 ps per byte (ns/B).
PLACES = {"us": 3, "ns/B": 4}


def _param_unit(param):
    return "ns/B" if param in PER_BYTE else "us"


def judge(collected, goal=pr.KNOB_PRECISION, bulk_bytes=max(CAL_SIZES), budget_ran_out=False):
    """The calibration summary from what was collected: every reading's interval against its
    goal, a verdict per reading, per point and per knob, and the knobs not yet settled.
    Returns (summary, rows, unsettled knobs)."""
    armed_reference = point_parameters(median_run(collected.armed_results)) if collected.armed_results else None
    reference = point_parameters(median_run(collected.zero_results)) if collected.zero_results else None
    summary = {"schema": "loggp-calibration/2",
               "goal": {"precision": goal.text(), "relative": goal.relative, "absolute_ns": goal.absolute_ns,
                        "bulk_min_bytes": BULK_MIN_BYTES,
                        "text": f"each reading's 95 % interval within its expectation +- {goal.text()} of the set "
                                f"value (G: per byte, floor {goal.absolute_ns:g} ns over the largest message); "
                                "cross-talk within the same"},
               "baseline_method": "armed: every knob at its smallest step (o, g, L 1 ns; G 0.001 ns/B) on both "
                                  "sides of each difference, so the layer's own cost cancels",
               "noise": {p: spread_summary(collected.noise[p], _param_unit(p)) for p in PARAMS},
               "armed_cost": {p: spread_summary(collected.armed_cost[p], _param_unit(p)) for p in PARAMS},
               "reference": reference, "armed_reference": armed_reference,
               "budget_ran_out": budget_ran_out, "knobs": {}}
    for p, s in summary["armed_cost"].items():
        s["median"] = float(np.median(collected.armed_cost[p])) if collected.armed_cost[p] else None
    rows, unsettled = [], []
    reference_g = armed_reference["g"] if armed_reference else 0.0
    for knob, points in collected.points.items():
        values = sorted(points)
        deltas = {v: v - armed_step(knob) for v in values}
        g_machine = 0.0
        if knob == "g" and values and points[values[-1]]["g"]:
            g_machine = machine_gap(deltas[values[-1]], float(np.median(points[values[-1]]["g"])), reference_g)
        series, settled = {}, True
        for param in PRIMARY[knob] + CROSSTALK[knob]:
            role = "primary" if param in PRIMARY[knob] else "crosstalk"
            s = {"role": role, "unit": _param_unit(param), "set": values, "expected": [], "tolerance": [],
                 "measured": [], "low": [], "high": [], "pairs": [], "verdicts": [], "reasons": []}
            for v in values:
                expected = (expected_increase(knob, param, deltas[v], reference_g, g_machine)
                            if role == "primary" else 0.0)
                target = pr.Goal(expected, tolerance(param, knob, v, bulk_bytes, goal))
                reading = pr.Reading(target, list(points[v][param]))
                interval = reading.interval()
                verdict = pr.verdict(interval, target)
                out_of_budget = budget_ran_out and not reading.settled()
                reason = pr.reason(interval, target, s["unit"], reached=not out_of_budget, places=PLACES[s["unit"]])
                settled = settled and reading.settled()
                d = interval.as_dict()
                for key, value in (("expected", expected), ("tolerance", target.tolerance), ("measured", d["estimate"]),
                                   ("low", d["low"]), ("high", d["high"]), ("pairs", interval.n),
                                   ("verdicts", verdict), ("reasons", reason)):
                    s[key].append(value)
                rows.append({"knob": knob, "set_value": v, "unit": UNITS[knob], "parameter": param, "role": role,
                             "param_unit": s["unit"], "expected_increase": expected, "tolerance": target.tolerance,
                             "increase": d["estimate"], "low": d["low"], "high": d["high"],
                             "precision_reached": d["half_width"], "pairs": interval.n, "verdict": verdict,
                             "reason": reason})
            series[param] = s
        if not settled:
            unsettled.append(knob)
        point_verdicts = [worst(series[p]["verdicts"][i] for p in series) for i in range(len(values))]
        reasons = [f"{s['verdicts'][i].upper()}: {knob} = {v:g} {UNITS[knob]}: "
                   f"{p}{' (cross-talk)' if s['role'] == 'crosstalk' else ''} {s['reasons'][i]}; "
                   + advice(knob, p, s["role"], s["verdicts"][i],
                            s["measured"][i] is not None and s["measured"][i] > s["expected"][i])
                   for i, v in enumerate(values) for p, s in series.items() if s["verdicts"][i] != pr.MET]
        summary["knobs"][knob] = {
            "unit": UNITS[knob], "values": values, "runs": collected.runs[knob],
            "verdict": worst(point_verdicts) if values else pr.UNRESOLVED,
            "points": [{"set": v, "verdict": pv} for v, pv in zip(values, point_verdicts)],
            "slope": knob_slope(knob, points, deltas),
            "measures": {p: s for p, s in series.items() if s["role"] == "primary"},
            "crosstalk": {p: s for p, s in series.items() if s["role"] == "crosstalk"},
            "expectation": expectation_curve(knob, values, reference_g, g_machine),
            "reasons": reasons}
    summary["verdict"] = worst(k["verdict"] for k in summary["knobs"].values())
    return summary, rows, unsettled


def knob_slope(knob, points, deltas):
    """Theil-Sen slope of the knob's own first reading against its increase over the
    armed baseline, over every round (None with fewer than two settings)."""
    param = PRIMARY[knob][0]
    xs = [deltas[v] for v in points for _ in points[v][param]]
    ys = [y for v in points for y in points[v][param]]
    if len(set(xs)) < 2:
        return None
    return {"parameter": param, **pr.slope_interval(xs, ys).as_dict()}


def expectation_curve(knob, values, reference_g, g_machine):
    """The expected reading of the knob's own measure over its sweep, for the figure: the
    set value less the armed step, except g (LogP's minimum spacing bends it)."""
    if not values:
        return {"x": [], "y": []}
    xs = [float(x) for x in np.linspace(0.0, max(values), 101)]
    step = armed_step(knob)
    return {"x": xs, "y": [expected_increase(knob, PRIMARY[knob][0], x - step, reference_g, g_machine) for x in xs]}


# ------------------------------------------------------------------ orchestration

def calibrate(sweeps, runner, probe_args, baseline_args=None, goal=pr.KNOB_PRECISION, budget_s=600.0,
              clock=time.monotonic, log=print):
    """Measures the machine's noise (zero knobs against zero knobs), then each knob's sweep
    against the armed baseline in interleaved rounds, run after run, until every reading is
    settled (met or missed, or its interval as narrow as its tolerance) or the budget
    (seconds of `clock`) is spent; every knob runs once, and no repeat starts after that. runner(knob_sets, probe_args)
    -> one probe result per set, measured side by side in one run. Returns (summary, rows,
    label_runs), label_runs listing every raw probe result."""
    start = clock()
    collected = Collected(sweeps)
    label_runs = []
    log("machine noise: zero knobs against zero knobs, side by side in one run")
    noise = runner([dict(ZERO), dict(ZERO)], probe_args)
    collected.add_noise(noise)
    log(noise_line(collected.noise))
    label_runs += [("noise-zero", 0.0, noise[0]), ("noise-zero", 0.0, noise[1])]
    baseline = None
    if baseline_args is not None:
        log("baseline run over the full size range (all knobs 0), for T0 + m/B")
        baseline = runner([dict(ZERO)], baseline_args)[0]
        label_runs.append(("baseline", 0.0, baseline))
    pending, out_of_budget, first_pass = list(sweeps), False, True
    while pending and not out_of_budget:
        for knob in pending:
            # every knob runs once; the budget governs the repeats
            if not first_pass and clock() - start >= budget_s:
                out_of_budget = True
                break
            values = sweep_points(sweeps[knob])
            log(f"  {knob}: armed, zero, {', '.join(f'{v:g}' for v in values)} {UNITS[knob]}, side by side "
                f"(run {collected.runs[knob] + 1})")
            results = runner(sweep_sets(knob, sweeps[knob]), probe_args)
            collected.add_run(knob, results)
            label_runs += [(f"{knob}-armed", 0.0, results[0]), (f"{knob}-zero", 0.0, results[1])]
            label_runs += [(knob, v, r) for v, r in zip(values, results[2:])]
        first_pass = False
        _, _, pending = judge(collected, goal, _bulk_bytes(probe_args))
        out_of_budget = out_of_budget or (bool(pending) and clock() - start >= budget_s)
    summary, rows, unsettled = judge(collected, goal, _bulk_bytes(probe_args), budget_ran_out=out_of_budget)
    summary["budget_s"] = budget_s
    summary["unsettled"] = unsettled
    if baseline is not None:
        bm, bt = fitmod.series(baseline)
        summary["baseline"] = {"regimes": [r.summary() for r in fitmod.segment_fit(bm, bt)]}
    summary["method"] = ("side by side: each knob's sweep in one probe run, its knob sets interleaved in rounds; "
                         "each round's reading is the setting minus the armed baseline of the same round; runs "
                         "repeat until every reading's 95 % interval is settled or the budget is spent")
    return summary, rows, label_runs


def noise_line(noise):
    """The zero-knob run-to-run differences, one line."""
    parts = []
    for p in ("o_s", "o_r", "g", "L", "G"):
        if noise[p]:
            typical = float(np.median(np.abs(noise[p])))
            parts.append(f"{p} {typical:.3g} ns/B" if p in PER_BYTE else f"{p} {1000 * typical:.0f} ns")
    return ("machine noise: two zero-knob sets of one round differ by a median of " + ", ".join(parts)
            + f" ({len(noise['L'])} rounds)")


def _bulk_bytes(probe_args):
    args = list(probe_args)
    if "--sizes" in args:
        return max(int(s) for s in args[args.index("--sizes") + 1].split(","))
    return max(CAL_SIZES)


# ------------------------------------------------------------------ command line

QUICK_BUDGET = "2min"
DEFAULT_BUDGET = "10min"


def parser():
    p = Parser(prog="loggp calibrate", example="loggp calibrate --quick --knobs L --sweep L=0,1us,10us",
               description="Measure this machine's noise, then sweep each knob, running loggp-probe under "
                            "`loggp run`, and compare each reading (against the armed baseline: every knob at "
                            "its smallest step) with what it should be, repeating until every reading's 95 % "
                            "interval reaches --precision or --budget is spent. Each reading is met, missed or "
                            "unresolved. Exit status (as `loggp main`'s): 0 nothing missed its goal, 3 the run "
                            "completed but a reading missed its accuracy goal (verdicts.txt says which and why), "
                            "1 a failed run, 2 bad usage.")
    p.add_argument("--quick", action="store_true",
                   help=f"short sweep: o, g, L in {{0, 1, 10}} us, G in {{0, 0.5, 2}} ns/B; budget {QUICK_BUDGET}")
    p.add_argument("--knobs", default=",".join(KNOBS), help="comma-separated subset of o,g,L,G (default all)")
    p.add_argument("--sweep", action="append", default=[], metavar="KNOB=V1,V2,...",
                   help="values of one knob with units, e.g. L=0,1us,10us or G=0,0.5ns/B, overriding the "
                        "default or --quick sweep (repeatable; default: none)")
    p.add_argument("--precision", default=pr.KNOB_PRECISION.text().removeprefix("max(").removesuffix(")")
                   .replace(" ", ""), metavar="P",
                   help="how close each reading must be to its expectation, and how narrow its 95 %% interval "
                        "must get: a percentage of the set value, a time, or both (the larger applies), e.g. "
                        "1%%, 20ns or 1%%,20ns (default 1%%,20ns)")
    p.add_argument("--budget", metavar="T",
                   help=f"time to repeat runs in, with its unit (s, min, h), e.g. 90s or 5min; every knob runs "
                        f"once whatever the budget, and readings not settled by its end are unresolved (default "
                        f"{DEFAULT_BUDGET}; {QUICK_BUDGET} with --quick)")
    p.add_argument("--out", default="results/calibrate", metavar="DIR", help="results folder")
    p.add_argument("--sizes", default=",".join(grammar.format_size(s) for s in CAL_SIZES), metavar="SIZES",
                   help="probe sizes, e.g. 8,64K; at least two >= 8K for G")
    p.add_argument("--time-limit", type=grammar.duration(0.0, 3600.0, low_open=True), default="1.5s",
                   metavar="T", help="probe time budget per knob set and run, e.g. 1.5s")
    p.add_argument("--rounds", type=int, default=8,
                   help="interleaved rounds over a sweep's knob sets within one run; each round is one paired "
                        "reading (default 8)")
    p.add_argument("--no-baseline", action="store_true", help="skip the full-range baseline run for T0 + m/B")
    p.add_argument("--engine", choices=("auto", "libfabric", "pmpi"), help="passed to `loggp run` (default: its own, auto)")
    p.add_argument("--target", metavar="NAME|FILE",
                   help="instead of the sweeps: emulate a target network (`loggp targets`) and show target vs this "
                        "host vs measured under emulation, met / missed / unresolved per parameter (docs/targets.md; "
                        "default: none)")
    p.add_argument("--host-signature", metavar="FILE",
                   help="with --target: this host's own `loggp probe --json` file (default: measured at once)")
    p.add_argument("--clip", action="store_true",
                   help="with --target: run a parameter the target has faster than this host at the host's value")
    return p


def sweep_value(knob, text, item):
    """One --sweep value in the sweep's own unit (us; ns/B for G), read by the one knob
    parser: a unit is required ("10us", "0.5ns/B"), only 0 goes without."""
    text = text.strip()
    try:
        ns = knob_values.parse({knob: text})[knob]
    except knob_values.KnobError as err:
        raise CalibrationError(f"--sweep '{item}': {err}") from None
    return ns if knob in PER_BYTE else ns / 1000.0


def parse_sweeps(args):
    knobs = [k.strip() for k in args.knobs.split(",") if k.strip()]
    for k in knobs:
        if k not in KNOBS:
            raise CalibrationError(f"--knobs: unknown knob '{k}' (expected some of {','.join(KNOBS)})")
    if not knobs:
        raise CalibrationError("--knobs: no knob given")
    base = QUICK_SWEEPS if args.quick else DEFAULT_SWEEPS
    sweeps = {k: list(base[k]) for k in knobs}
    for item in args.sweep:
        knob, sep, values = item.partition("=")
        if not sep or knob not in KNOBS:
            raise CalibrationError(f"--sweep '{item}': expected KNOB=V1,V2,... with KNOB one of {','.join(KNOBS)}")
        if knob not in sweeps:
            raise CalibrationError(f"--sweep '{item}': knob '{knob}' is not in --knobs {args.knobs}")
        vals = [sweep_value(knob, v, item) for v in values.split(",")]
        if not vals or any(not math.isfinite(v) or v < 0 for v in vals):
            raise CalibrationError(f"--sweep '{item}': values must be finite and >= 0")
        if len(set(vals)) < 2:
            raise CalibrationError(f"--sweep '{item}': need at least two distinct values for a slope")
        if len(vals) > MAX_SWEEP_VALUES or len(sweep_points(vals)) > MAX_SWEEP_VALUES - 1:
            raise CalibrationError(f"--sweep '{item}': at most {MAX_SWEEP_VALUES} values, {MAX_SWEEP_VALUES - 1} "
                                   f"of them nonzero (one probe run measures them all, beside the armed and the "
                                   f"zero-knob sets)")
        sweeps[knob] = vals
    return sweeps


def parse_sizes(text):
    try:
        sizes = grammar.parse_sizes(text)
    except grammar.GrammarError as err:
        raise CalibrationError(f"--sizes {err}") from None
    if any(s < 1 for s in sizes) or len(set(sizes)) != len(sizes):
        raise CalibrationError(f"--sizes '{text}': sizes must be distinct and >= 1")
    if sum(s >= BULK_MIN_BYTES for s in sizes) < 2:
        raise CalibrationError(f"--sizes '{text}': need at least two sizes >= {BULK_MIN_BYTES} to measure G")
    return sorted(sizes)


def default_runner(run_args, rounds=8, time_limit=1.5):
    """Several knob sets: one probe run switching between them; one set: an ordinary run.
    A run may take several times its measurement budget (minimum sample counts, waits
    for long gaps and latencies) before it counts as hung."""
    def runner(knob_sets, probe_args):
        timeout = 180 + 5 * time_limit * len(knob_sets)
        if len(knob_sets) == 1:
            return [probemod.run_probe(probe_args, knob_sets[0], run_args=run_args, timeout=timeout)]
        return probemod.run_probe_sets(probe_args, knob_sets, run_args=run_args, rounds=rounds, timeout=timeout)
    return runner


class CalibrateCommand(Command):
    name = "calibrate"
    # A failed run exits 1 (a bad argument, found before any run, exits 2).
    errors = tuple((kind, EXIT_FAILED) for kind in (CalibrationError, probemod.ProbeError, fitmod.FitError,
                                                    MissingProgram))

    def __init__(self, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
        # the apparatus, the clock and the machine's load and detours, replaceable in tests
        self.runner, self.clock, self.load_watch, self.detours = runner, clock, load_watch, detours

    def parser(self):
        return parser()

    def check(self, args):
        if args.target is None and (args.host_signature or args.clip):
            raise CalibrationError("--host-signature and --clip go with --target")
        if args.target is not None:
            sweeping = [flag for flag, given in (("--quick", args.quick), ("--sweep", args.sweep),
                                                 ("--knobs", args.knobs != ",".join(KNOBS)),
                                                 ("--no-baseline", args.no_baseline), ("--budget", args.budget),
                                                 ("--precision", args.precision != parser().get_default("precision")))
                        if given]
            if sweeping:
                raise CalibrationError(f"--target checks a target network instead of the sweeps: drop {sweeping[0]}")
        args.sweeps = parse_sweeps(args)
        args.size_list = parse_sizes(args.sizes)
        if not 1 <= args.rounds <= 100:
            raise CalibrationError(f"--rounds {args.rounds}: must be in 1..100")
        try:
            args.goal = pr.parse_precision(args.precision)
            args.budget_s = pr.parse_budget(args.budget or (QUICK_BUDGET if args.quick else DEFAULT_BUDGET))
        except ValueError as err:
            raise CalibrationError(f"--{err}") from None
        out_dir = Path(args.out)
        if out_dir.exists() and not out_dir.is_dir():
            raise CalibrationError(f"--out '{out_dir}' exists and is not a directory")

    def run(self, args):
        if args.target is not None:
            runner = self.runner or default_runner(["--engine", args.engine] if args.engine else [], args.rounds,
                                                   args.time_limit)
            return target_calibration.execute(args, runner)
        return execute(args, args.sweeps, args.size_list, Path(args.out), self.runner, self.clock, self.load_watch,
                       self.detours)


def main(argv=None, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
    return CalibrateCommand(runner, clock, load_watch, detours).main(argv)


def execute(args, sweeps, sizes, out_dir, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
    run_args = ["--engine", args.engine] if args.engine else []
    runner = runner or default_runner(run_args, args.rounds, args.time_limit)
    # Each round's medians need not be tight: the interval over rounds decides.
    probe_args = ["--sizes", ",".join(map(str, sizes)), "--time-limit", f"{args.time_limit:g}",
                  "--rel-ci", "0.005", "--abs-ci-ns", "10"]
    baseline_args = None if args.no_baseline else ["--time-limit", "3"]
    watch = (load_watch or machine_load.LoadWatch()).start()
    host = detours()
    print(detours_text(host), flush=True)
    started = clock()
    # on a terminal one live line: a step per probe run (the noise run, the baseline, a run per
    # knob; repeats add steps)
    live = progress.LiveLine(1 + (baseline_args is not None) + len(sweeps))
    try:
        summary, rows, label_runs = calibrate(sweeps, progress.counting(runner, live), probe_args, baseline_args,
                                              args.goal, args.budget_s, clock=clock, log=progress.log_to(live))
    finally:
        live.close()
    summary["elapsed_s"] = round(clock() - started, 1)
    summary["probe_args"] = probe_args
    summary["rounds_per_run"] = args.rounds
    watch.end()
    summary["load"] = watch.as_dict()
    summary["load"]["line"] = watch.line()
    summary["detours"] = host
    summary["sentence"] = closing_sentence(summary)
    try:
        write_outputs(out_dir, summary, rows, label_runs)
    except OSError as err:
        raise CommandError(f"cannot write to '{out_dir}': {err}") from None
    print(report_text(summary))
    print(f"wrote {os.path.abspath(out_dir)}/verdicts.txt, calibration.json, calibration.csv, probe_points.csv, "
          f"calibration.png/.svg, probes/ ({summary['elapsed_s']} s)")
    return EXIT_MISSED if summary["verdict"] == pr.MISSED else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
