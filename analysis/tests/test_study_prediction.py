"""A study with trace = true: its baseline runs keep a trace, the others none,
and the report puts the trace's prediction beside the measured slope and the
count x delta model."""
import os
import sqlite3
import subprocess
import sys

import pytest

from loggp.harness import studyfile

LOGGP = [sys.executable, "-m", "loggp.cli"]

STUDY = """
name = "traced"
repetitions = 2
np = 2
class = "S"
timeout = "60s"
trace = true
budget = "0.1s"     # the planned rounds only: this checks the report's shape, not a figure

[sweep]
L = ["100us", "200us"]

[[benchmark]]
kernel = "cg"
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    path = folder / "traced.toml"
    path.write_text(STUDY)
    out = folder / "results"
    proc = subprocess.run(LOGGP + ["study", "run", str(path), "--out", str(out)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_only_baseline_runs_keep_a_trace(results):
    conn = sqlite3.connect(results / "results.sqlite")
    runs = conn.execute("SELECT plan_id, sweep, status FROM runs").fetchall()
    conn.close()
    assert {s for _, s, _ in runs} == {"baseline", "armed", "L"} and all(st == "ok" for _, _, st in runs)
    for plan_id, sweep, _ in runs:
        traced = (results / "runs" / str(plan_id) / "trace" / "trace.0.bin").is_file()
        assert traced == (sweep == "baseline"), (plan_id, sweep)
        command = (results / "runs" / str(plan_id) / "run.json").read_text()
        assert ("--trace" in command) == (sweep == "baseline")


def test_the_report_shows_the_prediction_beside_measurement_and_model(results):
    page = (results / "report" / "report.html").read_text()
    assert "Prediction from the baseline&#x27;s trace" in page or "Prediction from the baseline's trace" in page
    section = page.split("<h2>Prediction from the baseline", 1)[1].split("<h2>", 1)[0]
    assert "cg class S np=2" in section and "<td>L</td>" in section, section


def test_trace_must_be_true_or_false(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(STUDY.replace("trace = true", 'trace = "yes"'))
    with pytest.raises(studyfile.StudyError, match="'trace' must be true or false"):
        studyfile.load(str(path))
    path.write_text(STUDY)
    assert studyfile.load(str(path)).trace
    path.write_text(STUDY.replace("trace = true\n", ""))
    assert not studyfile.load(str(path)).trace
