"""What `loggp calibrate` writes: the report text, the CSV and JSON files, the probe runs and
the figure, from the summary and rows that calibrate.judge makes."""
import csv
import io
import json
import math
import textwrap
from pathlib import Path

import numpy as np

from loggp.knobs.files import atomic_write, write_text_atomic


from loggp.experiments.known_defects import known_defect
from loggp.experiments.precision import MET, MISSED, UNRESOLVED, worst as worst_of


def _deviation(series, i):
    """The i-th reading's deviation from its expectation, and its interval's end nearest it."""
    deviation = series["measured"][i] - series["expected"][i]
    end = series["high"][i] if deviation < 0 else series["low"][i]
    return deviation, (None if end is None else end - series["expected"][i])


def reading_defect(knob, param, series, i):
    """The known defect that explains the i-th reading of a series, if it is missed."""
    if series["verdicts"][i] != MISSED or series["measured"][i] is None:
        return None
    deviation, reach = _deviation(series, i)
    return known_defect(knob, param, deviation, series["set"][i], reach)


def named_defect(knob, param, series, i):
    """The i-th reading's known defect as a miss names it (defect_text), or None."""
    defect = reading_defect(knob, param, series, i)
    return defect_text(defect, series, i) if defect else None


def defect_text(defect, series, i):
    """How a miss names its known defect; a reading beyond the size the defect is known to
    reach, whose interval still reaches it, says so."""
    deviation, _ = _deviation(series, i)
    if not defect.beyond(deviation, series["set"][i]):
        return f"known defect: {defect.line}"
    size = f"{defect.size(series['set'][i]):.4g} {series['unit']}"
    return (f"known defect, though the reading is beyond the {size} it is known to reach and only its interval "
            f"reaches that: rerun to tell whether it is larger here; {defect.line}")


def advice(knob, param, role, verdict, above, named=None, repeated=True):
    """What a reading's verdict means, in words, and what to do (empty when met); `named`: a
    known defect that explains a miss, as defect_text names it, is said instead; repeated False: a miss
    the runs apart did not all show (calibration_verdict.repeated_miss)."""
    if verdict == MET:
        return ""
    if verdict == UNRESOLVED and not repeated:
        return ("a miss that did not repeat from run to run is not counted as one: rerun to see whether it comes "
                "back, with a longer --budget for more runs")
    if verdict == UNRESOLVED:
        return ("the machine's noise left the interval wider than the goal or across its edge: rerun on a quiet "
                "machine, or with a longer --budget")
    if named:
        return named
    if role == "crosstalk":
        return f"setting {knob} also moved {param}, beyond the armed layer's own cost (which cancels)"
    if above:
        return ("more than set, with the armed layer's own cost cancelled: the knob applied twice, or a "
                "disturbance that lasted the whole run; rerun on a quiet machine to tell")
    return "less than set: the knob is not fully applied"


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


def _finite(values):
    return [math.nan if v is None else float(v) for v in values]


def panel_contents(knob, k):
    """What one knob's column of the figure draws, as data. The top panel: each of the
    knob's own readings with its interval, and the knob's own expectation (the set value
    less the armed step; for g LogP's minimum spacing, not y = x). The error panel: every
    reading and every cross-talk in units of its own tolerance (the goal band is -1..1), its
    interval drawn, so that a missed reading lies wholly outside the band; the title says
    met, missed or unresolved and names what was not met."""
    x = [float(v) for v in k["values"]]
    not_met, unresolved = [], 0
    for group, suffix in ((k["measures"], ""), (k["crosstalk"], " cross-talk")):
        for p, s in group.items():
            verdict = worst_of(s["verdicts"])
            if verdict == MISSED:
                not_met.append(f"{p}{suffix} missed")
            unresolved += verdict == UNRESOLVED
    # the missed readings by name, the unresolved ones by count: a title fits its column
    named = not_met + ([f"{unresolved} unresolved"] if unresolved else [])
    title = f"{knob}: {k['verdict']}" + (f" ({', '.join(named)})" if named else "")
    top = [{"label": p, "x": x, "y": _finite(m["measured"]), "low": _finite(m["low"]), "high": _finite(m["high"])}
           for p, m in k["measures"].items()]
    errors = []
    for kind, group in (("measure", k["measures"]), ("crosstalk", k["crosstalk"])):
        for p, s in group.items():
            def scaled(values):
                return [(v - e) / t if v is not None else math.nan
                        for v, e, t in zip(values, s["expected"], s["tolerance"])]
            errors.append({"label": p if kind == "measure" else f"{p} (cross-talk)", "kind": kind, "x": x,
                           "y": scaled(s["measured"]), "low": scaled(s["low"]), "high": scaled(s["high"]),
                           "verdicts": list(s["verdicts"])})
    return {"title": title, "verdict": k["verdict"], "missed": not_met, "top": top,
            "expectation": k.get("expectation", {"x": [], "y": []}), "errors": errors}


VERDICT_COLOURS = {MET: "green", MISSED: "red", UNRESOLVED: "darkorange"}
ERROR_AXIS = 5.0  # the error panel shows +-5 tolerances


def plot_calibration(summary, out_png):
    """calibration_figure as PNG at out_png and SVG beside it."""
    import matplotlib.pyplot as plt
    fig = calibration_figure(summary)
    out_png = Path(out_png)
    atomic_write(out_png, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    atomic_write(out_png.with_suffix(".svg"), lambda tmp: fig.savefig(tmp, format="svg"))
    plt.close(fig)


def calibration_figure(summary):
    """One column per knob: each reading with its 95 % interval against the set value and
    the knob's own expectation on top; below, every reading's distance from its expectation
    over its tolerance (goal band shaded), missed points crossed, unresolved ones ringed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    knobs = list(summary["knobs"])
    fig, axes = plt.subplots(2, max(len(knobs), 1), figsize=(4.2 * max(len(knobs), 1), 6.5), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1]})
    markers = "osD^v<>"
    for col, knob in enumerate(knobs):
        k = summary["knobs"][knob]
        panel = panel_contents(knob, k)
        ax, axr = axes[0, col], axes[1, col]
        for i, series in enumerate(panel["top"]):
            y, low, high = (np.array(series[key]) for key in ("y", "low", "high"))
            ax.errorbar(series["x"], y, yerr=[np.nan_to_num(y - low), np.nan_to_num(high - y)],
                        fmt=markers[i % len(markers)], capsize=3, label=series["label"])
        curve = panel["expectation"]
        ax.plot(curve["x"], curve["y"], "k-", lw=0.8, label="expected (LogP)" if knob == "g" else "expected")
        ax.set_title(textwrap.fill(panel["title"], 48), color=VERDICT_COLOURS[panel["verdict"]], fontsize=9)
        ax.set_xlabel(f"set value [{k['unit']}]")
        ax.set_ylabel(f"reading over the armed baseline [{k['unit']}]")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
        # a noisy machine's intervals reach thousands of tolerances: the axis stops at ERROR_AXIS
        # and points beyond it are drawn at its edge
        for i, series in enumerate(panel["errors"]):
            x, y = np.array(series["x"]), np.clip(np.array(series["y"]), -ERROR_AXIS, ERROR_AXIS)
            low = np.clip(np.array(series["low"]), -ERROR_AXIS, ERROR_AXIS)
            high = np.clip(np.array(series["high"]), -ERROR_AXIS, ERROR_AXIS)
            style = dict(fmt=markers[i % len(markers)], ms=4, capsize=2, label=series["label"])
            if series["kind"] != "measure":
                style.update(mfc="none", color="grey")
            axr.errorbar(x, y, yerr=[np.nan_to_num(y - low), np.nan_to_num(high - y)], **style)
            verdicts = np.array(series["verdicts"])
            for verdict, mark in ((MISSED, dict(marker="x", color="red", ms=9, mew=2)),
                                  (UNRESOLVED, dict(marker="o", mfc="none", color="darkorange", ms=11, mew=1.5))):
                chosen = verdicts == verdict
                if chosen.any():
                    axr.plot(x[chosen], y[chosen], ls="none", **mark)
        for verdict, mark in ((MISSED, dict(marker="x", color="red", ms=9, mew=2)),
                              (UNRESOLVED, dict(marker="o", mfc="none", color="darkorange", ms=11, mew=1.5))):
            if any(verdict in s["verdicts"] for s in panel["errors"]):
                axr.plot([], [], ls="none", label=verdict, **mark)
        axr.axhspan(-1, 1, color="green", alpha=0.12, label="goal")
        axr.set_ylim(-ERROR_AXIS * 1.1, ERROR_AXIS * 1.1)
        axr.axhline(0, color="black", lw=0.8)
        axr.set_xlabel(f"set value [{k['unit']}]")
        axr.set_ylabel("(reading - expected) / tolerance,\nclipped at ±5")
        axr.legend(fontsize=6)
        axr.grid(True, alpha=0.3)
    # wrapped to the figure's width: one knob's column is narrower than the title at 11 pt
    # (about 0.55 em per character)
    per_line = int(fig.get_figwidth() * 72 / (11 * 0.55))
    title = (f"loggp calibration: readings against the armed baseline, 95 % intervals; goal {summary['goal']['precision']}"
             + (f"; {summary['sentence']}" if summary.get("sentence") else ""))
    fig.suptitle(textwrap.fill(title, per_line), fontsize=11)
    fig.tight_layout()
    return fig


def _ns(us):
    return f"{1000 * us:+.0f} ns"


def noise_text(summary):
    """The machine's noise, measured first: zero-knob rounds against each other, and the
    host's detours when measured."""
    parts = []
    for p in ("o_s", "o_r", "g", "L", "G"):
        n = summary["noise"].get(p) or {}
        if n.get("median_abs") is not None:
            parts.append(f"{p} {n['median_abs']:.3g} ns/B" if p in ("G", "G_T") else
                         f"{p} {1000 * n['median_abs']:.0f} ns")
    rounds = (summary["noise"].get("L") or {}).get("rounds", 0)
    line = (f"machine noise: two zero-knob sets of one round differ by a median of {', '.join(parts)} "
            f"({rounds} rounds)") if parts else "machine noise: not measured"
    return line


def armed_cost_text(summary):
    parts = []
    for p in ("o_s", "o_r", "g", "L", "G"):
        c = summary["armed_cost"].get(p) or {}
        interval = c.get("interval")
        if not interval or interval.get("estimate") is None:
            continue
        if p == "G":
            parts.append(f"G {interval['estimate']:+.3g} ns/B")
        elif interval.get("low") is None:
            parts.append(f"{p} {_ns(interval['estimate'])} (too few rounds for an interval)")
        else:
            parts.append(f"{p} {_ns(interval['estimate'])} [{1000 * interval['low']:+.0f}, {1000 * interval['high']:+.0f}]")
    return ("armed layer's own cost (every knob at its smallest step, minus zero knobs; cancelled in every reading "
            "below): " + (", ".join(parts) if parts else "not measured"))


def _cell(value, low, high, unit):
    places = 4 if unit == "ns/B" else 3
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{value:+.{places}f}"
    return f"{value:+.{places}f}±{max(value - low, high - value):.{places}f}"


def report_text(summary):
    """The console report: noise first, then the armed cost, each knob's readings with their
    intervals and verdicts, the lines that are not met with their reasons, and the sentence."""
    lines = [noise_text(summary)]
    if summary.get("detours") is not None:
        lines.append(detours_line(summary["detours"]))
    load_line = (summary.get("load") or {}).get("line")
    if load_line:
        lines.append(load_line)
    lines.append(armed_cost_text(summary))
    budget = summary.get("budget_s")
    lines.append(f"goal: {summary['goal']['text']}"
                 + (f"; budget {budget:g} s, used {summary.get('elapsed_s', 0):g} s" if budget else "")
                 + ("; the budget ran out" if summary.get("budget_ran_out") else ""))
    for knob, k in summary["knobs"].items():
        slope = k.get("slope")
        slope_text = ""
        if slope and slope.get("estimate") is not None:
            slope_text = (f"  slope of {slope['parameter']} {slope['estimate']:.4f}"
                          + (f" [{slope['low']:.4f}, {slope['high']:.4f}]" if slope.get("low") is not None else ""))
        lines.append(f"{knob} [{k['unit']}]: {k['verdict'].upper()}  ({k['runs']} runs){slope_text}")
        # Each figure gets a space of its own before its field.
        lines.append(f"    {'set':>10}" + "".join(f" {v:>16g}" for v in k["values"]))
        for param, s in list(k["measures"].items()) + list(k["crosstalk"].items()):
            # more than the armed step apart
            if s["role"] == "primary" and any(abs(e - v) > 0.0011 for e, v in zip(s["expected"], k["values"])):
                # g is not added to the natural interval (LogP): what is expected is not what is set
                lines.append(f"    {'expected':>10}" + "".join(f" {e:>+16.3f}" for e in s["expected"]))
            name = param if s["role"] == "primary" else "~" + param
            lines.append(f"    {name:>10}" + "".join(f" {_cell(v, lo, hi, s['unit']):>16}"
                                                    for v, lo, hi in zip(s["measured"], s["low"], s["high"])))
        lines.append(f"    {'verdict':>10}" + "".join(f" {p['verdict']:>16}" for p in k["points"]))
        for reason in k["reasons"]:
            lines.append(f"    {reason}")
    regimes = summary.get("baseline", {}).get("regimes")
    if regimes:
        lines.append("baseline T(m) = T0 + m/B:")
        for r in regimes:
            b = r["B_bytes_per_us"]
            lines.append(f"    {r['m_min']:>8}..{r['m_max']:<8} B  T0 {r['T0_us']:.3f} us  "
                         f"B {'inf' if b is None else f'{b:.1f}'} B/us")
    lines.append(f"verdict: {summary['verdict'].upper()} (~param rows are cross-talk; each cell is the median "
                 "reading ± its 95 % interval's half-width)")
    if summary.get("sentence"):
        lines.append(summary["sentence"])
    return "\n".join(lines)


def detours_line(detours):
    if not detours:
        return "host detours: not measured (loggp-detours did not run)"
    return (f"host detours: {detours['per_second']:.0f} a second, median {detours['median_us']:.1f} us, "
            f"{100 * detours['lost_fraction']:.1f} % of a CPU (loggp-detours)")


def closing_sentence(summary):
    """One plain sentence: how closely the knobs apply here, and what the noise hides."""
    readings = [(knob, v, p, s, i) for knob, k in summary["knobs"].items()
                for group in (k["measures"], k["crosstalk"]) for p, s in group.items()
                for i, v in enumerate(k["values"])]
    if not readings:
        return "Nothing was judged: no knob was measured."
    by = {verdict: [r for r in readings if r[3]["verdicts"][r[4]] == verdict] for verdict in (MET, MISSED, UNRESOLVED)}
    floor = [(summary["noise"].get(p) or {}).get("median_abs") for p in ("o_s", "o_r", "g", "L")]
    floor = [f for f in floor if f is not None]
    noise = f"zero-knob rounds differ by a median of up to {time_text(max(floor))}" if floor else "not measured"

    def reach(s, i):  # how far the interval reaches from the expectation, us
        low, high = s["low"][i], s["high"][i]
        if low is None or high is None:
            return math.inf
        return max(high - s["expected"][i], s["expected"][i] - low)
    timed = {verdict: [r for r in rs if r[3]["unit"] == "us"] for verdict, rs in by.items()}
    if timed[MET]:
        head = (f"On this machine {len(by[MET])} of {len(readings)} readings show the knobs apply as set, to within "
                f"{time_text(max(reach(s, i) for *_, s, i in timed[MET]))}")
    else:
        head = f"On this machine none of {len(readings)} readings could be shown to apply as set"
    if by[MISSED]:
        unknown = [r for r in by[MISSED] if not reading_defect(r[0], r[2], r[3], r[4])]
        known = len(by[MISSED]) - len(unknown)
        listed = unknown or by[MISSED]
        names = ", ".join(f"{p} at {knob} = {v:g} {summary['knobs'][knob]['unit']}" for knob, v, p, _, _ in listed[:4])
        head += (f"; {len(by[MISSED])} {'misses its' if len(by[MISSED]) == 1 else 'miss their'} goal "
                 f"({names}{', ...' if len(listed) > 4 else ''}"
                 + (f"; {known} of them {'is a known defect' if known == 1 else 'are known defects'} of the "
                    "apparatus, named in verdicts.txt" if known else "") + ")")
    if by[UNRESOLVED]:
        reaches = sorted(reach(s, i) for *_, s, i in timed[UNRESOLVED])
        typical = reaches[len(reaches) // 2] if reaches else None
        if typical is None:
            hidden = "per-byte differences finer than their goal"
        elif math.isfinite(typical):
            hidden = f"differences below about {time_text(typical)} (the median unresolved interval's reach)"
        else:
            hidden = "any difference (too few rounds for an interval)"
        head += f"; {len(by[UNRESOLVED])} stay unresolved: the noise ({noise}) hides {hidden}"
    else:
        head += f"; the noise ({noise}) hid nothing the goal asks for"
    if (summary.get("load") or {}).get("line"):
        head += "; other work shared the cores, so rerun alone before trusting a miss"
    elif by[MISSED] and noisy_host(summary.get("detours")):
        d = summary["detours"]
        head += (f"; the host took {100 * d['lost_fraction']:.1f} % of a CPU in detours "
                 f"({d['per_second']:.0f} a second), over a quiet host's {100 * QUIET_HOST_SHARE:g} %: "
                 "o's readings and cross-talk move with that share (docs/benchmarks.md), so rerun on a "
                 "quiet host before blaming the knobs")
    return head + "."


# Quiet hosts of our kind lose about 1 % of a CPU to their detours; at 2-4 % the o readings
# and their cross-talk move by several percent (docs/benchmarks.md, "Known defects").
QUIET_HOST_SHARE = 0.015


def noisy_host(detours):
    """Did the host's detours take more of a CPU than a quiet host's (a share, so the same
    limit holds on a fast machine and a slow one)?"""
    return bool(detours) and detours.get("lost_fraction", 0) > QUIET_HOST_SHARE


def time_text(us):
    """A time for a sentence: ns below a microsecond, else us or ms."""
    if us < 1:
        return f"{1000 * us:.0f} ns"
    return f"{us:.3g} us" if us < 1000 else f"{us / 1000:.3g} ms"


def verdicts_text(summary):
    """verdicts.txt: the verdicts with their reasons, for a reader who opens the folder."""
    lines = [f"verdict: {summary['verdict']}", summary.get("sentence", ""), "", noise_text(summary)]
    if summary.get("detours") is not None:
        lines.append(detours_line(summary["detours"]))
    load_line = (summary.get("load") or {}).get("line")
    if load_line:
        lines.append(load_line)
    lines += [armed_cost_text(summary), f"goal: {summary['goal']['text']}", ""]
    for knob, k in summary["knobs"].items():
        lines.append(f"{knob}: {k['verdict']} ({k['runs']} runs)")
        for i, v in enumerate(k["values"]):
            lines.append(f"  {knob} = {v:g} {k['unit']}: {k['points'][i]['verdict']}")
            for p, s in list(k["measures"].items()) + list(k["crosstalk"].items()):
                role = "" if s["role"] == "primary" else " (cross-talk)"
                defect = named_defect(knob, p, s, i)
                named = f"; {defect}" if defect else ""
                lines.append(f"    {p}{role}: {s['verdicts'][i]}: {s['reasons'][i]}{named}")
    return "\n".join(lines) + "\n"


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
    fields = ["knob", "set_value", "unit", "parameter", "role", "param_unit", "expected_increase", "tolerance",
              "increase", "low", "high", "precision_reached", "pairs", "verdict", "reason"]
    write_text_atomic(out_dir / "calibration.csv", rows_to_csv(rows, fields))
    write_text_atomic(out_dir / "probe_points.csv",
                             rows_to_csv(probe_rows(label_runs),
                                         ["knob", "set_value", "bytes", "T_us", "o_s_us", "o_r_us", "g_us", "L_us"]))
    write_text_atomic(out_dir / "calibration.json", json.dumps(summary, indent=2, allow_nan=False) + "\n")
    write_text_atomic(out_dir / "verdicts.txt", verdicts_text(summary))
    plot_calibration(summary, out_dir / "calibration.png")
