"""The study report's CSV files: sensitivity.csv, slowdown.csv and runs.csv."""
import csv
import io
import os

import numpy as np

from loggp.knobs.files import write_text_atomic


def csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _bound(value):
    """An interval's end for a table: empty where too few pairs leave it unbounded."""
    return value if np.isfinite(value) else None


def flags_text(curve):
    return "; ".join(f"{kind} {a:g}-{b:g} {curve.unit}" for kind, a, b in curve.flags)


def sensitivity_rows(curves):
    rows = []
    for c in curves:
        top = c.points[-1]
        rows.append([c.benchmark, c.np, c.klass or "", c.knob, c.unit,
                     round(c.baseline_s, 6), c.sensitivity,
                     c.slope_low, c.slope_high, c.fit.r2 if c.fit else None, c.model_slope,
                     top.value, top.slowdown, _bound(top.low), _bound(top.high),
                     c.profile_count, c.effective_count, flags_text(c), c.verdict,
                     "yes" if c.resolved else "no", c.slope.estimate if c.slope else None,
                     c.goal.text() if c.goal else None])
    return rows


SENS_HEADER = ["benchmark", "np", "class", "knob", "unit", "baseline_runtime_s", "slope_pct_per_unit",
               "slope_ci_low", "slope_ci_high", "r2",
               "model_slope_pct_per_unit", "max_value", "slowdown_at_max", "ci_low", "ci_high",
               "profile_count", "effective_count", "flags", "model_vs_measurement",
               "slope_resolved", "slope_estimate_pct_per_unit", "precision_goal"]


SLOW_HEADER = ["benchmark", "np", "class", "knob", "value", "unit", "runs", "median_s",
               "slowdown", "ci_low", "ci_high", "model_slowdown", "injected_slowdown"]


RUN_COLUMNS = ["id", "plan_id", "round", "benchmark", "kind", "class", "np", "sweep", "o_s_ns",
               "o_r_ns", "g_ns", "G_ns_per_byte", "L_ns", "status", "exit_status", "verified",
               "runtime_seconds", "wall_seconds", "started_at", "finished_at", "host",
               "mpi_version", "loggp_version", "error", "stdout_path", "stderr_path", "command"]


def write_tables(out_dir, a):
    """sensitivity.csv, slowdown.csv and runs.csv."""
    write_text_atomic(os.path.join(out_dir, "sensitivity.csv"),
                      csv_text(SENS_HEADER, sensitivity_rows(a.curves)))
    slow_rows = [[c.benchmark, c.np, c.klass or "", c.knob, p.value, c.unit, p.n, p.median_s,
                  p.slowdown, _bound(p.low), _bound(p.high), p.model, p.injected]
                 for c in a.curves for p in c.points]
    write_text_atomic(os.path.join(out_dir, "slowdown.csv"), csv_text(SLOW_HEADER, slow_rows))
    write_text_atomic(os.path.join(out_dir, "runs.csv"),
                      csv_text(RUN_COLUMNS, [[r["round"] + 1 if k == "round" else r.get(k) for k in RUN_COLUMNS]
                                              for r in a.runs]))  # rounds counted from 1, as everywhere a user reads
