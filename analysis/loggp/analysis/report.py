"""The study report: plots (PNG and SVG), CSV tables and one self-contained
HTML page with the images embedded. Written to RESULTS/report/.

`write` puts it together; the figures are in report_figures, the CSV files in
report_tables, the page's opening in report_glance and its other sections in
report_sections."""
import datetime
import html
import os

from loggp.knobs.files import write_text_atomic

from loggp.experiments import calibration_file as calib
from . import analyze, report_contents
from .report_figures import colour_map, side_study_figures, study_figures
from .report_glance import glance_sections, glance_warning
from .report_html import CSS, html_table
from .report_sections import (closing_sections, figure_set_sections, jitter_section, knob_sections,
                              linear_model_section, models_section, prediction_section, regions_section,
                              targets_section, topology_section)
from .report_tables import write_tables

REPORT_DIR = "report"


def write(results_dir, calibration_path=None):
    """Writes RESULTS/report/ (its CSV files, figures and report.html) and returns the page's path;
    the calibration defaults to RESULTS/calibration.json when there is one."""
    if calibration_path is None:
        candidate = os.path.join(results_dir, "calibration.json")
        calibration_path = candidate if os.path.isfile(candidate) else None
    regimes = calib.load(calibration_path) if calibration_path else None
    a = analyze.analyse_dir(results_dir)
    out_dir = os.path.join(results_dir, REPORT_DIR)
    os.makedirs(out_dir, exist_ok=True)
    colours = colour_map([c.label for c in a.curves])
    bench_colours = {c.benchmark: colours[c.label] for c in a.curves}

    write_tables(out_dir, a)
    figures, martin, profiles = study_figures(a, out_dir, colours, bench_colours, regimes)
    jitter, topology, targets = side_study_figures(results_dir, a, out_dir, figures)
    facts = _facts(a, calibration_path)
    sections = (glance_sections(a, figures, glance_warning(a, calibration_path))
                + knob_sections(a, figures)
                + [models_section(a), prediction_section(results_dir, a), jitter_section(figures, jitter)]
                + figure_set_sections(figures, martin, profiles, regimes)
                + [regions_section(a, out_dir), topology_section(figures, topology),
                   targets_section(figures, targets), linear_model_section(figures)]
                + closing_sections(a, figures))
    path = os.path.join(out_dir, "report.html")
    write_text_atomic(path, _page(a.facts.get("name", ""), facts, sections))
    return path


def _facts(a, calibration_path):
    """The table under the title: the study, where and with what it ran, its runs, the calibration."""
    f = a.facts
    ok = sum(1 for r in a.runs if r["status"] == "ok")
    return [["study", f.get("name", "")], ["study file", f.get("study_path", "")],
            ["host", f.get("host", "")], ["MPI", f.get("mpi_version", "")],
            ["loggp", f.get("loggp_version", "")],
            ["runs", f"{len(a.runs)} recorded, {ok} ok, {len(a.problems)} not ok"],
            ["calibration", calibration_path or "none (T0/B axes show increments only)"],
            ["report written", datetime.datetime.now(datetime.timezone.utc)
             .strftime("%Y-%m-%d %H:%M UTC")]]


def _page(name, facts, sections):
    """The self-contained page: title, the facts, the contents and every section."""
    contents, sections = report_contents.add(sections)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'>"
            f"<title>loggp study {html.escape(name)}</title><style>{CSS}</style>"
            f"</head><body><h1>loggp study: {html.escape(name)}</h1>"
            + html_table(None, facts, "meta") + contents + "".join(sections) + "</body></html>")
