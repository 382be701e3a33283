"""One exit-code rule for `loggp calibrate` and `loggp main`,
figure panels that show what failed, a report without empty panels, a probe that records its
knobs."""
import importlib.util
import json
import os

import numpy as np
import pytest

from loggp import main as mainmod
from loggp.experiments import calibrate as cal
from loggp.shim import machine_load
from tests.testkit import ROOT

_spec = importlib.util.spec_from_file_location("exp_synthetic", ROOT / "experiments" / "tests" / "exp_synthetic.py")
exp_synthetic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exp_synthetic)


def synthetic_runner(**apparatus):
    rng = np.random.default_rng(5)

    def runner(knob_sets, probe_args):
        rounds = 8 if len(knob_sets) > 1 else None
        return [exp_synthetic.synthetic_probe(cal.CAL_SIZES, knobs=k, rng=rng, rounds=rounds, **apparatus)
                for k in knob_sets]
    return runner


def calibrate_main(argv, runner):
    """`loggp calibrate` on a synthetic apparatus, without this machine's load or detours."""
    return cal.main(argv, runner=runner, load_watch=machine_load.LoadWatch(sampler=lambda: 0.0),
                    detours=lambda: None)


# ------------------------------------------------------------------ 1. one exit-code rule

def main_job_with(monkeypatch, tmp_path, **apparatus):
    """`loggp main`'s job on a synthetic apparatus and a stand-in study."""
    from loggp.harness import study

    real_calibrate = cal.main
    monkeypatch.setattr(cal, "main", lambda argv: real_calibrate(argv + ["--no-baseline"],
                                                                   runner=synthetic_runner(**apparatus),
                                                                   load_watch=machine_load.LoadWatch(lambda: 0.0),
                                                                   detours=lambda: None))
    report = tmp_path / "report.html"
    report.write_text("<html></html>")
    monkeypatch.setattr(study, "run_default", lambda out, write_report, calibration: str(report))
    return mainmod.main_job(tmp_path / "main", skip_calibration=False)


def test_a_missed_goal_exits_3_in_calibrate_and_in_main(monkeypatch, tmp_path, capsys):
    half_gap = {"scale": {"g": 0.5}}
    rc_cal = calibrate_main(["--quick", "--knobs", "g", "--out", str(tmp_path / "cal"), "--no-baseline"],
                            synthetic_runner(**half_gap))
    rc_main = main_job_with(monkeypatch, tmp_path, **half_gap)
    captured = capsys.readouterr()
    assert (rc_cal, rc_main) == (3, 3)
    assert "MISSED: g = 10 us: g read" in captured.out
    summary = [line for line in captured.err.splitlines() if "missed the accuracy goal" in line]
    assert len(summary) == 1 and "g" in summary[0] and "exit 3" in summary[0], captured.err
    assert "verdicts.txt" in summary[0]
    # the closing sentence, from the results folder, on the console
    sentence = json.loads((tmp_path / "main" / "calibration" / "calibration.json").read_text())["sentence"]
    assert f"calibration: {sentence}" in captured.out and "miss their goal (g at g = 1 us" in sentence
    assert "report: " in captured.out, "the study still ran and its report is named"

    # resumed: the calibration is not rerun, its verdict still sets the exit status
    monkeypatch.setattr(cal, "main", lambda argv: pytest.fail("a finished calibration is not rerun"))
    assert mainmod.main_job(tmp_path / "main", skip_calibration=False) == 3


def test_a_healthy_apparatus_exits_0_in_calibrate_and_in_main(monkeypatch, tmp_path, capsys):
    rc_cal = calibrate_main(["--quick", "--knobs", "g", "--out", str(tmp_path / "cal"), "--no-baseline"],
                            synthetic_runner())
    rc_main = main_job_with(monkeypatch, tmp_path)
    captured = capsys.readouterr()
    assert (rc_cal, rc_main) == (0, 0), captured.out + captured.err
    assert "missed the accuracy goal" not in captured.err


def test_a_failed_calibration_run_is_an_error_not_a_miss(monkeypatch, tmp_path, capsys):
    def broken(knob_sets, probe_args):
        raise cal.CalibrationError("the probe died")
    real_calibrate = cal.main
    monkeypatch.setattr(cal, "main", lambda argv: real_calibrate(argv, runner=broken, detours=lambda: None))
    assert mainmod.main_job(tmp_path / "main", skip_calibration=False) == 1
    assert "calibration failed (exit 1)" in capsys.readouterr().err


def test_both_helps_state_the_rule():
    for text in (cal.parser().format_help(), mainmod.MainCommand().parser().format_help()):
        flat = " ".join(text.split())
        assert "Exit status" in flat and "3 the" in flat and "missed its accuracy goal" in flat, text


# ------------------------------------------------------------------ 2. figure panels

def calibrated(sweeps, **apparatus):
    summary, _, _ = cal.calibrate(sweeps, synthetic_runner(**apparatus), [], None, log=lambda *_: None)
    summary["sentence"] = cal.closing_sentence(summary)
    return summary


def test_a_missed_cross_talk_of_another_unit_is_drawn_and_named():
    # G (ns/B) leaking into o_r (us): the old error panel drew only ns/B cross-talk under G.
    summary = calibrated({"G": [0, 0.5, 2]}, leak={("G", "o_r"): 0.3})
    k = summary["knobs"]["G"]
    assert k["crosstalk"]["o_r"]["verdicts"] == ["missed", "missed"]
    panel = cal.panel_contents("G", k)
    assert panel["title"].startswith("G: missed") and "o_r cross-talk missed" in panel["title"]
    drawn = {s["label"]: s for s in panel["errors"]}
    o_r = drawn["o_r (cross-talk)"]
    assert o_r["verdicts"][-1] == "missed", o_r  # 0.6 us at G = 2 ns/B against a 0.02 us tolerance
    # a missed reading's whole interval lies outside the goal band
    assert all(low > 1 or high < -1 for low, high, v in zip(o_r["low"], o_r["high"], o_r["verdicts"]) if v == "missed")
    # the readings that met stay inside it
    assert drawn["G"]["verdicts"] == ["met", "met"] and all(-1 <= y <= 1 for y in drawn["G"]["y"])


def test_a_missed_measure_is_drawn_outside_its_band():
    summary = calibrated({"G": [0, 0.5, 2]}, scale={"G": 0.5})
    panel = cal.panel_contents("G", summary["knobs"]["G"])
    assert panel["title"].startswith("G: missed (G missed")
    g = next(s for s in panel["errors"] if s["label"] == "G")
    assert g["verdicts"][-1] == "missed" and g["high"][-1] < -1, g
    ok = cal.panel_contents("G", calibrated({"G": [0, 0.5, 2]})["knobs"]["G"])
    assert ok["title"] == "G: met" and not any("missed" in s["verdicts"] for s in ok["errors"])


def test_the_figure_is_drawn_from_the_panel_data(tmp_path):
    summary = calibrated({"G": [0, 0.5, 2], "L": [0, 1, 10]}, leak={("G", "o_r"): 0.3})
    cal.plot_calibration(summary, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    svg = (tmp_path / "c.svg").read_text()
    assert "o_r cross-talk missed" in svg and "missed" in svg


# ------------------------------------------------------------------ 3. the report

def analysis_helpers():
    spec = importlib.util.spec_from_file_location(
        "analysis_study", ROOT / "analysis" / "tests" / "test_analysis_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_one_knob_study_draws_no_empty_panel_and_no_empty_header(tmp_path):
    import re

    from loggp.analysis import analyze, report, report_figures
    helpers = analysis_helpers()
    runs = [r for r in helpers.synthetic_runs() if r["sweep"] in ("baseline", "L")]
    results = tmp_path / "res"
    helpers.write_store(str(results), runs)
    curves = analyze.analyse_dir(str(results)).curves
    assert {c.knob for c in curves} == {"L"}

    assert report_figures.sensitivity_panels(curves) == ["L"]
    assert report_figures.linear_model_panels(curves) == ["T0"], "no B panel: G was not swept"
    colours = report_figures.colour_map([c.label for c in curves])
    for figure in (report_figures.sensitivity_figure(curves, colours),
                   report_figures.linear_model_figure(curves, colours, None)):
        assert len(figure.axes) == 1
        assert all(ax.lines or ax.patches for ax in figure.axes), "every panel draws something"

    page = open(report.write(str(results))).read()
    assert not re.search(r"<tr>(<th>\s*</th>)+</tr>", page), "a header row of empty cells"
    assert "<th></th>" not in page
    assert 'class="meta"><tbody>' in page, "the study's key/value table has no header row"
    drawn = set(os.listdir(results / "report"))
    assert {"knob_L.png", "sensitivity.png", "linear_model.png"} <= drawn and "knob_o.png" not in drawn



# ------------------------------------------------------------------ 4. the probe records its knobs

def probe(tmp_path, name, *knob_flags):
    from tests.testkit import installed, run
    out = tmp_path / name
    proc = run([installed("loggp"), "probe", *knob_flags, "--sizes", "8,64,16384,65536", "--time-limit", "0.2s",
                "--json", out], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_the_probe_records_the_knobs_in_force_and_fit_reads_them(tmp_path, capsys):
    from loggp.experiments import fit
    base, knobbed = probe(tmp_path, "base.json"), probe(tmp_path, "L10.json", "--L", "10us")
    recorded = json.loads(knobbed.read_text())
    assert recorded["knobs"] == {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "10us"}
    assert "libloggp.so" in recorded["knobs_source"]
    plain = json.loads(base.read_text())
    assert plain["knobs"]["L"] == "0ns" and plain["knobs_source"].startswith("no libloggp.so preloaded")

    assert fit.main([str(knobbed), "--baseline", str(base), "--json", str(tmp_path / "c.json")]) == 0
    assert "L=10us" in capsys.readouterr().out
    assert json.loads((tmp_path / "c.json").read_text())["knobs"]["L_ns"] == 10000.0


def synthetic_file(tmp_path, name, knobs=None, record=None):
    data = exp_synthetic.synthetic_probe(cal.CAL_SIZES, knobs=knobs)
    if record is not None:
        data["knobs"] = record
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


ZERO = {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "0ns"}


@pytest.mark.parametrize("record, flags, message", [
    (None, [], "does not record them"),                              # an older probe: still refused
    (None, [], "--L 0 for a run without knobs"),
    ({**ZERO, "L": "10us"}, ["--L", "5us"], "differ from those"),     # the flags contradict the record
    ({**ZERO, "L": "ten"}, [], "'ten'"),                               # a bad record names its value
])
def test_fit_refuses_when_the_knobs_are_unknown_or_contradicted(tmp_path, capsys, record, flags, message):
    from loggp.experiments import fit
    base = synthetic_file(tmp_path, "base.json", record=ZERO)
    knobbed = synthetic_file(tmp_path, "k.json", knobs={"L": 10.0}, record=record)
    assert fit.main([knobbed, "--baseline", base, *flags]) == 2
    assert message in capsys.readouterr().err


def test_fit_refuses_a_baseline_that_ran_with_knobs(tmp_path, capsys):
    from loggp.experiments import fit
    base = synthetic_file(tmp_path, "base.json", knobs={"L": 10.0}, record={**ZERO, "L": "10us"})
    knobbed = synthetic_file(tmp_path, "k.json", knobs={"L": 10.0}, record={**ZERO, "L": "10us"})
    assert fit.main([knobbed, "--baseline", base]) == 2
    assert "a baseline is a run without knobs" in capsys.readouterr().err
    # the flags still serve a file that records nothing
    older = synthetic_file(tmp_path, "older.json", knobs={"L": 10.0})
    assert fit.main([older, "--baseline", synthetic_file(tmp_path, "b0.json"), "--L", "10us"]) == 0


@pytest.mark.parametrize("sweeps", [{"L": [0, 1, 10]}, {"G": [0, 0.5, 2], "L": [0, 1, 10]}])
def test_the_figure_title_fits_however_few_knobs(sweeps):
    from loggp.experiments import calibration_output
    fig = calibration_output.calibration_figure(calibrated(sweeps))
    title = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
    assert 0 <= title.x0 and title.x1 <= fig.bbox.width, (title, fig.bbox)
    assert title.y1 <= fig.bbox.height
