"""The study report's own figures (PNG and SVG): a panel per knob, the sensitivity
slopes, the linear model's axes, the baselines' drift, and Martin's figure set."""
import io
import os

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from loggp.knobs.files import write_text_atomic  # noqa: E402

from loggp.experiments import calibration_file as calib  # noqa: E402
from . import analyze, figure_set, jitter_report, target_report, topology_report  # noqa: E402
from .report_runs import run_label  # noqa: E402
from .report_tables import csv_text  # noqa: E402


def save_figure(fig, out_dir, stem):
    """Writes stem.png and stem.svg atomically; returns the PNG bytes."""
    images = {}
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=110, bbox_inches="tight")
        images[ext] = buf.getvalue()
        write_text_atomic(os.path.join(out_dir, f"{stem}.{ext}"), images[ext])
    plt.close(fig)
    return images["png"]


def colour_map(labels):
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


def study_figures(a, out_dir, colours, bench_colours, regimes):
    """The study's figures by name, Martin's figure set per application and the baseline's message profiles."""
    figures = {}
    if a.curves:
        if sensitivity_panels(a.curves):
            figures["sensitivity"] = save_figure(sensitivity_figure(a.curves, colours), out_dir,
                                                  "sensitivity")
        for knob in analyze.KNOB_ORDER:
            cs = [c for c in a.curves if c.knob == knob]
            if cs:
                figures[knob] = save_figure(knob_figure(cs, knob, colours), out_dir, f"knob_{knob}")
        if linear_model_panels(a.curves):
            figures["linear"] = save_figure(linear_model_figure(a.curves, colours, regimes),
                                             out_dir, "linear_model")
    figures["drift"] = save_figure(drift_figure(a.runs, bench_colours), out_dir, "drift")
    martin = {}  # Martin's figure set: four panels per application
    for i, label in enumerate(figure_set.applications(a.curves)):
        martin[label] = save_figure(figure_set.figure(a.curves, label, plt), out_dir, f"figure_set_{i + 1}")
    profiles = figure_set.baseline_profile(a.runs, run_label)
    if profiles:
        figures["t0_nb"] = save_figure(figure_set.t0_nb_figure(profiles, regimes, plt), out_dir, "t0_nb")
    return figures, martin, profiles


def side_study_figures(results_dir, a, out_dir, figures):
    """The curves of the study's jitter, topology and target-network settings (each None or
    empty without them), each written with its CSV file and its figure, added to `figures`."""
    jitter = jitter_report.jitter_curves(a.runs)
    if jitter:
        _side_study(out_dir, "jitter", jitter_report, jitter, figures)
    topology = topology_report.topology_curves(a.runs)
    if topology:
        _side_study(out_dir, "topology", topology_report, topology, figures)
    targets = target_report.target_bars(results_dir, a.runs, a.facts.get("study_path"))
    if targets:
        _side_study(out_dir, "targets", target_report, targets, figures)
    return jitter, topology, targets


def _side_study(out_dir, name, part, curves, figures):
    write_text_atomic(os.path.join(out_dir, f"{name}.csv"), csv_text(part.HEADER, part.rows(curves)))
    figures[name] = save_figure(part.figure(curves, plt), out_dir, name)
