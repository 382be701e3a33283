"""The report's target networks (analysis/loggp/analysis/target_report.py): runtime per
target, emulated and predicted, from hand-made runs and from a real small study."""
import json
import sqlite3
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from loggp.analysis import target_report  # noqa: E402

ZERO = {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "0ns"}


def run(sweep, seconds, target=None, status="ok", plan_id=0):
    knobs = dict(ZERO, **({"target": target} if target else {}))
    return {"plan_id": plan_id, "benchmark": "cg", "np": 2, "class": "S", "sweep": sweep, "status": status,
            "runtime_seconds": seconds, "knobs": json.dumps(knobs)}


RUNS = ([run("baseline", 2.0) for _ in range(3)]
        + [run("target", 3.0, "now"), run("target", 3.2, "now"), run("target", 9.0, "100baset")]
        + [run("target", 99.0, "100baset", status="timeout"), run("L", 2.5)])


def test_each_target_has_its_median_runtime_and_slowdown(tmp_path):
    bars = target_report.target_bars(str(tmp_path), RUNS)
    b = bars[("cg", 2, "S")]
    assert b["baseline_s"] == 2.0
    points = {p["target"]: p for p in b["targets"]}
    assert points["now"]["emulated_s"] == pytest.approx(3.1) and points["now"]["runs"] == 2
    assert points["100baset"]["runs"] == 1 and points["100baset"]["slowdown"] == pytest.approx(4.5)
    assert all(p["predicted_s"] is None and "no traced baseline" in p["note"] for p in points.values())
    assert target_report.rows(bars)[0][:5] == ["cg", 2, "S", "now", 2]
    low, high = target_report.HEADER.index("low"), target_report.HEADER.index("high")
    single = [row for row in target_report.rows(bars, words=True) if row[3] == "100baset"][0]
    assert (single[low], single[high]) == ("1 run over 3 baseline runs: a single run gives no interval", None)
    assert points["now"]["low"] < points["now"]["slowdown"] < points["now"]["high"]


def test_the_figure_has_a_bar_per_target_and_the_host(tmp_path):
    fig = target_report.figure(target_report.target_bars(str(tmp_path), RUNS), plt)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["host", "now", "100baset"]
    fig.savefig(tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_no_target_runs_give_no_bars(tmp_path):
    assert target_report.target_bars(str(tmp_path), [run("baseline", 2.0), run("L", 2.5)]) == {}


STUDY = """
name = "targets"
repetitions = 1
np = 2
class = "S"
timeout = "120s"
trace = true
targets = ["100baset", "slow.toml"]

[[benchmark]]
kernel = "cg"
"""

# start-up times only: the host keeps its own o and g, so no host is faster than these targets
SLOW = 'name = "slow"\nsource = "a test"\n[[regime]]\nbytes = [1, "inf"]\nT0 = "400us"\nG = "100ns/B"\n'


def test_a_study_runs_each_target_and_reports_emulated_and_predicted(tmp_path):
    path = tmp_path / "targets.toml"
    path.write_text(STUDY)
    (tmp_path / "slow.toml").write_text(SLOW)
    out = tmp_path / "results"
    proc = subprocess.run([sys.executable, "-m", "loggp.cli", "study", "run", str(path), "--results", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "host-signature.json").is_file()
    csv = (out / "report" / "targets.csv").read_text().splitlines()
    assert csv[0].split(",")[:4] == ["benchmark", "np", "class", "target"]
    rows = {line.split(",")[3]: line.split(",") for line in csv[1:]}
    assert set(rows) == {"100baset", "slow.toml"}
    for target, row in rows.items():
        emulated, predicted = float(row[5]), float(row[9])
        assert emulated > 0 and predicted > 0, row
    # a message-bound kernel costs more at a 400 us start-up than at 143 us, emulated and predicted
    assert float(rows["slow.toml"][5]) > float(rows["100baset"][5])
    assert float(rows["slow.toml"][9]) > float(rows["100baset"][9])
    page = (out / "report" / "report.html").read_text()
    assert "<h2>Target networks</h2>" in page
    # the store records the knobs each target run had (target - host), not the zeros of its plan
    conn = sqlite3.connect(out / "results.sqlite")
    stored = conn.execute("SELECT knobs, L_ns, G_ns_per_byte FROM runs WHERE sweep = 'target'").fetchall()
    conn.close()
    by_target = {json.loads(k)["target"]: (L, G) for k, L, G in stored}
    host = json.loads((out / "host-signature.json").read_text())["summary"]
    host_t0_ns = 1e3 * (host["o_s_us"] + host["L_us"] + host["o_r_us"])
    assert by_target["slow.toml"][0] == pytest.approx(400e3 - host_t0_ns, abs=1.0)
    assert by_target["slow.toml"][1] == pytest.approx(100 - host["G_ns_per_byte"], abs=1e-3)
