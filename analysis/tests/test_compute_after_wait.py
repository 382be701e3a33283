"""analysis/bench/compute_after_wait.c, the program that shows how much slower a computation
runs right after a wait than back to back, on the machine alone (docs/prediction-against-emulation.md)."""
import time
from pathlib import Path

import pytest

from tests.testkit import run

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "compute_after_wait.c"
WAYS = ["none", "spin", "yield", "touch"]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    exe = tmp_path_factory.mktemp("caw") / "compute_after_wait"
    run(["cc", "-O2", "-std=c11", "-o", exe, SOURCE, "-lm"], check=True)
    return exe


def readings(exe, *args):
    proc = run([exe, *map(str, args)], check=True)
    rows = [line.split() for line in proc.stdout.splitlines()]
    return {r[0]: [float(v) for v in r[1:]] for r in rows}, [r[0] for r in rows]


def test_each_way_is_read_against_the_passes_back_to_back(program):
    by_way, order = readings(program, 256, 0, 5)
    assert order == WAYS
    assert by_way["none"][3:] == [1.0, 1.0, 1.0]  # none's pass against itself, round by round
    for us, low, high, ratio, ratio_low, ratio_high in by_way.values():
        assert 0 < low <= us <= high
        assert 0 < ratio_low <= ratio <= ratio_high


def test_every_way_but_none_waits_its_time_before_each_pass(program):
    # 3 ways wait 20 ms before each of 5 passes: 0.3 s at least, whatever the machine's speed
    started = time.monotonic()
    readings(program, 64, 20000, 5)
    assert time.monotonic() - started >= 3 * 5 * 0.020


def test_a_larger_working_set_takes_longer_a_pass(program):
    # 64 times the rows: a pass can't take less than a few times as long on any machine
    small, _ = readings(program, 256, 0, 5)
    large, _ = readings(program, 16384, 0, 5)
    assert large["none"][0] > 4 * small["none"][0]


@pytest.mark.parametrize("args", [[], ["1024", "100"], ["32", "100", "10"], ["1024", "-1", "10"],
                                  ["1024", "100", "2"], ["1024", "1ms", "10"], ["1KiB", "100", "10"],
                                  ["1024", "100", "10", "4"]])
def test_bad_arguments_say_how_to_call_it(program, args):
    proc = run([program, *args])
    assert proc.returncode == 2 and "usage: compute_after_wait" in proc.stderr
