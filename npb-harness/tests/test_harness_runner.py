"""The study runner end to end, through the real `loggp run` (launcher
template "{program}") with a fake MPI-free benchmark of known behaviour."""
import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from loggp import cli
from loggp.harness import study as study_cli
from loggp.harness import studyfile

LOGGP = [sys.executable, "-m", "loggp.cli"]

MIXED = """
name = "mixed"
repetitions = 1
np = 1
timeout = "30s"
budget = "0.1s"      # no room for rounds added for precision: the planned runs alone

[launcher]
kind = "template"
template = "{program}"

[sweep]
o = ["2us"]
L = ["20us"]
g = ["5us"]

[[benchmark]]
name = "fake"
command = ["{fake}", "S"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
success_regex = 'Verification\\s*=\\s*SUCCESSFUL'

[[benchmark]]
name = "flaky"
command = ["{fake}", "S", "--fail-when-L-over", "10000", "--hang-when-g-over", "1000"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
success_regex = 'Verification\\s*=\\s*SUCCESSFUL'
timeout = "5s"
"""


def expected_seconds(r):
    # fake_npb.py: T = 0.2 + 1e-9 * (1000 (o_s + o_r) + 4e6 G + 200 L + 100 g)
    return 0.2 + 1e-9 * (1000 * (r["o_s_ns"] + r["o_r_ns"]) + 4e6 * r["G_ns_per_byte"]
                         + 200 * r["L_ns"] + 100 * r["g_ns"])


def rows(results):
    conn = sqlite3.connect(os.path.join(results, "results.sqlite"))
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        conn.close()


def test_study_runs_records_failures_and_goes_on(write_study, tmp_path):
    results = str(tmp_path / "res")
    proc = subprocess.run(LOGGP + ["study", "run", write_study(MIXED), "--out", results],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1, proc.stderr        # some runs were not ok
    runs = rows(results)
    assert len(runs) == 2 * 5   # zero-knob and armed baselines, three knob settings
    assert len({r["plan_id"] for r in runs}) == len(runs)
    by = {(r["benchmark"], r["sweep"]): [] for r in runs}
    for r in runs:
        by[(r["benchmark"], r["sweep"])].append(r)
    for r in runs:
        assert os.path.isfile(os.path.join(results, r["stdout_path"]))
        assert os.path.isfile(os.path.join(results, r["stderr_path"]))
        os_text = {"o": "2us", "baseline": "0ns"}.get(r["sweep"], "1ns")  # the others armed
        assert r["command"].count(f"--os {os_text}") == 1
        assert r["host"] and r["mpi_version"] is not None and r["loggp_version"]
    for r in by[("fake", "o")] + by[("fake", "L")] + by[("fake", "baseline")] + by[("flaky", "o")]:
        assert r["status"] == "ok" and r["verified"] == 1 and r["exit_status"] == 0
        # The knobs reached the program: its runtime follows them.
        assert r["runtime_seconds"] == pytest.approx(expected_seconds(r), abs=2e-6)
        assert '"size": 2' in r["profile"] and '"rank": 1' in r["profile"]
    assert by[("fake", "o")][0]["o_s_ns"] == 2000 and by[("fake", "o")][0]["o_r_ns"] == 2000
    for r in by[("flaky", "L")]:
        assert r["status"] == "unverified" and r["exit_status"] == 1 and r["verified"] == 0
    for r in by[("flaky", "g")]:
        assert r["status"] == "timeout" and r["exit_status"] is None
        assert r["wall_seconds"] < 20 and "5 s timeout" in r["error"]
    # Progress lines with an ETA, and the failures said on stderr.
    assert "[10/10]" in proc.stderr and "ETA" in proc.stderr
    assert "timeout: killed after the 5 s timeout" in proc.stderr
    report = proc.stdout.strip().splitlines()[-1]
    assert report.endswith("report.html") and os.path.isfile(report)
    with open(os.path.join(results, "report", "sensitivity.csv")) as f:
        sens = {(r["benchmark"], r["knob"]): r for r in csv.DictReader(f)}
    # 2 x 1000 messages x 1 us on a 0.2 s run: +1 % per us of o. One round is too few for an
    # interval: the estimate is there, but no sensitivity is claimed
    assert float(sens[("fake", "o")]["slope_estimate_pct_per_unit"]) == pytest.approx(1.0, rel=0.01)
    assert float(sens[("fake", "L")]["slope_estimate_pct_per_unit"]) == pytest.approx(0.1, rel=0.02)
    assert sens[("fake", "o")]["slope_resolved"] == "no" and sens[("fake", "o")]["slope_pct_per_unit"] == ""

    status = subprocess.run(LOGGP + ["study", "status", results], capture_output=True,
                            text=True, timeout=60)
    assert status.returncode == 0
    assert "10/10 runs done, 0 pending" in status.stdout
    assert status.stdout.count("timeout:") == 1 and status.stdout.count("unverified:") == 1


RESUME = """
name = "resume"
repetitions = 3
np = 1
budget = "0.1s"
[launcher]
kind = "template"
template = "{program}"
[sweep]
o = ["1us", "2us"]
[[benchmark]]
name = "fake"
command = ["{fake}", "S", "--sleep", "0.15"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
"""


def _count(results):
    try:
        return len(rows(results))
    except sqlite3.Error:
        return 0   # store not created yet


def test_resume_after_kill_9_loses_and_duplicates_nothing(write_study, tmp_path):
    path = write_study(RESUME)
    results = str(tmp_path / "res")
    cmd = LOGGP + ["study", "run", path, "--out", results, "--no-report"]
    seen_before_kill = []
    for target in (2, 5):
        runner = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while _count(results) < target and time.monotonic() < deadline and runner.poll() is None:
            time.sleep(0.02)
        time.sleep(0.07 * target)     # land somewhere inside the next run
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        seen_before_kill.append(_count(results))
        assert seen_before_kill[-1] >= target
    assert seen_before_kill[-1] < 12, "the study finished before it could be interrupted"
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    runs = rows(results)
    assert len(runs) == 12
    assert sorted(r["plan_id"] for r in runs) == list(range(1, 13))
    assert all(r["status"] == "ok" for r in runs)
    runs_dir = os.path.join(results, "runs")
    assert sorted(os.listdir(runs_dir)) == sorted(str(i) for i in range(1, 13))
    for r in runs:
        with open(os.path.join(results, r["stdout_path"])) as f:
            assert "Time in seconds" in f.read()
    # The resumed study keeps the order it was planned in.
    conn = sqlite3.connect(os.path.join(results, "results.sqlite"))
    planned = [p for p, in conn.execute("SELECT id FROM plan ORDER BY round, position")]
    conn.close()
    assert [r["plan_id"] for r in runs] == planned


def test_changed_study_file_is_not_mixed_into_old_results(write_study, tmp_path):
    text = RESUME.replace("repetitions = 3", "repetitions = 1")
    path = write_study(text)
    results = str(tmp_path / "res")
    assert cli.command("study").main(["run", path, "--out", results, "--no-report"]) == 0
    write_study(text.replace('"2us"]', '"4us"]'))
    assert cli.command("study").main(["run", path, "--out", results, "--no-report"]) == 2
    assert len(rows(results)) == 4


def test_bad_usage_exits_2_with_a_message(tmp_path, capsys, write_study):
    assert cli.command("study").main([]) == 2
    assert cli.command("study").main(["frobnicate"]) == 2
    assert cli.command("study").main(["run", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err
    assert cli.command("study").main(["status", str(tmp_path)]) == 2
    assert "not a study results folder" in capsys.readouterr().err
    assert cli.command("study").main(["report", str(tmp_path)]) == 2
    bad = write_study(RESUME.replace('"1us"', '"1 lightyear"'))
    assert cli.command("study").main(["run", bad]) == 2
    err = capsys.readouterr().err
    assert "1 lightyear" in err and ":9:" in err


def test_default_study_is_valid():
    study = studyfile.load(study_cli.DEFAULT_STUDY, skip_missing=False)
    assert {b.nps for b in study.benchmarks} == {(2,)}
    # every knob the main job varies, each over values that are all non-zero
    assert set(study.sweep) == {"o", "g", "G", "L"}
    assert all(values and all(number > 0 for _, number in values) for values in study.sweep.values())
    assert all(b.kind == "kernel" for b in study.benchmarks)


def test_command_passes_all_five_knobs_profile_launcher_and_hostfile(write_study, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("node1\nnode2\n")
    path = write_study("""
        np = 4
        [launcher]
        kind = "srun"
        hostfile = "hosts"
        [sweep]
        G = ["2us/KiB"]
        [[benchmark]]
        command = "{fake} S --sleep 0"
        runtime_regex = '(x)'
        """)
    study = studyfile.load(path)
    s = next(s for s in study.settings() if s.sweep == "G")
    plan_row = {"np": s.np, "class": s.klass, "knobs": __import__("json").dumps(dict(s.knobs))}
    from loggp.harness import runner
    cmd = runner.build_command(study, study.benchmarks[0], plan_row, "/p")
    i = cmd.index("run")
    # the other knobs armed at their smallest step, as the study's armed baseline
    assert cmd[i:] == ["run", "-n", "4", "--os", "1ns", "--or", "1ns", "--g", "1ns",
                       "--G", "2us/KiB", "--L", "1ns", "--scope", "all", "--profile", "/p", "--launcher", "srun",
                       "--hostfile", str(hosts), "--", study.benchmarks[0].argv_template[0],
                       "S", "--sleep", "0"]


def test_a_study_scoped_to_the_kernel_passes_its_scope_and_changes_its_digest(write_study):
    text = """
        {scope}
        [sweep]
        L = ["10us"]
        [[benchmark]]
        command = "{{fake}} S --sleep 0"
        runtime_regex = '(x)'
        """
    scoped = studyfile.load(write_study(text.format(scope='scope = "kernel"')))
    plain = studyfile.load(write_study(text.format(scope="")))
    from loggp.harness import runner
    s = next(s for s in scoped.settings() if s.sweep == "L")
    row = {"np": s.np, "class": s.klass, "knobs": __import__("json").dumps(dict(s.knobs))}
    cmd = runner.build_command(scoped, scoped.benchmarks[0], row, "/p")
    assert cmd[cmd.index("--scope") + 1] == "kernel"
    assert scoped.digest() != plain.digest()  # resuming with another scope is refused
    with pytest.raises(studyfile.StudyError, match="'scope' must be all or kernel"):
        studyfile.load(write_study(text.format(scope='scope = "solver"')))


def test_a_kernel_scoped_study_can_arm_the_knobs_outside_the_region(write_study):
    """outside = "armed" is `loggp run --outside armed`: the baseline outside the region
    shares the armed layer's cost. Every kernel-scoped run says what it leaves outside, so
    a LOGGP_OUTSIDE in the user's environment cannot leak into a study."""
    text = """
        scope = "{scope}"
        {outside}
        [sweep]
        L = ["10us"]
        [[benchmark]]
        command = "{{fake}} S --sleep 0"
        runtime_regex = '(x)'
        """
    from loggp.harness import runner

    def command(study):
        s = next(s for s in study.settings() if s.sweep == "L")
        row = {"np": s.np, "class": s.klass, "knobs": __import__("json").dumps(dict(s.knobs))}
        return runner.build_command(study, study.benchmarks[0], row, "/p")
    armed = studyfile.load(write_study(text.format(scope="kernel", outside='outside = "armed"')))
    zero = studyfile.load(write_study(text.format(scope="kernel", outside="")))
    assert armed.outside == "armed" and zero.outside == "zero"
    assert command(armed)[command(armed).index("--outside") + 1] == "armed"
    assert command(zero)[command(zero).index("--outside") + 1] == "zero"
    assert "--outside" not in command(studyfile.load(write_study(text.format(scope="all", outside=""))))
    assert armed.plan_digest() != zero.plan_digest()  # resuming with the other baseline is refused
    with pytest.raises(studyfile.StudyError, match=r":2: 'outside': 'nothing' is not .*zero .*or armed"):
        studyfile.load(write_study(text.format(scope="kernel", outside='outside = "nothing"')))
    with pytest.raises(studyfile.StudyError, match=r":2: 'outside': 'armed' applies only with the kernel scope"):
        studyfile.load(write_study(text.format(scope="all", outside='outside = "armed"')))
    with pytest.raises(studyfile.StudyError, match=":2: 'outside' must be str, got 1"):
        studyfile.load(write_study(text.format(scope="kernel", outside="outside = 1")))


def test_second_runner_on_the_same_results_is_refused(write_study, tmp_path, capsys):
    import fcntl
    results = tmp_path / "res"
    results.mkdir()
    with open(results / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert cli.command("study").main(["run", write_study(RESUME), "--out", str(results)]) == 2
    assert "another `loggp study run` is working on" in capsys.readouterr().err
    assert not (results / "results.sqlite").exists()
