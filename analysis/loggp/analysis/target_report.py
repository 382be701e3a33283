"""A study's target networks (`targets = [...]`, npb-harness/loggp/harness/target_sweep.py):
per application, the runtime on this host (the baseline), emulated on each target
(`loggp run --target`) and, where the baseline recorded a trace, predicted for it
(`loggp predict --target`: the baseline's runtime plus what the replay adds at the
target's parameters over the host's own, read from the study's host signature)."""
import json
import os

import numpy as np

from loggp.harness.target_sweep import HOST_SIGNATURE, KEY, resolve_path

from . import groups, predict, stats, target_prediction

HEADER = ["benchmark", "np", "class", "target", "runs", "emulated_s", "slowdown", "low", "high", "predicted_s",
          "predicted_slowdown", "note"]
RUNS_DIR, TRACE_DIR = "runs", "trace"  # loggp.harness.runner's layout of a results folder


def _trace(results_dir, rows):
    """A traced, successful baseline run among rows, or None."""
    for r in rows:
        if r["sweep"] != "baseline":
            continue
        folder = os.path.join(results_dir, RUNS_DIR, str(r["plan_id"]), TRACE_DIR)
        if os.path.isfile(os.path.join(folder, "trace.0.bin")):
            return folder
    return None


def predicted_seconds(trace_dir, host_file, spec, base_s):
    """The baseline runtime plus the replay's added time at the target over the host."""
    machine = predict.machine_from_probe(host_file)
    programs = predict.load(trace_dir)
    row = target_prediction.predict(programs, machine, spec, predict.runtime)
    added_s = row["predicted_s"] - programs.traced_ns * 1e-9
    return base_s + added_s


def target_bars(results_dir, runs, study_path=None, rng_seed=0):
    """{(benchmark, np, class): {"baseline_s": s, "targets": [dict...]}} for applications
    that ran on targets; a target file is found relative to the study file (study_path)."""
    rng = np.random.default_rng(rng_seed)
    host_file = os.path.join(results_dir, HOST_SIGNATURE)
    out = {}
    for key, rows, base in groups.by_application(runs):
        by_target = {}
        for r in rows:
            if r["sweep"] == KEY:
                by_target.setdefault(json.loads(r["knobs"])[KEY], []).append(r["runtime_seconds"])
        if not by_target:
            continue
        base_s = float(np.median(base))
        trace_dir = _trace(results_dir, rows) if os.path.isfile(host_file) else None
        points = []
        for spec, times in by_target.items():
            s, lo, hi = stats.slowdown(times, base, rng)
            predicted, note = None, ("no traced baseline (trace = true predicts)" if not trace_dir else "")
            if trace_dir:
                where = os.path.dirname(study_path) if study_path else results_dir
                try:
                    predicted = predicted_seconds(trace_dir, host_file, resolve_path(spec, where), base_s)
                except (ValueError, OSError) as err:  # the trace or the target: said in the table
                    note = f"not predicted: {err}"
            points.append({"target": spec, "runs": len(times), "emulated_s": float(np.median(times)),
                           "slowdown": s, "low": lo, "high": hi, "baseline_runs": len(base), "predicted_s": predicted,
                           "predicted_slowdown": None if predicted is None else predicted / base_s, "note": note})
        out[key] = {"baseline_s": base_s, "targets": points}
    return out


def rows(bars, words=False):
    """Table rows; a target with no interval has empty low and high cells, or with words=True
    the reason in the low cell."""
    return [[k[0], k[1], k[2] or "", p["target"], p["runs"], p["emulated_s"], p["slowdown"],
             *stats.interval_cells(p, words), p["predicted_s"], p["predicted_slowdown"], p["note"]]
            for k, b in bars.items() for p in b["targets"]]


def figure(bars, plt):
    """One panel per application: runtime on this host and per target, emulated and predicted side by side."""
    fig, axes = plt.subplots(1, len(bars), figsize=(max(5.0, 1.6 + 1.3 * max(len(b["targets"]) for b in
                                                                             bars.values())) * len(bars), 4.2),
                             squeeze=False)
    for ax, ((bench, np_, klass), b) in zip(axes[0], bars.items()):
        names = ["host"] + [p["target"] for p in b["targets"]]
        x = np.arange(len(names))
        emulated = [b["baseline_s"]] + [p["emulated_s"] for p in b["targets"]]
        # the slowdown's relative error lengths, on the emulated runtime
        lengths = [stats.error_lengths(p["slowdown"], p["low"], p["high"]) if p["slowdown"] else (0.0, 0.0)
                   for p in b["targets"]]
        err = [[0.0] + [p["emulated_s"] * d / p["slowdown"] if d else 0.0 for p, (d, _) in zip(b["targets"], lengths)],
               [0.0] + [p["emulated_s"] * u / p["slowdown"] if u else 0.0 for p, (_, u) in zip(b["targets"], lengths)]]
        ax.bar(x - 0.2, emulated, 0.4, yerr=err, capsize=3, label="emulated (median)", color="#1f77b4")
        predicted = [b["baseline_s"]] + [p["predicted_s"] if p["predicted_s"] is not None else np.nan
                                         for p in b["targets"]]
        if any(p["predicted_s"] is not None for p in b["targets"]):
            ax.bar(x + 0.2, predicted, 0.4, label="predicted from the trace", color="#ff7f0e")
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=20)
        ax.set_ylabel("runtime (s)")
        ax.set_title(f"{bench}{' class ' + klass if klass else ''} np={np_}\n"
                     "error bars: 95 % bootstrap CI of the slowdown", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    return fig
