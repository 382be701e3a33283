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
    proc = loggp("study", "run", "s.toml", "--out", "r", "--no-report", cwd=tmp_path, timeout=300)
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
    study = subprocess.Popen([installed("loggp"), "study", "run", "s.toml", "--out", "r", "--no-report"],
                             cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = ""
        # watched for as long as the study runs, however slowly this machine starts it
        while study.poll() is None and "in progress" not in seen:
            if (tmp_path / "r" / "results.sqlite").exists():
                seen = loggp("study", "status", "r", cwd=tmp_path).stdout
            time.sleep(0.3)
        assert "in progress: #1 sleep np=2 baseline round 1, for " in seen, seen
    finally:
        study.wait(timeout=60)
    assert "in progress" not in loggp("study", "status", "r", cwd=tmp_path).stdout


def test_the_report_says_when_a_study_is_a_smoke_test():
    from loggp.analysis.report_glance import smoke_test_reasons

    def runs(rounds, klass):
        return [{"round": r, "status": "ok", "class": klass} for r in range(rounds)]
    assert smoke_test_reasons(runs(5, "A")) == []
    assert smoke_test_reasons(runs(2, "A")) == ["2 rounds with successful runs (an interval needs at least 3)"]
    only_small = smoke_test_reasons(runs(5, "S") + runs(5, "W"))
    assert len(only_small) == 1 and only_small[0].startswith("only class W/S problems")
    assert smoke_test_reasons(runs(5, "S") + runs(5, "A")) == []


def calibration_summary(knob, unit, values, measures, crosstalk=None):
    """A calibration summary of one knob as `loggp calibrate` writes it; each series gives
    its readings as (estimate, low, high) and its expectations."""
    def series(role, readings, expected):
        return {"role": role, "unit": unit if role == "primary" else "us", "set": values, "expected": expected,
                "tolerance": [0.02] * len(values), "measured": [r[0] for r in readings],
                "low": [r[1] for r in readings], "high": [r[2] for r in readings], "pairs": [16] * len(values),
                "verdicts": ["met"] * len(values), "reasons": ["inside"] * len(values)}
    k = {"unit": unit, "values": values, "runs": 1, "verdict": "met", "slope": None,
         "points": [{"set": v, "verdict": "met"} for v in values], "reasons": [],
         "measures": {p: series("primary", r, e) for p, (r, e) in measures.items()},
         "crosstalk": {p: series("crosstalk", r, [0.0] * len(values)) for p, r in (crosstalk or {}).items()}}
    return {"knobs": {knob: k}, "verdict": "met", "noise": {}, "armed_cost": {}, "goal": {"text": "g"}}


def table_rows(text, knob):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{knob} ["))
    return [line.split() for line in lines[start + 1:start + 4]]


def test_calibration_table_columns_never_run_together():
    from loggp.experiments.calibrate import report_text
    summary = calibration_summary("G", "ns/B", [0.5, 2.0],
                                  {"G": ([(0.4999, 0.4990, 0.5003), (-0.00034, -0.0009, 0.0001)], [0.499, 1.999])},
                                  {"L": [(-123.4567, -124.0, -123.0), (1.0, 0.99, 1.01)]})
    assert table_rows(report_text(summary), "G") == [["set", "0.5", "2"], ["G", "+0.4999±0.0009", "-0.0003±0.0006"],
                                                     ["~L", "-123.457±0.543", "+1.000±0.010"]]


def test_a_calibration_verdict_says_why_in_words():
    from loggp.experiments.calibration_output import advice
    assert "armed layer's own cost (which cancels)" in advice("L", "o_r", "crosstalk", "missed", True)
    assert "rerun" in advice("L", "L", "primary", "missed", True)
    assert "not fully applied" in advice("L", "L", "primary", "missed", False)
    assert "noise" in advice("L", "L", "primary", "unresolved", False) and "--budget" in advice(
        "L", "L", "primary", "unresolved", False)
    assert advice("L", "L", "primary", "met", False) == ""
    assert "did not repeat" in advice("L", "o_r", "crosstalk", "unresolved", True, repeated=False)


def test_report_words_define_their_terms():
    from loggp.analysis import analyze, models, report_sections, report_tables
    assert "(below)" not in models.__doc__
    assert f"within a factor of {analyze.AGREEMENT:g}" in report_sections.METHOD
    assert "T0_s" not in report_tables.SENS_HEADER and "baseline_runtime_s" in report_tables.SENS_HEADER


def test_the_calibration_table_shows_what_g_should_read_beside_what_it_read():
    # LogP: g is not added to the natural interval, so a set 1 us reads about 0.28
    from loggp.experiments.calibrate import report_text
    summary = calibration_summary("g", "us", [1.0, 10.0],
                                  {"g": ([(0.2909, 0.28, 0.30), (9.281, 9.27, 9.29)], [0.281, 9.281])})
    assert table_rows(report_text(summary), "g") == [["set", "1", "10"], ["expected", "+0.281", "+9.281"],
                                                     ["g", "+0.291±0.011", "+9.281±0.011"]]
