"""What a user reads: rounds counted from 1 in every file, absolute paths,
one oversubscription note."""
import csv
import json
import os

from tests.testkit import installed, run

STUDY = '''name = "rounds"
repetitions = 2
np = 2
order = "interleave"

[[benchmark]]
command = ["false"]
runtime_regex = "t=(\\\\S+)"
'''


def loggp(*args, **kw):
    return run([installed("loggp"), *args], **kw)


def test_rounds_count_from_one_and_paths_are_absolute(tmp_path):
    (tmp_path / "s.toml").write_text(STUDY)
    proc = loggp("study", "run", "s.toml", "--results", "r", "--no-report", cwd=tmp_path, timeout=300)
    assert "round 1/2" in proc.stderr and "round 2/2" in proc.stderr
    results = tmp_path / "r"
    rounds = sorted(json.loads(p.read_text())["round"] for p in results.rglob("run.json"))
    assert rounds == [1, 2], "run.json counts rounds as the progress line does"

    status = loggp("study", "status", "r", cwd=tmp_path)
    assert "round 1:" in status.stdout and f"({results}/" in status.stdout, status.stdout

    report = loggp("study", "report", "r", cwd=tmp_path, timeout=300)
    assert report.returncode == 0, report.stderr
    path = report.stdout.strip().splitlines()[-1]
    assert os.path.isabs(path) and os.path.isfile(path)
    assert "A smoke test, not a measurement" in open(path).read(), "no run succeeded: no measurement"
    modes = {f"{p.relative_to(results)}": oct(p.stat().st_mode & 0o777) for p in results.rglob("*") if p.is_file()}
    assert len(set(modes.values())) == 1, modes
    runs_csv = next(results.rglob("runs.csv"))
    with open(runs_csv) as f:
        assert sorted(int(r["round"]) for r in csv.DictReader(f)) == [1, 2]


def test_one_oversubscription_note():
    cores = len(os.sched_getaffinity(0))
    proc = loggp("run", "-n", str(cores + 1), "--dry-run", "--", "true")
    assert proc.returncode == 0
    assert proc.stderr.count("ranks share cores") == 1
    assert f"{cores + 1} ranks on {cores} core" in proc.stderr
    fits = loggp("run", "-n", str(cores), "--dry-run", "--", "true")
    assert "ranks share cores" not in fits.stderr
    quiet = loggp("run", "-n", str(cores + 1), "--quiet", "--dry-run", "--", "true")
    assert "ranks share cores" not in quiet.stderr


def test_status_shows_the_run_in_progress(tmp_path):
    import subprocess
    import time
    (tmp_path / "s.toml").write_text(STUDY.replace('["false"]', '["sleep", "4"]').replace("repetitions = 2",
                                                                                         "repetitions = 1"))
    study = subprocess.Popen([installed("loggp"), "study", "run", "s.toml", "--results", "r", "--no-report"],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "in progress" not in seen:
            if (tmp_path / "r" / "results.sqlite").exists():
                seen = loggp("study", "status", "r", cwd=tmp_path).stdout
            time.sleep(0.3)
        assert "in progress: #1 sleep np=2 baseline round 1, for " in seen, seen
    finally:
        study.wait(timeout=60)
    assert "in progress" not in loggp("study", "status", "r", cwd=tmp_path).stdout


def test_the_report_says_when_a_study_is_a_smoke_test():
    from loggp.analysis.report import smoke_test_reasons

    def runs(rounds, klass):
        return [{"round": r, "status": "ok", "class": klass} for r in range(rounds)]
    assert smoke_test_reasons(runs(5, "A")) == []
    assert smoke_test_reasons(runs(2, "A")) == ["2 rounds with successful runs (an interval needs at least 3)"]
    only_small = smoke_test_reasons(runs(5, "S") + runs(5, "W"))
    assert len(only_small) == 1 and only_small[0].startswith("only class W/S problems")
    assert smoke_test_reasons(runs(5, "S") + runs(5, "A")) == []


def test_calibration_table_columns_never_run_together():
    from loggp.experiments.calibrate import report_text
    knob = {"unit": "ns/B", "pass": False, "slope": 1.0, "intercept": 0.0, "r2": 1.0, "max_abs_err": 0.1,
            "values": [0, 0.5], "measures": {"G": {"measured": [-0.0003426, 0.4999]}},
            "crosstalk": {"L": {"moved": [-0.0003426, 1.0]}}, "failures": []}
    text = report_text({"knobs": {"G": knob}, "pass": False})
    rows = [line.split() for line in text.splitlines()[1:4]]
    assert rows == [["set", "0", "0.5"], ["G", "-0.0003426", "0.4999"], ["~L", "-0.000343", "1"]]


def test_a_calibration_miss_says_why_in_words():
    from loggp.experiments.calibrate import miss_reason
    assert "the armed layer's own cost" in miss_reason(0.2, 1.0)
    assert "noise" in miss_reason(3.0, 10.0) and "rerun" in miss_reason(3.0, 10.0)
    assert "not fully applied" in miss_reason(-3.0, 10.0)


def test_report_words_define_their_terms():
    from loggp.analysis import analyze, models, report
    assert "(below)" not in models.__doc__
    assert f"within a factor of {analyze.AGREEMENT:g}" in report.METHOD
    assert "T0_s" not in report.SENS_HEADER and "baseline_runtime_s" in report.SENS_HEADER


def test_the_calibration_table_shows_what_g_should_read_beside_what_it_read():
    # LogP: g is not added to the natural interval, so a set 1 us reads about 0.29 and passes
    from loggp.experiments.calibrate import report_text
    knob = {"unit": "us", "pass": True, "slope": 0.9, "intercept": -0.7, "r2": 1.0, "max_abs_err": 0.0098,
            "values": [0, 1, 10], "measures": {"g": {"measured": [-0.0052, 0.2909, 9.281],
                                                      "expected": [0.0, 0.281, 9.281]}},
            "crosstalk": {}, "failures": []}
    rows = [line.split() for line in report_text({"knobs": {"g": knob}, "pass": True}).splitlines()[1:4]]
    assert rows == [["set", "0", "1", "10"], ["expected", "0", "0.281", "9.281"], ["g", "-0.0052", "0.2909", "9.281"]]
