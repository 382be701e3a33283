"""The study report's third column: beside the measured slope and the count x
delta model, the slope `loggp predict` gets from a baseline run's trace (study
files with trace = true), and where prediction and emulation disagree by more
than DISAGREE, where the replay says the added time goes. Compared only where the
measured slope is resolved (its interval excludes zero)."""
import os

from . import analyze, loggops, predict

DISAGREE = 0.10
RUNS_DIR, TRACE_DIR = "runs", "trace"  # loggp.harness.runner's layout of a results folder


def trace_folder(results_dir, runs, curve):
    """A traced, successful baseline run of the curve's benchmark, np and class, or None."""
    for r in runs:
        if (r["benchmark"], r["np"], r["class"], r["sweep"], r["status"]) != \
                (curve.benchmark, curve.np, curve.klass, "baseline", "ok"):
            continue
        folder = os.path.join(results_dir, RUNS_DIR, str(r["plan_id"]), TRACE_DIR)
        if os.path.isfile(os.path.join(folder, "trace.0.bin")):
            return folder
    return None


def _where(programs, machine, knob, delta):
    """Which part of the replay's slowest rank grows with the setting."""
    base = predict.simulate(programs, machine)
    high = predict.simulate(programs, machine, **{knob: delta})
    slow = max(range(len(high.end_ns)), key=high.end_ns.__getitem__)
    parts = {"waiting for messages": high.waiting_ns[slow] - base.waiting_ns[slow],
             "overheads": high.overhead_ns[slow] - base.overhead_ns[slow]}
    part = max(parts, key=parts.get)
    added = high.end_ns[slow] - base.end_ns[slow]
    share = parts[part] / added if added > 0 else 0.0
    return f"rank {slow}: {100 * share:.0f} % of the added time is {part}"


def rows(results_dir, runs, curves):
    """[benchmark, knob, measured slope, model slope, predicted slope, predicted/measured, note] per curve
    with a trace; [] when the study recorded none."""
    out, cache = [], {}
    for c in curves:
        folder = trace_folder(results_dir, runs, c)
        if folder is None or c.slope is None:
            continue
        if folder not in cache:
            try:
                cache[folder] = predict.load(folder)
            except ValueError as err:
                cache[folder] = f"trace unreadable: {err}"
            except loggops.DeadlockError as err:  # found by the replay opening it counts
                cache[folder] = f"replay failed: {err}"
        programs = cache[folder]
        if isinstance(programs, str):
            out.append([c.label, c.knob, c.slope_text(), c.model_slope, None, None, programs])
            continue
        per_ns = analyze.NS_PER_UNIT[c.unit]
        deltas = [p.value * per_ns for p in c.points if p.value > 0]
        try:
            base = predict.runtime(programs, predict.DEFAULT_MACHINE)
            added = [(d, predict.runtime(programs, predict.DEFAULT_MACHINE, **{c.knob: d}) - base) for d in deltas]
        except loggops.DeadlockError as err:
            out.append([c.label, c.knob, c.slope_text(), c.model_slope, None, None, f"replay failed: {err}"])
            continue
        # over the benchmark's own timed section, as the measured slowdown is
        slope = predict.slope([(d / per_ns, 100 * a / (c.baseline_s * 1e9)) for d, a in added])
        if not c.resolved:
            out.append([c.label, c.knob, c.slope_text(), c.model_slope, slope, None,
                        "measurement not resolved: no comparison"])
            continue
        ratio = slope / c.sensitivity
        note = ""
        if abs(ratio - 1) > DISAGREE:
            note = (f"disagree by more than {100 * DISAGREE:.0f} %; in the replay at the largest setting, "
                    + _where(programs, predict.DEFAULT_MACHINE, c.knob, max(deltas)))
            if programs.unmodelled:
                note += "; not modelled: " + ", ".join(sorted(programs.unmodelled))
        out.append([c.label, c.knob, c.slope_text(), c.model_slope, slope, ratio, note])
    return out
