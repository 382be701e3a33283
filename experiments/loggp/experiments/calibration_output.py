"""What `loggp calibrate` writes: the report text, the CSV and JSON files, the probe runs and
the figure, from the summary and rows that calibrate.analyze makes."""
import csv
import io
import json
import textwrap
from pathlib import Path

import numpy as np

from loggp.knobs.files import atomic_write, write_text_atomic


def miss_reason(error, set_value):
    """Why a knob's measured increase missed its goal, in words, and what to do."""
    if set_value == 0:
        return "nothing is set at 0, so this is the machine's noise between two runs with every knob at 0; " \
               "rerun on a quiet machine"
    if error > 0 and set_value <= 1:
        return ("more than set at a small setting: the armed layer's own cost per message, or noise; "
                "rerun on a quiet machine")
    if error > 0:
        return "more than set: noise from other work on the machine, or the knob applied twice; rerun to tell"
    return "less than set: the knob is not fully applied, or the baseline was slow in this round; rerun to tell"


def crosstalk_reason(knob, param, set_value):
    """Why another parameter moved when knob was set, in words."""
    if set_value == 0:
        # the run at a zero setting is a second reference: nothing set can have moved it
        return (f"nothing is set at {knob} = 0, so this is the machine's noise between two runs with every knob "
                "at 0; rerun on a quiet machine")
    return f"setting {knob} also moved {param}; if it is not repeatable, noise"


def rows_to_csv(rows, fields):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items() if k in fields})
    return buf.getvalue()


def probe_rows(label_runs):
    """Every size of every probe run, for probe_points.csv."""
    out = []
    for knob, value, run in label_runs:
        for e in sorted(run["sizes"], key=lambda e: e["bytes"]):
            out.append({"knob": knob, "set_value": float(value), "bytes": e["bytes"],
                        "T_us": e["T_us"]["median"], "o_s_us": e["o_s_us"]["median"],
                        "o_r_us": e["o_r_us"]["median"], "g_us": e["g_us"]["median"],
                        "L_us": e["T_us"]["median"] - e["o_s_us"]["median"] - e["o_r_us"]["median"]})
    return out


def panel_contents(knob, k):
    """What one knob's column of the figure draws, as data. The error panel draws every
    measure and every cross-talk in units of its own bound (us and ns/B share one axis; the
    goal band is -1..1), so a failing point, whatever its unit, is drawn outside the band and
    marked; the title names what failed."""
    x = [float(v) for v in k["values"]]
    failing = [p for p, m in k["measures"].items() if not m["pass"]]
    failing += [f"{p} cross-talk" for p, c in k["crosstalk"].items() if not c["pass"]]
    title = f"{knob}: PASS" if k["pass"] else f"{knob}: FAIL ({', '.join(failing)})"
    top = [{"label": f"{p} (slope {m['slope']:.3f})", "x": x, "y": list(m["measured"])}
           for p, m in k["measures"].items()]
    errors = []
    for p, m in k["measures"].items():
        ratio = [(mv - ev) / b for mv, ev, b in zip(m["measured"], m["expected"], m["bounds"])]
        errors.append({"label": p, "kind": "measure", "x": x, "y": ratio,
                       "failing": [abs(r) > 1 for r in ratio]})
    for p, c in k["crosstalk"].items():
        ratio = [mv / b for mv, b in zip(c["moved"], c["bounds"])]
        errors.append({"label": f"{p} (cross-talk)", "kind": "crosstalk", "x": x, "y": ratio,
                       "failing": [abs(r) > 1 for r in ratio]})
    return {"title": title, "pass": k["pass"], "failing": failing, "top": top, "errors": errors}


def plot_calibration(summary, out_png):
    """calibration_figure as PNG at out_png and SVG beside it."""
    import matplotlib.pyplot as plt
    fig = calibration_figure(summary)
    out_png = Path(out_png)
    atomic_write(out_png, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    atomic_write(out_png.with_suffix(".svg"), lambda tmp: fig.savefig(tmp, format="svg"))
    plt.close(fig)


def calibration_figure(summary):
    """One column per knob: measured increase vs set with y = x on top; below, the error of
    each of the knob's measures and the cross-talk of the others, each over its own bound."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    knobs = list(summary["knobs"])
    fig, axes = plt.subplots(2, len(knobs), figsize=(4.2 * len(knobs), 6.5), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1]})
    markers = "osD^v<>"
    for col, knob in enumerate(knobs):
        k = summary["knobs"][knob]
        panel = panel_contents(knob, k)
        ax, axr = axes[0, col], axes[1, col]
        for i, series in enumerate(panel["top"]):
            ax.plot(series["x"], series["y"], markers[i % len(markers)], label=series["label"])
        top = max(max(k["values"]), 1e-9)
        ax.plot([0, top], [0, top], "k-", lw=0.8, label="y = x")
        ax.set_title(panel["title"], color="green" if panel["pass"] else "red", fontsize=9)
        ax.set_xlabel(f"set increase [{k['unit']}]")
        ax.set_ylabel(f"measured increase [{k['unit']}]")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
        for i, series in enumerate(panel["errors"]):
            x, y = np.array(series["x"]), np.array(series["y"])
            if series["kind"] == "measure":
                axr.plot(x, y, markers[i % len(markers)] + "-", ms=4, label=series["label"])
            else:
                axr.plot(x, y, markers[i % len(markers)], mfc="none", ms=5, color="grey", label=series["label"])
            bad = np.array(series["failing"])
            if bad.any():
                axr.plot(x[bad], y[bad], "x", color="red", ms=9, mew=2)
        if any(any(s["failing"]) for s in panel["errors"]):
            axr.plot([], [], "x", color="red", ms=9, mew=2, label="outside its goal")
        axr.axhspan(-1, 1, color="green", alpha=0.12, label="goal")
        axr.axhline(0, color="black", lw=0.8)
        axr.set_xlabel(f"set increase [{k['unit']}]")
        axr.set_ylabel("error / its bound")
        axr.legend(fontsize=6)
        axr.grid(True, alpha=0.3)
    # wrapped to the figure's width: one knob's column is narrower than the title at 11 pt
    # (about 0.55 em per character)
    per_line = int(fig.get_figwidth() * 72 / (11 * 0.55))
    fig.suptitle(textwrap.fill("loggp calibration: measured vs set; errors over their bound (goal band shaded)",
                               per_line), fontsize=11)
    fig.tight_layout()
    return fig


def report_text(summary):
    # Each figure gets a space of its own before its field: "-0.0003426" fills ten columns.
    lines = []
    for knob, k in summary["knobs"].items():
        lines.append(f"{knob} [{k['unit']}]: {'PASS' if k['pass'] else 'FAIL'}  slope {k['slope']:.4f}  "
                     f"intercept {k['intercept']:+.4f}  R^2 {k['r2']:.5f}  max |error| {k['max_abs_err']:.4g}")
        lines.append(f"    {'set':>10}" + "".join(f" {v:>10g}" for v in k["values"]))
        for param, meas in k["measures"].items():
            expected = meas.get("expected")
            if expected and any(abs(e - s) > 1e-9 for e, s in zip(expected, k["values"])):
                # g is not added to the natural interval (LogP): what is expected is not what is set
                lines.append(f"    {'expected':>10}" + "".join(f" {v:>10.4g}" for v in expected))
            lines.append(f"    {param:>10}" + "".join(f" {v:>10.4g}" for v in meas["measured"]))
        for param, ct in k["crosstalk"].items():
            lines.append(f"    {'~' + param:>10}" + "".join(f" {v:>10.3g}" for v in ct["moved"]))
        for failure in k["failures"]:
            lines.append(f"    MISS: {failure}")
    regimes = summary.get("baseline", {}).get("regimes")
    if regimes:
        lines.append("baseline T(m) = T0 + m/B:")
        for r in regimes:
            b = r["B_bytes_per_us"]
            lines.append(f"    {r['m_min']:>8}..{r['m_max']:<8} B  T0 {r['T0_us']:.3f} us  "
                         f"B {'inf' if b is None else f'{b:.1f}'} B/us")
    lines.append("ALL KNOBS PASS" if summary["pass"] else
                 "SOME KNOBS MISS THE GOAL (see MISS lines; ~param rows are cross-talk)")
    return "\n".join(lines)


def write_outputs(out_dir, summary, rows, label_runs):
    out_dir = Path(out_dir)
    probes = out_dir / "probes"
    probes.mkdir(parents=True, exist_ok=True)
    seen = {}
    for knob, value, run in label_runs:
        name = f"{knob}-{value:g}"
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name += f"-run{seen[name]}"  # a re-measured point
        write_text_atomic(probes / f"{name}.json", json.dumps(run, indent=1) + "\n")
    fields = ["knob", "set_value", "unit", "parameter", "role", "param_unit", "measured", "increase",
              "expected_increase", "error", "bound", "within_bound"]
    write_text_atomic(out_dir / "calibration.csv", rows_to_csv(rows, fields))
    write_text_atomic(out_dir / "probe_points.csv",
                             rows_to_csv(probe_rows(label_runs),
                                         ["knob", "set_value", "bytes", "T_us", "o_s_us", "o_r_us", "g_us", "L_us"]))
    write_text_atomic(out_dir / "calibration.json", json.dumps(summary, indent=2, allow_nan=False) + "\n")
    plot_calibration(summary, out_dir / "calibration.png")
