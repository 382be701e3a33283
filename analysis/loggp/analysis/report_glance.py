"""The study report's opening: the warnings a reader must see first, a few sentences on
what slowed down, the slowdowns at a glance and the sensitivity table."""
import html

from loggp.experiments import calibration_file as calib
from . import analyze
from .report_html import html_img, html_table, interval_text
from .report_tables import flags_text


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


def glance_warning(a, calibration_path):
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


def glance_sections(a, figures, warning):
    """At a glance, the sensitivity figure and table."""
    sections = []
    sections.append("<h2>At a glance</h2><ul>" + warning +
                    "".join(f"<li>{s}</li>" for s in _headline(a.curves)) + "</ul>")
    sections.append(_glance_table(a.curves))
    if "sensitivity" in figures:
        sections.append(html_img(figures["sensitivity"], "sensitivity slopes"))
    sections.append("<h2>Sensitivity table</h2>" + html_table(
        ["benchmark", "np", "class", "knob", "baseline runtime (s)",
         "slope against the armed baseline (%/unit) [95 % CI], precision reached", "R^2",
         "model slope", "max setting", "slowdown there [95 % CI]", "flags", "model vs measurement"],
        [[c.benchmark, c.np, c.klass or "", f"{c.knob} ({c.unit})", c.baseline_s,
          c.slope_text(),
          c.fit.r2 if c.fit else None, c.model_slope,
          f"{c.points[-1].value:g} {c.unit}",
          f"{c.points[-1].slowdown:.3f} {interval_text(c.points[-1].low, c.points[-1].high)}",
          flags_text(c) or "-", c.verdict] for c in a.curves]))
    return sections


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
            cells.append(f'<td style="{style}">{p.slowdown:.2f}x<br><small>{interval_text(p.low, p.high, 2)}'
                         f'</small></td>')
        body.append(f"<tr><td>{html.escape(label)}</td>{''.join(cells)}</tr>")
    return ("<p>Slowdown at each knob's largest setting, with its 95 % interval. Red: the "
            "interval excludes 1 (a real slowdown), the deeper the larger; grey: not "
            "distinguishable from noise.</p>"
            f"<table><thead><tr><th>benchmark</th>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table>")
