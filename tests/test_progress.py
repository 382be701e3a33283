"""Long work on a terminal shows one live line with the ETA; in a log or a pipe,
a line per step as before. Both modes, as a user meets them: `loggp study run`
and `loggp calibrate` (and so `loggp main`, which runs both) in a pty and in a pipe."""
import fcntl
import os
import pty
import re
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from loggp.knobs import progress

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "npb-harness" / "tests" / "fake_npb.py"
STUDY = f"""
name = "progress"
repetitions = 2
np = 1
timeout = "30s"
budget = "1s"

[launcher]
kind = "template"
template = "{{program}}"

[sweep]
L = ["20us"]

[[benchmark]]
name = "fake"
command = ["{FAKE}", "S"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
success_regex = 'Verification\\s*=\\s*SUCCESSFUL'

[[benchmark]]
name = "flaky"
command = ["{FAKE}", "S", "--fail-when-L-over", "10000"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
success_regex = 'Verification\\s*=\\s*SUCCESSFUL'
"""
RUN_LINE = re.compile(r"^\[ *\d+/\d+\] round \d+")


def in_pty(cmd):
    """(exit status, everything the command wrote to its terminal)."""
    master, slave = pty.openpty()
    # a terminal as wide as a usual window: 160 columns, 40 rows
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer has gone
                return
            if not data:
                return
            chunks.append(data)
    reader = threading.Thread(target=drain)
    reader.start()
    status = proc.wait(timeout=240)
    reader.join(timeout=30)
    os.close(master)
    return status, b"".join(chunks).decode(errors="replace")


def study_command(tmp_path):
    study = tmp_path / "progress.toml"
    study.write_text(STUDY)
    return [sys.executable, "-m", "loggp.cli", "study", "run", str(study), "--results", str(tmp_path / "res")]


def runs_recorded(tmp_path):
    conn = sqlite3.connect(tmp_path / "res" / "results.sqlite")
    try:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        conn.close()


def test_a_study_in_a_pipe_prints_a_line_per_run(tmp_path):
    proc = subprocess.run(study_command(tmp_path), capture_output=True, text=True, timeout=240)
    lines = proc.stderr.splitlines()
    runs = [line for line in lines if RUN_LINE.match(line)]
    assert len(runs) == runs_recorded(tmp_path) >= 8, proc.stderr
    assert all(" | elapsed " in line and " | ETA " in line for line in runs)
    assert "\r" not in proc.stderr
    assert any("unverified: verification failed" in line for line in lines), proc.stderr


def test_a_study_on_a_terminal_shows_one_live_line_with_the_eta(tmp_path):
    status, text = in_pty(study_command(tmp_path))
    assert status == 1, text  # the flaky runs are not ok
    assert "\r" in text, "the live line is redrawn in place"
    lines = text.replace("\r\n", "\n").split("\n")
    assert not [line for line in lines if RUN_LINE.match(line)], "no line per run on a terminal"
    redraws = [part for line in lines for part in line.split("\r") if part.startswith("[")]
    assert redraws and any(re.search(r"\| ETA (\d+s|\d+m\d\ds)", part) for part in redraws), redraws
    assert re.search(r"^\[(\d+)/\1\] round \d+.* np=1 .*\| elapsed ", redraws[-1]), redraws[-1]
    assert len(redraws) >= runs_recorded(tmp_path)
    # a run not ok keeps a line of its own above the live one
    assert any("unverified: verification failed" in line for line in lines), text


def calibrate_command(tmp_path):
    # the real command, with a probe that is a synthetic apparatus (no MPI), so it takes a second
    code = ("import sys; sys.path.insert(0, %r); from loggp.experiments import calibrate as cal; "
            "from loggp.shim import machine_load; "
            "from test_experiments_calibrate import Clock, fake_runner; clock = Clock(); "
            "sys.exit(cal.main(['--quick', '--out', %r], runner=fake_runner(clock=clock), clock=clock, "
            "load_watch=machine_load.LoadWatch(sampler=lambda: 0.0), detours=lambda: None))"
            % (str(ROOT / "experiments" / "tests"), str(tmp_path / "cal")))
    return [sys.executable, "-c", code]


def test_calibrate_in_a_pipe_prints_its_lines_and_on_a_terminal_one_live_line(tmp_path):
    proc = subprocess.run(calibrate_command(tmp_path), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "side by side in one run" in proc.stdout and "\r" not in proc.stdout + proc.stderr
    status, text = in_pty(calibrate_command(tmp_path))
    assert status == 0, text
    lines = text.replace("\r\n", "\n").split("\n")
    assert not [line for line in lines if line.startswith("  L = ")], "no line per run on a terminal"
    redraws = [part for line in lines for part in line.split("\r") if part.startswith("[")]
    assert redraws and re.search(r"^\[(\d+)/\1\] .* \| elapsed .* \| ETA ", redraws[-1]), redraws
    # what the runs found stays, as lines
    assert "machine noise: two zero-knob sets" in text and "wrote " in text


def test_duration_reads_as_people_write_it():
    assert [progress.duration(s) for s in (0, 59.4, 60, 185, 3600, 7620)] == \
        ["0s", "59s", "1m00s", "3m05s", "1h00m", "2h07m"]


class Clock:
    """A clock the test moves: elapsed times and ETAs do not depend on the machine."""
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def run_rows(progress, clock, rounds, reps=2, seconds=10.0):
    """Runs of benchmark b, one per round given, each taking `seconds` on the clock."""
    for i, r in enumerate(rounds):
        plan_row = {"benchmark": "b", "np": 2, "round": r, "knobs": '{"o_s": "0ns", "L": "10us"}'}
        progress.starting(plan_row, ["b"] * (len(rounds) - i), reps)
        clock.now += seconds
        progress.finished({"benchmark": "b", "wall_seconds": seconds, "status": "ok"})


def test_rounds_added_for_precision_keep_the_clock_and_the_count_and_the_eta_covers_them():
    from io import StringIO
    from loggp.harness import runner
    clock, out = Clock(), StringIO()
    line = runner.Progress(4, 0, {}, out, live=False, clock=clock)
    line.beyond = 300.0          # the precision budget, before any round is added
    run_rows(line, clock, [0, 0, 1, 1])
    line.add(2)                  # a round added for precision: two more runs
    line.beyond = 60.0           # what the budget leaves after it
    run_rows(line, clock, [2, 2])
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[1/4] round 1/2 b np=2 L=10us | elapsed 0s | ETA ? (+ up to 5m00s")
    assert lines[3].endswith("| elapsed 30s | ETA 10s (+ up to 5m00s of rounds added for precision)")
    # counted on, not started over: elapsed 40 s, and the ETA is the added round's two runs
    assert lines[4] == ("[5/6] round 3 (added) b np=2 L=10us | elapsed 40s | "
                        "ETA 20s (+ up to 1m00s of rounds added for precision)")
    assert lines[5].startswith("[6/6] round 3 (added)") and "| elapsed 50s | ETA 10s" in lines[5]


def test_the_live_line_counts_added_rounds_on_with_one_clock():
    from io import StringIO
    from loggp.harness import runner
    clock, out = Clock(), StringIO()
    line = runner.Progress(2, 0, {}, out, live=True, clock=clock)
    run_rows(line, clock, [0, 1])
    line.add(2)
    run_rows(line, clock, [2, 2])
    assert line.live.bar.total == 4 and line.live.bar.n == 4
    last = out.getvalue().split("\r")[-1]
    assert last.startswith("[3/4] round 3 (added)") and "| elapsed 30s | ETA 10s" in last, last
    line.close()
