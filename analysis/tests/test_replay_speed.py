"""analysis/bench/replay_speed.py: each median comes with its spread (the 95 % interval
when the replays are enough, else their range, said so), in the table docs/predict.md
shows. Structure only: the figures are timings, never asserted."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from loggp.experiments import precision

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "replay_speed.py"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "predict.md"


def script():
    spec = importlib.util.spec_from_file_location("replay_speed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spread_is_the_medians_interval_or_the_range_of_too_few_replays():
    few = [0.30, 0.10, 0.20, 0.50, 0.40]
    assert precision.spread(few) == ("min-max", 0.10, 0.50)
    many = [0.01 * i for i in range(1, 21)]   # 20 replays: an interval, inside the range
    kind, low, high = precision.spread(many)
    interval = precision.median_interval(many)
    assert kind == "95 %" and (low, high) == (interval.low, interval.high) and 0.01 < low < high < 0.20


def test_a_row_gives_seconds_and_records_per_second_with_their_spread():
    m = {"records": 2_000_000, "seconds": 0.2, "times": [0.25, 0.2, 0.1, 0.2, 0.4], "rss_peak_kib": 40960,
         "rss_before_kib": 32768}
    row = script().row("halo", 64, 2500, m)
    # the slowest replay is the low end of the rate, the fastest its high end
    assert row == "| halo | 64 | 2500 | 2000000 | 0.2 [0.1, 0.4] min-max of 5 | 10.00 [5.00, 20.00] | 40 | 32 |"


def test_the_script_prints_the_table_docs_predict_shows():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--ranks", "4", "--phases", "2", "--repeat", "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    header, rule, line = proc.stdout.splitlines()
    assert re.search(r"\| [\d.e-]+ \[[\d.e-]+, [\d.e-]+\] min-max of 3 \| [\d.]+ \[[\d.]+, [\d.]+\] \|", line), line
    # docs/predict.md's table has the same columns
    assert header in DOCS.read_text().splitlines()


def test_a_bad_repeat_is_refused_by_name():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--repeat", "0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--repeat 0" in proc.stderr
