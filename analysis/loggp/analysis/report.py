"""The study report: plots (PNG and SVG), CSV tables and one self-contained
HTML page with the images embedded. Written to RESULTS/report/."""
import base64
import csv
import datetime
import html
import io
import json
import os

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from loggp.knobs.files import write_text_atomic  # noqa: E402

from loggp.experiments import calibration_file as calib  # noqa: E402
from loggp.harness.studyfile import ARMED_SWEEP  # noqa: E402
from loggp.harness import units  # noqa: E402
from loggp.harness.units import ARMED  # noqa: E402
from . import analyze, figure_set, jitter_report, models, region_report, report_contents, topology_report  # noqa: E402
from . import target_report, trace_prediction  # noqa: E402

REPORT_DIR = "report"
METHOD = ("Every setting runs once per round beside two baselines of the same benchmark, in the middle of "
          "its runs: the program with every knob at 0 (the unperturbed program) and the armed baseline, "
          "every knob at its smallest step (1 ns, 0.001 ns/B), which pays the layer's own cost as every "
          "setting does. Slowdown is the median over rounds of T(knob) / T(0) of the same round, T being "
          "the benchmark's own timed section (NPB's \"Time in seconds\"), not LogGP's start-up cost T0, "
          "which the linear model section uses. Sensitivity is the median over rounds of each setting's "
          "added time over the armed run of its round, per unit of knob, in percent of T(0): the layer's "
          "own cost cancels. Intervals are 95 % nonparametric intervals of those medians (order "
          "statistics; below 8 rounds there is none). Rounds are added past the study's repetitions "
          "while a slope's interval is wider than the study's precision and its budget lasts. A slope "
          "whose interval holds zero is no sensitivity: the report says \"no effect resolved, below X\" "
          "and compares no model with it. The R^2, jumps and plateaus come from a least-squares line "
          "through the slowdowns: a jump is a step three times steeper than the overall slope and above "
          "the noise; a plateau a step adding under a quarter of the predicted rise. The model agrees "
          f"when the measured slope is within a factor of {analyze.AGREEMENT:g} of the model's "
          f"(measured/model between {1 / analyze.AGREEMENT:.2f} and {analyze.AGREEMENT:g}).")


def _csv_text(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _fmt(v, digits=3):
    if v is None:
        return ""
    if isinstance(v, float):
        if v.is_integer() and abs(v) >= 1000 and abs(v) < 1e15:
            return f"{int(v):,}"          # counts: 23,302,912 reads better than 2.33e+07
        return f"{v:.{digits}g}"
    return str(v)


def _save_figure(fig, out_dir, stem):
    """Writes stem.png and stem.svg atomically; returns the PNG bytes."""
    images = {}
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=110, bbox_inches="tight")
        images[ext] = buf.getvalue()
        write_text_atomic(os.path.join(out_dir, f"{stem}.{ext}"), images[ext])
    plt.close(fig)
    return images["png"]


def _colours(labels):
    cmap = plt.get_cmap("tab10")
    return {label: cmap(i % 10) for i, label in enumerate(sorted(set(labels)))}


def knob_figure(curves, knob, colours):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    # Nudge each benchmark sideways a little so the error bars stay apart.
    xmax = max(p.value for c in curves for p in c.points) or 1.0
    for i, c in enumerate(curves):
        dodge = (i - (len(curves) - 1) / 2) * 0.008 * xmax
        x = [p.value + dodge for p in c.points]
        y = [p.slowdown for p in c.points]
        # an interval too few runs bound is drawn without a bar, not as an infinite one
        err = [[_finite(p.slowdown - p.low) for p in c.points], [_finite(p.high - p.slowdown) for p in c.points]]
        col = colours[c.label]
        slope = f", {c.sensitivity:+.2g} %/{c.unit}" if c.resolved else ", no effect resolved"
        ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=3, color=col, lw=1.6,
                    label=f"{c.label}{slope}")
        if any(p.model is not None for p in c.points):
            mx = [p.value for p in c.points if p.model is not None]
            my = [p.model for p in c.points if p.model is not None]
            ax.plot(mx, my, ls="--", color=col, lw=1, alpha=0.8)
    ax.axhline(1.0, color="grey", lw=0.8)
    # Very wide intervals (few, noisy runs) must not squash the curves: show
    # the estimates and models in full, clip the error bars.
    values = [v for c in curves for p in c.points for v in (p.slowdown, p.model) if v is not None]
    top, bottom = max(values), min(values)
    span = max(top - bottom, 0.1)
    ax.set_ylim(max(0.0, min(bottom, 1.0) - 0.25 * span), top + 0.35 * span)
    ax.set_xlabel(f"added {analyze.KNOB_TITLE[knob]} ({analyze.UNIT[knob]})")
    ax.set_ylabel("slowdown T(knob) / T(0)")
    ax.set_title(f"Sensitivity to {analyze.KNOB_TITLE[knob]}\n"
                 "solid: measured (95 % CI of paired runs, clipped to the plot), dashed: count x delta model",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _finite(width):
    return width if np.isfinite(width) else 0.0


def _bound(value):
    """An interval's end for a table: empty where too few pairs leave it unbounded."""
    return value if np.isfinite(value) else None


def _interval(low, high, digits=3):
    """'[a, b]', or what an unbounded interval means."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "(too few runs for an interval)"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def sensitivity_panels(curves):
    """The knobs the sensitivity figure gets a panel for: those with a fitted slope; a knob
    the study did not sweep (or swept at one value only) would be an empty panel."""
    return [k for k in analyze.KNOB_ORDER if any(c.knob == k and c.resolved for c in curves)]


def linear_model_panels(curves):
    """The panels of the linear-model figure that have something to draw: T0 (o, L) and B (G)."""
    panels = []
    if any(c.knob in T0_MARKERS for c in curves):
        panels.append("T0")
    if any(c.knob == "G" for c in curves):
        panels.append("B")
    return panels


T0_MARKERS = {"o": "o", "o_s": "^", "o_r": "v", "L": "s"}


def sensitivity_figure(curves, colours):
    knobs = sensitivity_panels(curves)
    fig, axes = plt.subplots(1, len(knobs), figsize=(3.2 * len(knobs) + 0.5, 3.6), squeeze=False)
    for ax, knob in zip(axes[0], knobs):
        # a slope whose interval holds zero is no sensitivity: not drawn as one
        cs = [c for c in curves if c.knob == knob and c.resolved]
        labels = [c.label for c in cs]
        ax.bar(range(len(cs)), [c.sensitivity for c in cs], color=[colours[l] for l in labels],
               yerr=[[c.sensitivity - c.slope.low for c in cs], [c.slope.high - c.sensitivity for c in cs]],
               capsize=3)
        for i, c in enumerate(cs):
            if c.model_slope is not None:
                ax.plot([i - 0.4, i + 0.4], [c.model_slope] * 2, color="black", lw=1.5)
        ax.set_xticks(range(len(cs)), [l.split(" ")[0] for l in labels], rotation=45,
                      ha="right", fontsize=8)
        ax.set_title(analyze.KNOB_TITLE[knob], fontsize=9)
        ax.set_ylabel(f"% slowdown per {analyze.UNIT[knob]}", fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Sensitivity slopes (bars: measured, black line: count x delta model)",
                 fontsize=10)
    fig.tight_layout()
    return fig


def linear_model_figure(curves, colours, regimes):
    """Slowdown against the linear model's T0 and B, one panel for each the study swept."""
    base_T0, base_B = calib.base_values(regimes) if regimes else (None, None)
    panels = linear_model_panels(curves)
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    ax_of = dict(zip(panels, axes[0]))
    a0, a1 = ax_of.get("T0"), ax_of.get("B")
    for c in curves:
        col = colours[c.label]
        if c.knob in T0_MARKERS:
            x = [calib.added_T0_us(c.knob, p.value) + (base_T0 or 0) for p in c.points]
            a0.plot(x, [p.slowdown for p in c.points], marker=T0_MARKERS[c.knob], color=col,
                    ls="-" if c.knob == "o" else ":", label=f"{c.label}, {c.knob}")
        if c.knob == "G":
            if base_B:
                x = [calib.bandwidth(base_B, p.value) for p in c.points]
            else:
                x = [p.value for p in c.points]
            a1.plot(x, [p.slowdown for p in c.points], marker="D", color=col, label=c.label)
    if a0 is not None:
        a0.set_xlabel("T0, one-way start-up cost (us)" if base_T0 is not None
                      else "added T0 = o_s + o_r + L (us; no calibration given)")
        a0.set_ylabel("slowdown")
        a0.set_title("o and L both raise T0: do they cost the same?", fontsize=10)
    if a1 is not None and base_B:
        a1.set_xlabel("B, bulk bandwidth (bytes/us, log scale)")
        a1.set_xscale("log")
        a1.invert_xaxis()
        a1.set_title("G lowers B (axis reversed: slower to the right)", fontsize=10)
    elif a1 is not None:
        a1.set_xlabel("added 1/B = G (ns/B; no calibration given)")
        a1.set_title("G lowers the bulk bandwidth B", fontsize=10)
    for ax in ax_of.values():
        ax.set_ylabel("slowdown")
        ax.grid(alpha=0.3)
        ax.axhline(1.0, color="grey", lw=0.8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def drift_figure(runs, colours_by_bench):
    """Baseline runtimes in the order they ran: drift and noise at a glance."""
    fig, ax = plt.subplots(figsize=(7, 3))
    by_bench = {}
    for r in runs:
        if r["sweep"] == "baseline" and r["status"] == "ok" and r["runtime_seconds"]:
            by_bench.setdefault((r["benchmark"], r["np"], r["class"]), []).append(r)
    for key, rows in sorted(by_bench.items(), key=lambda kv: str(kv[0])):
        rows.sort(key=lambda r: r["started_at"])
        med = sorted(r["runtime_seconds"] for r in rows)[len(rows) // 2]
        ax.plot([r["id"] for r in rows], [r["runtime_seconds"] / med for r in rows], marker=".",
                label=f"{key[0]} np={key[1]}", color=colours_by_bench.get(key[0]))
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("run number (time order)")
    ax.set_ylabel("baseline T / median")
    ax.set_title("Baseline runs through the study (machine drift and noise)", fontsize=10)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _img(png, alt):
    data = base64.b64encode(png).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _table(header, rows, cls=""):
    """An HTML table; header None gives none (a key/value table needs no row of empty cells)."""
    head = ("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>"
            if header else "")
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f'<table class="{cls}">{head}<tbody>{body}</tbody></table>'


def _flags_text(curve):
    return "; ".join(f"{kind} {a:g}-{b:g} {curve.unit}" for kind, a, b in curve.flags)


def sensitivity_rows(curves):
    rows = []
    for c in curves:
        top = c.points[-1]
        rows.append([c.benchmark, c.np, c.klass or "", c.knob, c.unit,
                     round(c.baseline_s, 6), c.sensitivity,
                     c.slope_low, c.slope_high, c.fit.r2 if c.fit else None, c.model_slope,
                     top.value, top.slowdown, _bound(top.low), _bound(top.high),
                     c.profile_count, c.effective_count, _flags_text(c), c.verdict,
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


def smoke_test_reasons(runs):
    """Why a study's figures cannot be trusted as a measurement, or []: fewer than 3
    rounds with a successful run (an interval needs them), or only class S/W problems
    (runs so short that start-up and noise dominate)."""
    reasons = []
    rounds = {r["round"] for r in runs if r["status"] == "ok"}
    if len(rounds) < 3:
        reasons.append(f"{len(rounds)} round{'s' if len(rounds) != 1 else ''} with successful runs "
                       f"(an interval needs at least 3)")
    classes = {r["class"] for r in runs if r.get("class")}
    if classes and classes <= {"S", "W"}:
        reasons.append(f"only class {'/'.join(sorted(classes, reverse=True))} problems, whose runs are so short "
                       f"that start-up and noise weigh more than the knobs")
    return reasons


def _headline(curves):
    """A few sentences a reader gets at a glance."""
    out = []
    fitted = [c for c in curves if c.slope is not None]
    if not fitted:
        return ["No knob sweep has two settings with successful runs yet."]
    for bench in sorted({c.label for c in fitted}):
        cs = [c for c in fitted if c.label == bench]
        real = [c for c in cs if not (c.points[-1].low <= 1.0 <= c.points[-1].high)]
        real.sort(key=lambda c: -c.points[-1].slowdown)
        if real:
            effects = ", ".join(
                f"{c.knob} = {c.points[-1].value:g} {c.unit}: {c.points[-1].slowdown:.2f}x "
                f"[{c.points[-1].low:.2f}, {c.points[-1].high:.2f}]" for c in real)
            part = f"<b>{html.escape(bench)}</b> slows down under {html.escape(effects)}"
        else:
            part = (f"<b>{html.escape(bench)}</b>: no slowdown distinguishable from noise "
                    f"at the largest settings")
        per = ", ".join(f"{c.knob} {html.escape(c.slope_text())}" for c in cs)
        out.append(f"{part}. Slopes: {per}.")
    return out


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
th{background:#f2f2f2}td:first-child{text-align:left}
img{max-width:100%;margin:.5em 0}.bad{background:#fde8e8}.meta td{text-align:left}
.note{color:#555;font-size:.9em}pre.note{white-space:pre-wrap}
"""


def write(results_dir, calibration_path=None):
    if calibration_path is None:
        candidate = os.path.join(results_dir, "calibration.json")
        calibration_path = candidate if os.path.isfile(candidate) else None
    regimes = calib.load(calibration_path) if calibration_path else None
    a = analyze.analyse_dir(results_dir)
    out_dir = os.path.join(results_dir, REPORT_DIR)
    os.makedirs(out_dir, exist_ok=True)
    labels = [c.label for c in a.curves]
    colours = _colours(labels)
    bench_colours = {c.benchmark: colours[c.label] for c in a.curves}

    _write_tables(out_dir, a)

    sections = []
    figures, martin, profiles = _figures(a, out_dir, colours, bench_colours, regimes)
    jitter = jitter_report.jitter_curves(a.runs)
    if jitter:
        write_text_atomic(os.path.join(out_dir, "jitter.csv"),
                          _csv_text(jitter_report.HEADER, jitter_report.rows(jitter)))
        figures["jitter"] = _save_figure(jitter_report.figure(jitter, plt), out_dir, "jitter")
    topology = topology_report.topology_curves(a.runs)
    if topology:
        write_text_atomic(os.path.join(out_dir, "topology.csv"),
                      _csv_text(topology_report.HEADER, topology_report.rows(topology)))
        figures["topology"] = _save_figure(topology_report.figure(topology, plt), out_dir, "topology")
    targets = target_report.target_bars(results_dir, a.runs, a.facts.get("study_path"))
    if targets:
        write_text_atomic(os.path.join(out_dir, "targets.csv"),
                          _csv_text(target_report.HEADER, target_report.rows(targets)))
        figures["targets"] = _save_figure(target_report.figure(targets, plt), out_dir, "targets")

    f = a.facts
    ok = sum(1 for r in a.runs if r["status"] == "ok")
    meta = [["study", f.get("name", "")], ["study file", f.get("study_path", "")],
            ["host", f.get("host", "")], ["MPI", f.get("mpi_version", "")],
            ["loggp", f.get("loggp_version", "")],
            ["runs", f"{len(a.runs)} recorded, {ok} ok, {len(a.problems)} not ok"],
            ["calibration", calibration_path or "none (T0/B axes show increments only)"],
            ["report written", datetime.datetime.now(datetime.timezone.utc)
             .strftime("%Y-%m-%d %H:%M UTC")]]
    warning = _glance_warning(a, calibration_path)
    sections += _glance_sections(a, figures, warning)
    sections += _knob_sections(a, figures)
    sections.append(_models_section(a))
    sections.append(_prediction_section(results_dir, a))
    if "jitter" in figures:
        sections.append("<h2>Latency jitter at a fixed mean</h2>" + _img(figures["jitter"], "slowdown against jitter")
                        + _table(jitter_report.HEADER, jitter_report.rows(jitter)))
    sections += _figure_set_sections(figures, martin, profiles, regimes)
    sections.append(_regions_section(a, out_dir))
    if "topology" in figures:
        sections.append("<h2>Latency and per-byte gap between nodes</h2><p>The study's [topology] table: the "
                        "value swept applies to pairs of ranks on different nodes only (docs/topology.md).</p>"
                        + _img(figures["topology"], "slowdown against the inter-node value")
                        + _table(topology_report.HEADER, topology_report.rows(topology)))
    if "targets" in figures:
        sections.append("<h2>Target networks</h2><p>The study's <code>targets</code>: each application's runtime "
                        "on this host, emulated on each target network (<code>loggp run --target</code>: each knob "
                        "set to target - host) and, where the baseline recorded a trace, predicted for it "
                        "(<code>loggp predict --target</code>); docs/targets.md.</p>"
                        + _img(figures["targets"], "runtime per target network, emulated and predicted")
                        + _table(target_report.HEADER, target_report.rows(targets)))
    if "linear" in figures:
        sections.append("<h2>Against the linear model T(m) = T0 + m/B</h2>"
                        "<p>o and L both raise the one-way start-up cost T0 (o by o_s + o_r); "
                        "G lowers the bulk bandwidth B. If an application depended on T0 "
                        "alone, the o and L curves would lie on top of each other; the gap "
                        "between them is the CPU time overhead steals, which latency leaves "
                        "free for overlap.</p>" + _img(figures["linear"], "linear model axes"))
    sections += _closing_sections(a, figures)
    contents, sections = report_contents.add(sections)
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>loggp study {html.escape(f.get('name', ''))}</title><style>{CSS}</style>"
            f"</head><body><h1>loggp study: {html.escape(f.get('name', ''))}</h1>"
            + _table(None, meta, "meta") + contents + "".join(sections) + "</body></html>")
    path = os.path.join(out_dir, "report.html")
    write_text_atomic(path, page)
    return path


def _write_tables(out_dir, a):
    """sensitivity.csv, slowdown.csv and runs.csv."""
    write_text_atomic(os.path.join(out_dir, "sensitivity.csv"),
                      _csv_text(SENS_HEADER, sensitivity_rows(a.curves)))
    slow_rows = [[c.benchmark, c.np, c.klass or "", c.knob, p.value, c.unit, p.n, p.median_s,
                  p.slowdown, _bound(p.low), _bound(p.high), p.model, p.injected]
                 for c in a.curves for p in c.points]
    write_text_atomic(os.path.join(out_dir, "slowdown.csv"), _csv_text(SLOW_HEADER, slow_rows))
    write_text_atomic(os.path.join(out_dir, "runs.csv"),
                      _csv_text(RUN_COLUMNS, [[r["round"] + 1 if k == "round" else r.get(k) for k in RUN_COLUMNS]
                                              for r in a.runs]))  # rounds counted from 1, as everywhere a user reads


def _figures(a, out_dir, colours, bench_colours, regimes):
    """The study's figures by name, Martin's figure set per application and the baseline's message profiles."""
    figures = {}
    if a.curves:
        if sensitivity_panels(a.curves):
            figures["sensitivity"] = _save_figure(sensitivity_figure(a.curves, colours), out_dir,
                                                  "sensitivity")
        for knob in analyze.KNOB_ORDER:
            cs = [c for c in a.curves if c.knob == knob]
            if cs:
                figures[knob] = _save_figure(knob_figure(cs, knob, colours), out_dir, f"knob_{knob}")
        if linear_model_panels(a.curves):
            figures["linear"] = _save_figure(linear_model_figure(a.curves, colours, regimes),
                                             out_dir, "linear_model")
    figures["drift"] = _save_figure(drift_figure(a.runs, bench_colours), out_dir, "drift")
    martin = {}  # Martin's figure set: four panels per application
    for i, label in enumerate(figure_set.applications(a.curves)):
        martin[label] = _save_figure(figure_set.figure(a.curves, label, plt), out_dir, f"figure_set_{i + 1}")
    profiles = figure_set.baseline_profile(a.runs, _label)
    if profiles:
        figures["t0_nb"] = _save_figure(figure_set.t0_nb_figure(profiles, regimes, plt), out_dir, "t0_nb")
    return figures, martin, profiles


def _glance_warning(a, calibration_path):
    """The warnings above the headline: a smoke test, the calibration's verdict, a noisy machine."""
    noisy = [(k, b["cv"]) for k, b in a.baselines.items() if b["cv"] is not None and b["cv"] > 0.1]
    warning = ""
    if noisy:
        worst = max(noisy, key=lambda kv: kv[1])
        warning = (f"<li><b>Noisy machine</b>: baseline runtimes vary by up to "
                   f"{100 * worst[1]:.0f} % (coefficient of variation, {html.escape(worst[0][0])}); "
                   f"trust only effects whose interval excludes 1, and give the study a larger budget "
                   f"or a quieter machine.</li>")
    judged = calib.verdict(calibration_path) if calibration_path else None
    if judged:  # the knobs' own verdict on this machine, before any figure that relies on them
        warning = (f"<li><b>Calibration here: {judged['verdict']}</b>. {html.escape(judged['sentence'])} "
                   f"(reasons: {html.escape(judged['verdicts_txt'])})</li>") + warning
    smoke = smoke_test_reasons(a.runs)
    if smoke:
        warning = (f"<li><b>A smoke test, not a measurement</b>: {html.escape('; '.join(smoke))}. Read it as a "
                   f"check that the study runs; its intervals and verdicts are not figures.</li>") + warning
    return warning


def _glance_sections(a, figures, warning):
    """At a glance, the sensitivity figure and table."""
    sections = []
    sections.append("<h2>At a glance</h2><ul>" + warning +
                    "".join(f"<li>{s}</li>" for s in _headline(a.curves)) + "</ul>")
    sections.append(_glance_table(a.curves))
    if "sensitivity" in figures:
        sections.append(_img(figures["sensitivity"], "sensitivity slopes"))
    sections.append("<h2>Sensitivity table</h2>" + _table(
        ["benchmark", "np", "class", "knob", "baseline runtime (s)",
         "slope against the armed baseline (%/unit) [95 % CI], precision reached", "R^2",
         "model slope", "max setting", "slowdown there [95 % CI]", "flags", "model vs measurement"],
        [[c.benchmark, c.np, c.klass or "", f"{c.knob} ({c.unit})", c.baseline_s,
          c.slope_text(),
          c.fit.r2 if c.fit else None, c.model_slope,
          f"{c.points[-1].value:g} {c.unit}",
          f"{c.points[-1].slowdown:.3f} {_interval(c.points[-1].low, c.points[-1].high)}",
          _flags_text(c) or "-", c.verdict] for c in a.curves]))
    return sections


def _knob_sections(a, figures):
    """Per knob: its figure and its points."""
    sections = []
    for knob in analyze.KNOB_ORDER:
        if knob not in figures:
            continue
        cs = [c for c in a.curves if c.knob == knob]
        sections.append(f"<h2>{html.escape(analyze.KNOB_TITLE[knob])}</h2>"
                        + _img(figures[knob], f"slowdown against {knob}"))
        sections.append(_table(
            ["benchmark", f"{knob} ({analyze.UNIT[knob]})", "runs", "median T (s)", "slowdown",
             "95 % CI", "model", "baseline + injected delay"],
            [[c.label, p.value, p.n, p.median_s, p.slowdown, _interval(p.low, p.high),
              p.model, p.injected] for c in cs for p in c.points]))
    return sections


def _prediction_section(results_dir, a):
    """The trace prediction beside the measured slope, or ""."""
    predicted = trace_prediction.rows(results_dir, a.runs, a.curves)
    if not predicted:
        return ""
    return (
        "<h2>Prediction from the baseline's trace</h2><p>The study recorded a trace in its baseline runs; "
        "<code>loggp predict</code> replays it under LogGOPS (docs/predict.md) at each setting the study "
        f"swept. Slopes in % per unit; a note where prediction and emulation differ by more than "
        f"{100 * trace_prediction.DISAGREE:.0f} %.</p>"
        + _table(["benchmark", "knob", "measured slope", "count x delta model", "trace prediction",
                  "prediction / measured", "note"], predicted))


def _figure_set_sections(figures, martin, profiles, regimes):
    """Martin's figure set and the T0 + n/B view."""
    sections = []
    if martin:
        sections.append("<h2>Martin's figure set</h2><p>Per application, slowdown against o, g, L and G on one "
                        "page, as in Martin's thesis: the measured points with their 95 % intervals, the "
                        "linear fit and the count x delta model (files figure_set_N.png, in this order).</p>"
                        + "".join(f"<h3>{html.escape(label)}</h3>" + _img(png, f"figure set of {label}")
                                  for label, png in martin.items()))
    if "t0_nb" in figures:
        regime_table = (_table(["application", "regime", "T0 (us)", "B (bytes/us)", "messages", "bytes"],
                               figure_set.regime_rows(profiles, regimes)) if regimes else
                        "<p>No calibration beside this study (calibration.json, or `loggp study report "
                        "--calibration`): message sizes only.</p>")
        sections.append("<h2>T0 + n/B: where the messages fall</h2><p>The baseline run's point-to-point "
                        "messages per size range (those the program posts; the messages inside collectives "
                        "are not counted here: the count x delta section estimates them), summed over ranks, "
                        "coloured by the calibrated protocol regime they fall in, "
                        "with the machine's T(m) = T0 + m/B of each regime (t0_nb.png).</p>"
                        + _img(figures["t0_nb"], "message sizes on T(m)") + regime_table)
    return sections


def _regions_section(a, out_dir):
    """Messages, bytes and delay inside and outside the kernel region, or ""."""
    regions = region_report.region_rows(a.runs, _setting)
    if not regions:
        return ""
    write_text_atomic(os.path.join(out_dir, "regions.csv"), _csv_text(region_report.HEADER, regions))
    return ("<h2>By region: kernel and outside</h2><p>Point-to-point messages the ranks "
            "posted (not those inside collectives, whose delay the injected column does include), "
            "bytes and the delay the knobs injected, inside the programs' kernel region (<code>loggp_hint"
            "(\"IN_KERNEL\", ...)</code> or <code>MPI_Pcontrol</code>; our kernels mark their "
            "timed section) and outside it, summed over ranks, median over a setting's runs. "
            "With the study's <code>scope = \"kernel\"</code> the knobs apply inside only, "
            "so the set-up's messages do not dilute a sensitivity (regions.csv).</p>"
            + _table(region_report.HEADER, regions))


def _closing_sections(a, figures):
    """Failed runs, notes, baseline stability, where the runs ran, the method."""
    sections = []
    sections.append("<h2>Runs that did not succeed</h2>" + (
        _table(["run", "benchmark", "np", "setting", "round", "status", "why", "stderr"],
               [[r["plan_id"], r["benchmark"], r["np"], _setting(r), r["round"] + 1,
                 r["status"], r["error"], r["stderr_path"]] for r in a.problems], "bad")
        if a.problems else "<p>None.</p>"))
    if a.notes:
        sections.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in a.notes) + "</ul>")
    sections.append("<h2>Baseline stability</h2>" + _img(figures["drift"], "baseline drift"))
    where = _nodes_table(a.runs)
    if where:
        sections.append("<h2>Where the runs ran</h2><p>The hosts (or the Slurm step's node list) of each run, "
                        "from its ranks' profiles; runs.csv has them per run.</p>" + where)
    sections.append(f"<h2>Method</h2><p class='note'>{html.escape(METHOD)}</p>"
                    # The models' formulas keep their lines: a paragraph would run them together.
                    f"<pre class='note'>{html.escape(models.__doc__.strip())}</pre>"
                    "<p class='note'>Files next to this page: sensitivity.csv, slowdown.csv, "
                    "runs.csv, and every figure as PNG and SVG.</p>")
    return sections


def _nodes_table(runs):
    """Node sets and how many runs of each benchmark ran on each, or "" when
    every run ran on one and the same host."""
    counts = {}
    for r in runs:
        counts.setdefault(r.get("host") or "?", {}).setdefault(r["benchmark"], 0)
        counts[r.get("host") or "?"][r["benchmark"]] += 1
    if len(counts) < 2 and not any("," in h for h in counts):
        return ""
    rows = [[nodes, sum(by.values()), ", ".join(f"{b} {n}" for b, n in sorted(by.items()))]
            for nodes, by in sorted(counts.items())]
    return _table(["nodes", "runs", "runs per benchmark"], rows)


def _glance_table(curves):
    """Benchmarks x knobs: slowdown at the largest setting, shaded by size,
    greyed when its interval includes 1 (not significant)."""
    knobs = [k for k in analyze.KNOB_ORDER if any(c.knob == k for c in curves)]
    labels = sorted({c.label for c in curves})
    if not knobs:
        return ""
    by = {(c.label, c.knob): c for c in curves}
    head = "".join(f"<th>{html.escape(k)} = {max(p.value for c in curves if c.knob == k for p in c.points):g}"
                   f" {analyze.UNIT[k]}</th>" for k in knobs)
    body = []
    for label in labels:
        cells = []
        for k in knobs:
            c = by.get((label, k))
            if c is None:
                cells.append("<td></td>")
                continue
            p = c.points[-1]
            significant = not (p.low <= 1.0 <= p.high)
            strength = min(1.0, max(0.0, (p.slowdown - 1) / 2)) if significant else 0.0
            colour = f"rgba(220,60,40,{0.12 + 0.6 * strength:.2f})" if significant else "#f4f4f4"
            style = f"background:{colour}" + ("" if significant else ";color:#888")
            cells.append(f'<td style="{style}">{p.slowdown:.2f}x<br><small>{_interval(p.low, p.high, 2)}'
                         f'</small></td>')
        body.append(f"<tr><td>{html.escape(label)}</td>{''.join(cells)}</tr>")
    return ("<p>Slowdown at each knob's largest setting, with its 95 % interval. Red: the "
            "interval excludes 1 (a real slowdown), the deeper the larger; grey: not "
            "distinguishable from noise.</p>"
            f"<table><thead><tr><th>benchmark</th>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table>")


def _pct(fraction):
    return "" if fraction is None else f"{100 * fraction:.1f} %"


def _label(run):
    """A run's application as the curves name it (analyze.Curve.label)."""
    c = f" class {run['class']}" if run.get("class") else ""
    return f"{run['benchmark']}{c} np={run['np']}"


def _setting(run):
    """The knobs a run moved: beyond zero, and beyond the armed step (the other knobs of a setting)."""
    if run.get("sweep") == ARMED_SWEEP:
        return "armed baseline (every knob at its smallest step)"
    knobs = json.loads(run["knobs"])
    moved = [f"{k}={v}" for k, v in knobs.items()
             if k not in ARMED or units.parse(k, v) not in (0.0, units.parse(k, ARMED[k]))]
    return " ".join(moved) or "baseline"


def _models_section(a):
    rows = []
    for key, base in sorted(a.baselines.items(), key=lambda kv: str(kv[0])):
        c = base["counts"]
        if c is None:
            rows.append([f"{key[0]} np={key[1]}", base["median_s"], _pct(base["cv"]),
                         "", "", "", "", "", ""])
            continue
        rows.append([f"{key[0]} np={key[1]}", base["median_s"], _pct(base["cv"]), c["sent_messages"],
                     c["received_messages"], c["sent_bytes"], c["dependent_messages"],
                     c["collective_messages_estimate"], c.get("engine") or ""])
    counts = _table(["benchmark", "baseline runtime (s)", "baseline CV", "sent msgs (busiest)", "received msgs (busiest)",
                     "bytes sent (busiest)", "dependent msgs", "of which collective (est.)",
                     "engine"], rows)
    compare = _table(["benchmark", "knob", "model count", "count the measurement implies",
                      "verdict"],
                     [[c.label, c.knob, c.profile_count, c.effective_count, c.verdict]
                      for c in a.curves])
    return ("<h2>Count x delta models</h2><p>Counts come from the profiles of the baseline runs. "
            "The model predicts added time = count x knob; the count the measurement implies "
            "is the measured slope turned back into a count. Where they differ by more than "
            f"{analyze.AGREEMENT:g}x the table says which way.</p>" + counts + compare)
