"""The study report's sections after its opening: each knob's curve, the count x delta
models, the trace's prediction, Martin's figure set, the regions, the runs that failed,
where the runs ran and the method."""
import html
import os

from loggp.knobs.files import write_text_atomic

from . import analyze, figure_set, jitter_report, models, region_report, target_report, topology_report
from . import trace_prediction
from .report_html import html_img, html_table, interval_text, pct
from .report_runs import run_setting
from .report_tables import csv_text


METHOD = ("Every setting runs once per round beside two baselines of the same benchmark, in the middle of "
          "its runs: the program with every knob at 0 (the unperturbed program) and the armed baseline, "
          "every knob at its smallest step (1 ns, 0.001 ns/B), which pays the layer's own cost as every "
          "setting does. Slowdown is the median over rounds of T(knob) / T(0) of the same round, T being "
          "the benchmark's own timed section (NPB's \"Time in seconds\"), not LogGP's start-up cost T0, "
          "which the linear model section uses. Sensitivity is the median over rounds of each setting's "
          "added time over the armed run of its round, per unit of knob, in percent of T(0): the layer's "
          "own cost cancels. Intervals are 95 % nonparametric intervals of those medians (order "
          "statistics; below 6 rounds there is none). Rounds are added past the study's repetitions "
          "while a slope's interval is wider than the study's precision and its budget lasts. A slope "
          "whose interval holds zero is no sensitivity: the report says \"no effect resolved, below X\" "
          "and compares no model with it. The R^2, jumps and plateaus come from a least-squares line "
          "through the slowdowns: a jump is a step three times steeper than the overall slope and above "
          "the noise; a plateau a step adding under a quarter of the predicted rise. The model agrees "
          f"when the measured slope is within a factor of {analyze.AGREEMENT:g} of the model's "
          f"(measured/model between {1 / analyze.AGREEMENT:.2f} and {analyze.AGREEMENT:g}).")


def knob_sections(a, figures):
    """Per knob: its figure and its points."""
    sections = []
    for knob in analyze.KNOB_ORDER:
        if knob not in figures:
            continue
        cs = [c for c in a.curves if c.knob == knob]
        sections.append(f"<h2>{html.escape(analyze.KNOB_TITLE[knob])}</h2>"
                        + html_img(figures[knob], f"slowdown against {knob}"))
        sections.append(html_table(
            ["benchmark", f"{knob} ({analyze.UNIT[knob]})", "runs", "median T (s)", "slowdown",
             "95 % CI", "model", "baseline + injected delay"],
            [[c.label, p.value, p.n, p.median_s, p.slowdown, interval_text(p.low, p.high),
              p.model, p.injected] for c in cs for p in c.points]))
    return sections


def models_section(a):
    rows = []
    for key, base in sorted(a.baselines.items(), key=lambda kv: str(kv[0])):
        c = base["counts"]
        if c is None:
            rows.append([f"{key[0]} np={key[1]}", base["median_s"], pct(base["cv"]),
                         "", "", "", "", "", ""])
            continue
        rows.append([f"{key[0]} np={key[1]}", base["median_s"], pct(base["cv"]), c["sent_messages"],
                     c["received_messages"], c["sent_bytes"], c["dependent_messages"],
                     c["collective_messages_estimate"], c.get("engine") or ""])
    counts = html_table(["benchmark", "baseline runtime (s)", "baseline CV", "sent msgs (busiest)", "received msgs (busiest)",
                     "bytes sent (busiest)", "dependent msgs", "of which collective (est.)",
                     "engine"], rows)
    compare = html_table(["benchmark", "knob", "model count", "count the measurement implies",
                      "verdict"],
                     [[c.label, c.knob, c.profile_count, c.effective_count, c.verdict]
                      for c in a.curves])
    return ("<h2>Count x delta models</h2><p>Counts come from the profiles of the baseline runs. "
            "The model predicts added time = count x knob; the count the measurement implies "
            "is the measured slope turned back into a count. Where they differ by more than "
            f"{analyze.AGREEMENT:g}x the table says which way.</p>" + counts + compare)


def prediction_section(results_dir, a):
    """The trace prediction beside the measured slope, or ""."""
    predicted = trace_prediction.rows(results_dir, a.runs, a.curves)
    if not predicted:
        return ""
    return (
        "<h2>Prediction from the baseline's trace</h2><p>The study recorded a trace in its baseline runs; "
        "<code>loggp predict</code> replays it under LogGOPS (docs/predict.md) at each setting the study "
        f"swept. Slopes in % per unit; a note where prediction and emulation differ by more than "
        f"{100 * trace_prediction.DISAGREE:.0f} %.</p>"
        + html_table(["benchmark", "knob", "measured slope", "count x delta model", "trace prediction",
                  "prediction / measured", "note"], predicted))


def jitter_section(figures, jitter):
    """Slowdown against L's jitter at a fixed mean, or ""."""
    if "jitter" not in figures:
        return ""
    return ("<h2>Latency jitter at a fixed mean</h2>" + html_img(figures["jitter"], "slowdown against jitter")
            + html_table(jitter_report.HEADER, jitter_report.rows(jitter, words=True)))


def figure_set_sections(figures, martin, profiles, regimes):
    """Martin's figure set and the T0 + n/B view."""
    sections = []
    if martin:
        sections.append("<h2>Martin's figure set</h2><p>Per application, slowdown against o, g, L and G on one "
                        "page, as in Martin's thesis: the measured points with their 95 % intervals, the "
                        "linear fit and the count x delta model (files figure_set_N.png, in this order).</p>"
                        + "".join(f"<h3>{html.escape(label)}</h3>" + html_img(png, f"figure set of {label}")
                                  for label, png in martin.items()))
    if "t0_nb" in figures:
        regime_table = (html_table(["application", "regime", "T0 (us)", "B (bytes/us)", "messages", "bytes"],
                               figure_set.regime_rows(profiles, regimes)) if regimes else
                        "<p>No calibration beside this study (calibration.json, or `loggp study report "
                        "--calibration`): message sizes only.</p>")
        sections.append("<h2>T0 + n/B: where the messages fall</h2><p>The baseline run's point-to-point "
                        "messages per size range (those the program posts; the messages inside collectives "
                        "are not counted here: the count x delta section estimates them), summed over ranks, "
                        "coloured by the calibrated protocol regime they fall in, "
                        "with the machine's T(m) = T0 + m/B of each regime (t0_nb.png).</p>"
                        + html_img(figures["t0_nb"], "message sizes on T(m)") + regime_table)
    return sections


def regions_section(a, out_dir):
    """Messages, bytes and delay inside and outside the kernel region, or ""."""
    regions = region_report.region_rows(a.runs, run_setting)
    if not regions:
        return ""
    write_text_atomic(os.path.join(out_dir, "regions.csv"), csv_text(region_report.HEADER, regions))
    return ("<h2>By region: kernel and outside</h2><p>Point-to-point messages the ranks "
            "posted (not those inside collectives, whose delay the injected column does include), "
            "bytes and the delay the knobs injected, inside the programs' kernel region (<code>loggp_hint"
            "(\"IN_KERNEL\", ...)</code> or <code>MPI_Pcontrol</code>; our kernels mark their "
            "timed section) and outside it, summed over ranks, median over a setting's runs. "
            "With the study's <code>scope = \"kernel\"</code> the knobs apply inside only, "
            "so the set-up's messages do not dilute a sensitivity (regions.csv).</p>"
            + html_table(region_report.HEADER, regions))


def topology_section(figures, topology):
    """Slowdown against the value between nodes, or ""."""
    if "topology" not in figures:
        return ""
    return ("<h2>Latency and per-byte gap between nodes</h2><p>The study's [topology] table: the "
            "value swept applies to pairs of ranks on different nodes only (docs/topology.md).</p>"
            + html_img(figures["topology"], "slowdown against the inter-node value")
            + html_table(topology_report.HEADER, topology_report.rows(topology, words=True)))


def targets_section(figures, targets):
    """Runtime per target network, emulated and predicted, or ""."""
    if "targets" not in figures:
        return ""
    return ("<h2>Target networks</h2><p>The study's <code>targets</code>: each application's runtime "
            "on this host, emulated on each target network (<code>loggp run --target</code>: each knob "
            "set to target - host) and, where the baseline recorded a trace, predicted for it "
            "(<code>loggp predict --target</code>); docs/targets.md.</p>"
            + html_img(figures["targets"], "runtime per target network, emulated and predicted")
            + html_table(target_report.HEADER, target_report.rows(targets, words=True)))


def linear_model_section(figures):
    """Slowdown on the linear model's axes, or ""."""
    if "linear" not in figures:
        return ""
    return ("<h2>Against the linear model T(m) = T0 + m/B</h2>"
            "<p>o and L both raise the one-way start-up cost T0 (o by o_s + o_r); "
            "G lowers the bulk bandwidth B. If an application depended on T0 "
            "alone, the o and L curves would lie on top of each other; the gap "
            "between them is the CPU time overhead steals, which latency leaves "
            "free for overlap.</p>" + html_img(figures["linear"], "linear model axes"))


def closing_sections(a, figures):
    """Failed runs, notes, baseline stability, where the runs ran, the method."""
    sections = []
    sections.append("<h2>Runs that did not succeed</h2>" + (
        html_table(["run", "benchmark", "np", "setting", "round", "status", "why", "stderr"],
               [[r["plan_id"], r["benchmark"], r["np"], run_setting(r), r["round"] + 1,
                 r["status"], r["error"], r["stderr_path"]] for r in a.problems], "bad")
        if a.problems else "<p>None.</p>"))
    if a.notes:
        sections.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in a.notes) + "</ul>")
    sections.append("<h2>Baseline stability</h2>" + html_img(figures["drift"], "baseline drift"))
    where = nodes_table(a.runs)
    if where:
        sections.append("<h2>Where the runs ran</h2><p>The hosts (or the Slurm step's node list) of each run, "
                        "from its ranks' profiles; runs.csv has them per run.</p>" + where)
    sections.append(f"<h2>Method</h2><p class='note'>{html.escape(METHOD)}</p>"
                    # The models' formulas keep their lines: a paragraph would run them together.
                    f"<pre class='note'>{html.escape(models.__doc__.strip())}</pre>"
                    "<p class='note'>Files next to this page: sensitivity.csv, slowdown.csv, "
                    "runs.csv, and every figure as PNG and SVG.</p>")
    return sections


def nodes_table(runs):
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
    return html_table(["nodes", "runs", "runs per benchmark"], rows)
