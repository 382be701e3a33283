"""Studies to a stated precision: slopes from runs paired with the armed baseline of
their round, and rounds added past `repetitions` until each slope's interval is within
the precision or the budget is spent (resumable: the plan lives in the store)."""
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from loggp.experiments import precision
from loggp.harness import paired

LOGGP = [sys.executable, "-m", "loggp.cli"]


def run(round_, sweep, seconds, L_ns=0.0, status="ok"):
    return {"benchmark": "b", "np": 2, "class": "A", "round": round_, "sweep": sweep, "status": status,
            "runtime_seconds": seconds, "o_s_ns": 0.0, "o_r_ns": 0.0, "g_ns": 0.0, "G_ns_per_byte": 0.0,
            "L_ns": L_ns, "wall_seconds": 1.0}


def rounds(n, armed_cost_s, effect_s_per_ns, L_ns=10_000.0, noise=lambda r: 0.0):
    """n rounds of zero-knob, armed and L runs on a machine whose armed layer costs armed_cost_s."""
    out = []
    for r in range(n):
        drift = noise(r)
        out += [run(r, "baseline", 1.0 + drift),
                run(r, "armed", 1.0 + armed_cost_s + drift, L_ns=1.0),
                run(r, "L", 1.0 + armed_cost_s + effect_s_per_ns * (L_ns - 1.0) + drift, L_ns=L_ns)]
    return out


def test_the_armed_layers_cost_cancels_from_the_slope():
    # 10 us of L adds 0.01 s; the armed layer adds 0.05 s more on its own, in every armed run
    runs = rounds(8, armed_cost_s=0.05, effect_s_per_ns=1e-6)
    s = paired.slope(runs, "L", 1.0)
    assert s.estimate == pytest.approx(1e-6) and s.bounded
    # against the zero-knob baseline the layer's cost would land on the knob: six times the effect
    no_armed = [r for r in runs if r["sweep"] != "armed"]
    assert paired.slope(no_armed, "L", 1.0).estimate == pytest.approx(6e-6, rel=1e-3)


def test_drift_shared_by_a_pair_cancels_and_slowdowns_stay_against_zero_knobs():
    runs = rounds(8, 0.05, 1e-6, noise=lambda r: 0.3 * r)   # the machine slows round by round
    s = paired.slope(runs, "L", 1.0)
    assert s.estimate == pytest.approx(1e-6, rel=1e-6) and s.half_width < 1e-9
    slow = paired.slowdown(runs, "L", "L_ns", 10_000.0)
    # the unperturbed program is the reference: the layer's own cost is part of the slowdown
    assert slow.low > 1.0 and slow.estimate == pytest.approx(1 + 0.06 / (1 + 0.3 * 3.5), rel=0.05)


def test_a_slope_is_settled_only_when_resolved_and_within_the_precision():
    goal = precision.Precision(0.05)
    tight = precision.Interval(1.0, 0.96, 1.04, 8)
    assert paired.settled(tight, goal) and paired.shortfall(tight, goal) == pytest.approx(0.8)
    assert not paired.settled(precision.Interval(1.0, 0.9, 1.1, 8), goal)
    # holding zero: no effect resolved, never settled however narrow
    assert not paired.settled(precision.Interval(0.001, -0.0001, 0.002, 40), goal)
    # too few pairs for an interval
    assert not paired.settled(precision.median_interval([1.0] * (precision.MIN_SAMPLES - 1)), goal)
    assert paired.shortfall(None, goal) == float("inf")


def test_a_failed_run_breaks_its_pair_and_only_its_pair():
    runs = rounds(8, 0.0, 1e-6)
    runs[1]["status"] = "failed"    # round 0's armed run: its L pairs with the zero-knob run instead
    runs[5]["status"] = "timeout"   # round 1's L run: no pair
    assert len(paired.slope_pairs(runs, "L")) == 7


STUDY = """
name = "precise"
repetitions = 2
np = 1
timeout = "30s"
precision = "5%"
budget = "{budget}"

[launcher]
kind = "template"
template = "{{program}}"

[sweep]
L = ["20us"]

[[benchmark]]
name = "fake"
command = ["{{fake}}", "S"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
success_regex = 'Verification\\s*=\\s*SUCCESSFUL'
"""


def progress_line_seconds(text):
    """"12s", "3m05s" -> seconds."""
    m = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
    return 60 * int(m.group(1) or 0) + int(m.group(2))


def planned_rounds(results):
    conn = sqlite3.connect(os.path.join(results, "results.sqlite"))
    try:
        return [r for r, in conn.execute("SELECT DISTINCT round FROM plan ORDER BY round")], \
            conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        conn.close()


def test_rounds_are_added_until_the_slope_is_precise_and_resume_under_a_larger_budget(write_study, tmp_path):
    results = str(tmp_path / "res")
    path = write_study(STUDY.format(budget="2min"))
    # a budget with room for no added round: the two planned rounds only, and a word why
    first = subprocess.run(LOGGP + ["study", "run", path, "--out", results, "--no-report", "--budget", "0.1s"],
                           capture_output=True, text=True, timeout=240)
    assert first.returncode == 0, first.stderr
    assert planned_rounds(results) == ([0, 1], 6)
    assert "not yet within 5% of themselves" in first.stderr and "budget (0.1s)" in first.stderr
    # resumed with the file's budget: rounds are added until the L slope has its interval
    # (a deterministic benchmark: its first bounded interval is already exact)
    done = subprocess.run(LOGGP + ["study", "run", path, "--out", results, "--no-report"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "added for precision 5%" in done.stderr and "fake np=1: L" in done.stderr
    assert planned_rounds(results) == (list(range(precision.MIN_SAMPLES)), 3 * precision.MIN_SAMPLES)
    assert "not yet within" not in done.stderr
    # one count and one clock across the added rounds: [7/9] ... [9/9], [10/12] ...
    counted = [re.match(r"\[ *(\d+)/(\d+)\] .*\| elapsed (\S+) \|", line) for line in done.stderr.splitlines()]
    counted = [m for m in counted if m]
    assert [int(m.group(1)) for m in counted] == list(range(7, 3 * precision.MIN_SAMPLES + 1)), done.stderr
    assert all(int(m.group(1)) <= int(m.group(2)) for m in counted)
    elapsed = [progress_line_seconds(m.group(3)) for m in counted]
    assert elapsed == sorted(elapsed), done.stderr


@pytest.mark.parametrize("flag,value,named", [("--precision", "0%", "'0%'"), ("--budget", "5", "'5'")])
def test_bad_precision_or_budget_on_the_command_line_exits_2(write_study, tmp_path, flag, value, named):
    proc = subprocess.run(LOGGP + ["study", "run", write_study(STUDY.format(budget="1min")), "--out",
                                   str(tmp_path / "r"), flag, value], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and flag in proc.stderr and named in proc.stderr, proc.stderr
    assert not (tmp_path / "r" / "results.sqlite").exists()
