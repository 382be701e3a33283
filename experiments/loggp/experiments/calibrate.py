"""`loggp calibrate`: proves each knob does what it says.

For every knob, one probe run under `loggp run` measures every value of its sweep side by
side: the probe switches libloggp's knobs between sets (the others at 0) in interleaved
rounds, and each value's increase is taken against a zero set of the same run, so the
machine's slow drifts and run-to-run moods fall on both sides of every difference. The
analysis compares the measured increase of the knob's own parameter with the set increase
(slope, intercept, R^2, largest error) and checks that the other parameters stay put
(cross-talk). Orchestration (`collect`) and analysis (`analyze`) are separate so that the
analysis can be tested on synthetic probe results.

What is measured, per probe run (see experiments/README.md for the probe's methods):
  o_s, o_r   send and receive overhead at the smallest size
  g          gap at the smallest size
  g_excess   g - max(o_s, o_r): in LogP a burst cannot go faster than its overhead, so
             the o knob raises g itself; its cross-talk on the gap is judged on g_excess
  L          T - o_s - o_r at the smallest size
  G          slope of g(m) against m for m >= 8 KiB (ns/B), relative to the reference
  G_T        the same slope taken from T(m): the transfer time a message sees
"""
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from loggp.experiments import fit as fitmod
from loggp.experiments.calibration_output import (crosstalk_reason, miss_reason, panel_contents,  # noqa: F401
                                                   plot_calibration, probe_rows, report_text, rows_to_csv,
                                                   write_outputs)
from loggp.experiments import probe as probemod
import loggp.knobs as knob_values
from loggp.knobs.command import Command, CommandError, Parser
from loggp.knobs.programs import MissingProgram

KNOBS = ("o", "g", "L", "G")
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
MAX_SWEEP_VALUES = 15  # loggp-probe takes 16 knob sets: the values and the frame
REL_GOAL = 0.02       # |measured - set| <= max(2 %, 100 ns)
ABS_GOAL_US = 0.100
# The knob's own measures (expected to rise by the set value) and the parameters that
# must not move.
PRIMARY = {"o": ("o_s", "o_r"), "g": ("g",), "L": ("L",), "G": ("G", "G_T")}
CROSSTALK = {"o": ("g_excess", "L", "G"), "g": ("o_s", "o_r", "L", "G"),
             "L": ("o_s", "o_r", "g", "G"), "G": ("o_s", "o_r", "g", "L")}
PER_BYTE = ("G", "G_T")


class CalibrationError(ValueError):
    """Bad input or a failed run, reported without a traceback."""


def knob_settings(knob, value):
    """The five knob increments of one sweep point (the `o` knob moves o_s and o_r)."""
    settings = {"o_s": 0.0, "o_r": 0.0, "g": 0.0, "G": 0.0, "L": 0.0}
    if knob == "o":
        settings["o_s"] = settings["o_r"] = float(value)
    else:
        settings[knob] = float(value)
    return settings


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


def paired_difference(value, zero):
    """run - zero for one quantity of one size: when both carry per-round medians (a
    --knob-set run), the median of the differences within each round, since a round's
    sets are measured closest together in time; else the difference of the medians."""
    rounds, zero_rounds = value.get("rounds_us"), zero.get("rounds_us")
    if rounds and zero_rounds and len(rounds) == len(zero_rounds):
        return float(np.median(np.subtract(rounds, zero_rounds)))
    return value["median"] - zero["median"]


def reframe(run, own_zero, reference):
    """`run` moved into the reference's frame: each median becomes reference + (run -
    own_zero), own_zero being the zero set of the same probe run. Increases over the
    reference are then exactly the increases measured side by side within the run."""
    sizes = [sorted(r["sizes"], key=lambda e: e["bytes"]) for r in (run, own_zero, reference)]
    if not ([e["bytes"] for e in sizes[0]] == [e["bytes"] for e in sizes[1]] == [e["bytes"] for e in sizes[2]]):
        raise CalibrationError("cannot compare probe runs of different sizes")
    out = dict(run)
    out["sizes"] = []
    for e, zero, ref in zip(*sizes):
        entry = {"bytes": e["bytes"], "refined": False}
        for k in QUANTITIES:
            entry[k] = {**e[k], "median": ref[k]["median"] + paired_difference(e[k], zero[k]),
                        "measured": e[k]["median"], "own_zero": zero[k]["median"]}
        out["sizes"].append(entry)
    return out


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


# ------------------------------------------------------------------ analysis

def bound_for(param, knob, set_value, bulk_bytes):
    """Allowed |measured - expected| for `param` when `knob` is set to `set_value`.

    Time parameters: max(2 % of the set increase, 100 ns). Per-byte parameters (G): 2 % of
    the set G, with a floor of 100 ns spread over the largest bulk message, so that a
    cross-talk on G is held to the same time bound as the others."""
    if knob == "G":
        time_bound = ABS_GOAL_US  # the G knob adds only (m-1)G to small messages
    else:
        time_bound = max(REL_GOAL * abs(set_value), ABS_GOAL_US)
    if param in PER_BYTE:
        floor = 1000.0 * time_bound / max(bulk_bytes - 1, 1)
        if knob == "G":
            return max(REL_GOAL * abs(set_value), floor)
        return floor
    return time_bound


def machine_gap(set_value, increase, reference_g):
    """The machine's own gap in LogP's g_total = g_machine + set, read from the largest
    setting of a g sweep: there the stream runs at g_machine + set, so g_machine is what
    is left after the set value; it lies between 0 and the stream's natural interval."""
    return min(max(increase + reference_g - set_value, 0.0), max(reference_g, 0.0))


def expected_increase(knob, param, set_value, reference_g, g_machine):
    """What LogGP expects a knob's own measure to rise by. o, L and G add their set
    value. g is LogP's minimum spacing: the probe's stream (natural interval
    reference_g) runs at max(reference_g, g_machine + set)."""
    if knob == "g" and param == "g":
        return max(reference_g, g_machine + set_value) - reference_g
    return set_value


def line_fit(x, y):
    """slope, intercept, r2 of y against x (r2 = 1 when y is exactly constant and fitted)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0:
        return math.nan, math.nan, math.nan
    slope, icpt = np.polyfit(x, y, 1)
    res = y - (slope * x + icpt)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    ss_res = float(np.sum(res ** 2))
    r2 = (1.0 if ss_res <= 1e-24 else 0.0) if ss_tot == 0 else 1.0 - ss_res / ss_tot
    return float(slope), float(icpt), float(r2)


def analyze(reference, runs, baseline=None):
    """The calibration summary.

    reference: probe result with every knob at 0 (the point all increases are measured from);
    runs: {knob: [(set_value, probe_result), ...]};
    baseline: optional full-range probe result at knobs 0 for the T0 + m/B regimes.
    Returns (summary dict, rows), rows being one dict per (knob, value, parameter)."""
    m_ref, _ = _by_size(reference)
    bulk_bytes = int(m_ref.max())
    reference_g = point_parameters(reference)["g"]
    summary = {"schema": "loggp-calibration/1",
               "goal": {"rel": REL_GOAL, "abs_us": ABS_GOAL_US, "bulk_min_bytes": BULK_MIN_BYTES,
                        "text": "|measured - set| <= max(2 %, 100 ns) for o, g, L; <= 2 % for G on "
                                "messages >= 8 KiB; cross-talk within the same bound"},
               "reference": point_parameters(reference), "knobs": {}}
    rows = []
    for knob, points in runs.items():
        if knob not in KNOBS:
            raise CalibrationError(f"unknown knob '{knob}' (expected one of {', '.join(KNOBS)})")
        if not points:
            raise CalibrationError(f"knob '{knob}' has no sweep points")
        points = sorted(points, key=lambda p: p[0])
        set_values = [float(v) for v, _ in points]
        deltas = [increases(run, reference, G_set=v if knob == "G" else 0.0) for v, run in points]
        measures, crosstalk, failures = {}, {}, []
        for param in PRIMARY[knob]:
            measured = [d[0][param] for d in deltas]
            g_machine = machine_gap(set_values[-1], measured[-1], reference_g) if knob == "g" else 0.0
            expected = [expected_increase(knob, param, sv, reference_g, g_machine) for sv in set_values]
            errors = [mv - ev for mv, ev in zip(measured, expected)]
            bounds = [bound_for(param, knob, sv, bulk_bytes) for sv in set_values]
            slope, icpt, r2 = line_fit(set_values, measured)
            ok = [abs(e) <= b for e, b in zip(errors, bounds)]
            measures[param] = {"set": set_values, "measured": measured, "slope": slope, "intercept": icpt,
                               "r2": r2, "max_abs_err": max(abs(e) for e in errors), "bounds": bounds,
                               "expected": expected, "pass": all(ok)}
            for sv, mv, e, b, good in zip(set_values, measured, errors, bounds, ok):
                if not good:
                    failures.append(f"{param} rose by {mv:.4g} for a set {sv:g} {UNITS[knob]} "
                                    f"(error {e:+.4g}, {abs(e) - b:.2g} over its bound {b:.4g}): "
                                    + miss_reason(e, sv))
        for param in CROSSTALK[knob]:
            moved = [d[0][param] for d in deltas]
            bounds = [bound_for(param, knob, sv, bulk_bytes) for sv in set_values]
            ok = [abs(x) <= b for x, b in zip(moved, bounds)]
            worst = max(range(len(moved)), key=lambda i: abs(moved[i]) / bounds[i])
            crosstalk[param] = {"moved": moved, "max_abs": max(abs(x) for x in moved), "bounds": bounds,
                                "worst_ratio_to_bound": abs(moved[worst]) / bounds[worst], "pass": all(ok)}
            for sv, x, b, good in zip(set_values, moved, bounds, ok):
                if not good:
                    unit = "ns/B" if param in PER_BYTE else "us"
                    failures.append(f"{'noise' if sv == 0 else 'cross-talk'}: {param} moved {x:+.3g} {unit} at "
                                    f"{knob} = {sv:g} {UNITS[knob]} ({abs(x) - b:.2g} over its bound {b:.4g}): "
                                    + crosstalk_reason(knob, param, sv))
        for (sv, _), (delta, absolute) in zip(points, deltas):
            for param in PRIMARY[knob] + CROSSTALK[knob]:
                role = "primary" if param in PRIMARY[knob] else "crosstalk"
                expected = (measures[param]["expected"][set_values.index(sv)] if role == "primary" else 0.0)
                error = delta[param] - expected
                b = bound_for(param, knob, sv, bulk_bytes)
                rows.append({"knob": knob, "set_value": sv, "unit": UNITS[knob], "parameter": param, "role": role,
                             "param_unit": "ns/B" if param in PER_BYTE else "us",
                             "measured": absolute[param], "increase": delta[param], "expected_increase": expected,
                             "error": error, "bound": b, "within_bound": abs(error) <= b})
        # The knob's headline numbers pool its own measures except G_T (G is canonically
        # the gap's slope; G_T is checked separately).
        canon = [p for p in PRIMARY[knob] if p != "G_T"]
        xs = [sv for p in canon for sv in measures[p]["set"]]
        ys = [mv for p in canon for mv in measures[p]["measured"]]
        slope, icpt, r2 = line_fit(xs, ys)
        summary["knobs"][knob] = {
            "unit": UNITS[knob], "values": set_values, "slope": slope, "intercept": icpt, "r2": r2,
            "max_abs_err": max(measures[p]["max_abs_err"] for p in canon),
            "measures": measures, "crosstalk": crosstalk,
            "pass": all(x["pass"] for x in measures.values()) and all(x["pass"] for x in crosstalk.values()),
            "failures": failures}
    summary["pass"] = all(k["pass"] for k in summary["knobs"].values())
    if baseline is not None:
        bm, bt = fitmod.series(baseline)
        regimes = fitmod.segment_fit(bm, bt)
        summary["baseline"] = {"regimes": [r.summary() for r in regimes]}
    return summary, rows


# ------------------------------------------------------------------ orchestration

DISTURBED_REL_CI = 0.05


def disturbance(run):
    """How noisy a probe run was: the 75th percentile over sizes and quantities of the
    relative 95 % CI half-width. A run whose ranks had to share one core (other work on the machine)
    shows millisecond stalls and wide intervals; judged on noise, never on the values."""
    rel = []
    for e in run["sizes"]:
        for k in ("T_us", "o_s_us", "o_r_us", "g_us"):
            v = e[k]
            half = v.get("ci95_half", 0.0)
            if half is None or half < 0:  # the probe writes -1 for "too few samples"
                half = math.inf
            rel.append(half / max(abs(v["median"]), 1e-3))
    return float(np.percentile(rel, 75)) if rel else 0.0


def steady_runner(runner, attempts=3, log=print):
    """Repeats a probe run that was disturbed (see `disturbance`; for a run of several
    knob sets, its noisiest set) up to `attempts` times in all and keeps the quietest."""
    def run(knob_sets, probe_args):
        best = None
        for attempt in range(attempts):
            results = runner(knob_sets, probe_args)
            noise = max(disturbance(r) for r in results)
            if best is None or noise < best[0]:
                best = (noise, results)
            if noise <= DISTURBED_REL_CI:
                break
            log(f"    disturbed run (relative CI {100 * noise:.1f} % > {100 * DISTURBED_REL_CI:.0f} % at the 75th percentile), "
                f"{'again' if attempt + 1 < attempts else 'keeping the quietest'}")
        for r in best[1]:
            r.setdefault("calibration", {})["disturbance"] = best[0]
        return best[1]
    return run


def sweep_sets(knob, values):
    """The knob sets of one sweep's run: a zero set that frames the run, then every value
    (a 0 value is a zero set of its own, so the 0 point shows how well the run repeats)."""
    return [knob_settings(knob, 0)] + [knob_settings(knob, v) for v in values]


def collect(sweeps, runner, probe_args, baseline_args, log=print):
    """Runs the baseline and, per knob, one probe run over its whole sweep.

    runner(knob_sets, probe_args) -> one probe result per knob set, measured side by side
    in one run (a single set: an ordinary run); a set maps o_s, o_r, g, G, L to increments
    (us, G in ns/B). Returns (baseline, sweeps_raw), sweeps_raw being
    {knob: (frame_zero, [(value, run), ...])}."""
    baseline = None
    if baseline_args is not None:
        log("baseline run over the full size range (all knobs 0), for T0 + m/B")
        baseline = runner([knob_settings("o", 0)], baseline_args)[0]
    raw = {}
    for knob, values in sweeps.items():
        log(f"  {knob} = {', '.join(f'{v:g}' for v in values)} {UNITS[knob]}, side by side in one run")
        results = runner(sweep_sets(knob, values), probe_args)
        raw[knob] = (results[0], list(zip(values, results[1:])))
    return baseline, raw


def missed_points(rows):
    return sorted({(r["knob"], r["set_value"]) for r in rows if not r["within_bound"]})


def calibrate(sweeps, runner, probe_args, baseline_args=None, retries=2, log=print):
    """Collects, analyzes and re-measures each point that missed the goal `retries` more
    times (each time beside a zero set of its own), judging it on the element-wise median
    of all its runs (never on the best run). The reference is the element-wise median of
    every sweep's framing zero set. Returns (summary, rows, label_runs) where label_runs
    lists every raw probe result."""
    runner = steady_runner(runner, log=log)
    baseline, raw = collect(sweeps, runner, probe_args, baseline_args, log)
    reference = median_run([frame for frame, _ in raw.values()])
    label_runs = [("baseline", 0.0, baseline)] if baseline else []
    runs = {}
    for knob, (frame, points) in raw.items():
        label_runs.append((f"{knob}-frame", 0.0, frame))
        label_runs += [(knob, v, run) for v, run in points]
        runs[knob] = [(v, reframe(run, frame, reference)) for v, run in points]
    summary, rows = analyze(reference, runs, baseline)
    missed = missed_points(rows) if retries > 0 else []
    if missed:
        log(f"re-measuring {len(missed)} point(s) that missed, {retries} more run(s) each")
        for knob, value in missed:
            idx = next(i for i, (v, _) in enumerate(runs[knob]) if v == value)
            extra = []
            for attempt in range(retries):
                log(f"  {knob} = {value:g} {UNITS[knob]} (repeat {attempt + 1}, beside a zero set)")
                frame, run = runner(sweep_sets(knob, [value]), probe_args)
                label_runs += [(f"{knob}-frame", 0.0, frame), (knob, value, run)]
                extra.append(reframe(run, frame, reference))
            runs[knob][idx] = (value, median_run([runs[knob][idx][1]] + extra))
        summary, rows = analyze(reference, runs, baseline)
        summary["remeasured"] = [{"knob": k, "set_value": v, "runs": retries + 1} for k, v in missed]
    summary["method"] = ("side by side: each knob's sweep in one probe run, its knob sets interleaved in rounds; "
                         "increases are taken against a zero set of the same run")
    return summary, rows, label_runs


# ------------------------------------------------------------------ command line

def parser():
    p = Parser(prog="loggp calibrate", example="loggp calibrate --quick --knobs L --sweep L=0,1us,10us",
               description="Sweep each knob, run loggp-probe under `loggp run`, and compare the measured "
                            "increase with the set one. Exit status (as `loggp main`'s): 0 every knob meets "
                            "its goal, 3 the run completed but a point missed its accuracy goal (a busy "
                            "machine; the MISS lines say which), 1 a failed run, 2 bad usage.")
    p.add_argument("--quick", action="store_true", help="short sweep: o, g, L in {0, 1, 10} us, G in {0, 0.5, 2} ns/B")
    p.add_argument("--knobs", default=",".join(KNOBS), help="comma-separated subset of o,g,L,G (default all)")
    p.add_argument("--sweep", action="append", default=[], metavar="KNOB=V1,V2,...",
                   help="values of one knob with units, e.g. L=0,1us,10us or G=0,0.5ns/B, overriding the "
                        "default or --quick sweep (repeatable; default: none). The old spelling, bare numbers "
                        "in us (ns/B for G), still works")
    p.add_argument("--out", default="loggp-calibration", metavar="DIR", help="output directory")
    p.add_argument("--sizes", default=",".join(str(s) for s in CAL_SIZES),
                   help="probe sizes (bytes); at least two >= 8192 for G")
    p.add_argument("--time-limit", type=float, default=1.5, help="probe time budget per knob setting, seconds")
    p.add_argument("--rounds", type=int, default=5,
                   help="interleaved rounds over a sweep's knob settings within its run (default 5)")
    p.add_argument("--no-baseline", action="store_true", help="skip the full-range baseline run for T0 + m/B")
    p.add_argument("--retries", type=int, default=2,
                   help="extra runs of a point that misses the goal; it is judged on the median of all (default 2)")
    p.add_argument("--engine", choices=("auto", "libfabric", "pmpi"), help="passed to `loggp run` (default: its own, auto)")
    return p


def sweep_value(knob, text, item):
    """One --sweep value in the sweep's own unit (us; ns/B for G). A value with a unit
    ("10us", "0.5ns/B", "0") goes through the one knob parser; a bare number is the old
    spelling, read in the sweep's unit (documented in --help and experiments/README.md)."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
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
        if len(vals) > MAX_SWEEP_VALUES:
            raise CalibrationError(f"--sweep '{item}': at most {MAX_SWEEP_VALUES} values (one probe run "
                                   f"measures them all, beside a zero set)")
        sweeps[knob] = vals
    return sweeps


def parse_sizes(text):
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        raise CalibrationError(f"--sizes '{text}': expected comma-separated byte counts") from None
    if any(s < 1 for s in sizes) or len(set(sizes)) != len(sizes):
        raise CalibrationError(f"--sizes '{text}': sizes must be distinct and >= 1")
    if sum(s >= BULK_MIN_BYTES for s in sizes) < 2:
        raise CalibrationError(f"--sizes '{text}': need at least two sizes >= {BULK_MIN_BYTES} to measure G")
    return sorted(sizes)


def default_runner(run_args, rounds=5, time_limit=1.5):
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
    errors = ((CalibrationError, 1), (probemod.ProbeError, 1), (fitmod.FitError, 1), (MissingProgram, 1))

    def __init__(self, runner=None):
        self.runner = runner

    def parser(self):
        return parser()

    def check(self, args):
        args.sweeps = parse_sweeps(args)
        args.size_list = parse_sizes(args.sizes)
        if not (args.time_limit > 0 and math.isfinite(args.time_limit)):
            raise CalibrationError(f"--time-limit {args.time_limit}: must be a positive number of seconds")
        if args.retries < 0:
            raise CalibrationError(f"--retries {args.retries}: must be >= 0")
        if not 1 <= args.rounds <= 100:
            raise CalibrationError(f"--rounds {args.rounds}: must be in 1..100")
        out_dir = Path(args.out)
        if out_dir.exists() and not out_dir.is_dir():
            raise CalibrationError(f"--out '{out_dir}' exists and is not a directory")

    def run(self, args):
        return execute(args, args.sweeps, args.size_list, Path(args.out), self.runner)


def main(argv=None, runner=None):
    return CalibrateCommand(runner).main(argv)


def execute(args, sweeps, sizes, out_dir, runner=None):
    run_args = ["--engine", args.engine] if args.engine else []
    runner = runner or default_runner(run_args, args.rounds, args.time_limit)
    # Tight CI targets: the goal is 2 % or 100 ns on a difference of two medians.
    probe_args = ["--sizes", ",".join(map(str, sizes)), "--time-limit", f"{args.time_limit:g}",
                  "--rel-ci", "0.005", "--abs-ci-ns", "10"]
    baseline_args = None if args.no_baseline else ["--time-limit", "3"]
    started = time.monotonic()
    summary, rows, label_runs = calibrate(sweeps, runner, probe_args, baseline_args, args.retries)
    summary["elapsed_s"] = round(time.monotonic() - started, 1)
    summary["probe_args"] = probe_args
    try:
        write_outputs(out_dir, summary, rows, label_runs)
    except OSError as err:
        raise CommandError(f"cannot write to '{out_dir}': {err}") from None
    print(report_text(summary))
    print(f"wrote {os.path.abspath(out_dir)}/calibration.json, calibration.csv, probe_points.csv, calibration.png/.svg, probes/ "
          f"({summary['elapsed_s']} s)")
    return 0 if summary["pass"] else 3


if __name__ == "__main__":
    sys.exit(main())
