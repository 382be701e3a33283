"""How `loggp calibrate` judges what it collected: what LogGP expects each reading to rise
by, how far it may stray, and a verdict (met, missed, unresolved) per reading, per setting
and per knob, with the reasons."""
import numpy as np

from loggp.experiments import precision as pr
from loggp.experiments.calibration_output import advice, named_defect
from loggp.experiments.calibration_plan import (BULK_MIN_BYTES, CAL_SIZES, CROSSTALK, PARAMS, PER_BYTE, PRIMARY,
                                                UNITS, armed_step)
from loggp.experiments.calibration_readings import median_run, point_parameters


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

# A miss is a real, repeatable error: it must show in this many runs (separate launches) apart.
MISS_RUNS = 2


def split_runs(values, run_rounds):
    """The pooled per-round values cut back into their runs (run_rounds: rounds per run)."""
    out, start = [], 0
    for n in run_rounds:
        out.append(values[start:start + n])
        start += n
    return [v for v in out if v]


def repeated_miss(interval, goal, runs):
    """(verdict, settled, note) for a pooled reading whose interval misses its goal, from its
    runs apart (lists of per-round values): missed when at least MISS_RUNS runs, and more than
    half of them, have their own median beyond the goal on the pooled side. One run is not
    settled yet (run it again); runs that disagree leave it unresolved: what one launch
    showed, the next did not (memory placement, the host's state), so its rounds' interval
    understates the spread."""
    above = interval.low > goal.high
    beyond = sum(1 for r in runs if (np.median(r) > goal.high if above else np.median(r) < goal.low))
    if beyond >= MISS_RUNS and 2 * beyond > len(runs):
        return pr.MISSED, True, None
    if len(runs) < MISS_RUNS:
        return pr.UNRESOLVED, False, "missed in its only run, not yet repeated in another"
    return pr.UNRESOLVED, True, (f"beyond the goal in {beyond} of {len(runs)} runs apart only: not repeatable, "
                                 "so the rounds of one run understate the spread between runs")


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
                 "measured": [], "low": [], "high": [], "pairs": [], "verdicts": [], "reasons": [], "repeats": []}
            for v in values:
                expected = (expected_increase(knob, param, deltas[v], reference_g, g_machine)
                            if role == "primary" else 0.0)
                target = pr.Goal(expected, tolerance(param, knob, v, bulk_bytes, goal))
                reading = pr.Reading(target, list(points[v][param]))
                interval = reading.interval()
                verdict = pr.verdict(interval, target)
                reading_settled, note = reading.settled(), None
                if verdict == pr.MISSED:
                    verdict, reading_settled, note = repeated_miss(
                        interval, target, split_runs(list(points[v][param]), collected.run_rounds[knob]))
                out_of_budget = budget_ran_out and not reading_settled
                reason = pr.reason(interval, target, s["unit"], reached=not out_of_budget, places=PLACES[s["unit"]])
                if note:
                    reason = f"{reason}; but {note}"
                settled = settled and reading_settled
                d = interval.as_dict()
                for key, value in (("expected", expected), ("tolerance", target.tolerance), ("measured", d["estimate"]),
                                   ("low", d["low"]), ("high", d["high"]), ("pairs", interval.n),
                                   ("verdicts", verdict), ("reasons", reason), ("repeats", note is None)):
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
                            s["measured"][i] is not None and s["measured"][i] > s["expected"][i],
                            named_defect(knob, p, s, i), repeated=s["repeats"][i])
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
