"""analysis/bench/spun_reply.c, the apparatus-free twin of a hold: a ping-pong whose ranks
wait before each reply, at the sizes L is read over (docs/benchmarks.md, "Known defects")."""
from pathlib import Path

import pytest

from tests.testkit import installed, run

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "spun_reply.c"
PLAIN = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": "shm"}
DELAYS_US = (20, 40)


@pytest.fixture(scope="module")
def spun_reply(tmp_path_factory):
    exe = tmp_path_factory.mktemp("reply") / "spun_reply"
    run([installed("mpicc"), "-O2", "-o", exe, SOURCE, "-lm"], check=True)
    return exe


@pytest.fixture(scope="module")
def rows(spun_reply):
    proc = run([installed("mpiexec"), "-n", "2", spun_reply, 5, 3, *DELAYS_US], env=PLAIN, check=True)
    return [[float(v) for v in line.split()] for line in proc.stdout.splitlines()]


def test_one_row_per_size_and_delay_with_each_median_inside_its_interval(rows):
    assert [(int(r[0]), r[1]) for r in rows] == [(size, d) for size in (8, 64, 512, 4096) for d in DELAYS_US]
    for _, _, median, low, high in rows:
        assert low <= median <= high


def test_a_wait_far_longer_than_a_message_grows_the_half_round_trip_by_itself(rows):
    # both ranks wait D before replying, so each half of the round trip carries one wait: the
    # half round trip grows by D at every size (a wait on one side only would grow it by D/2,
    # one outside the timed loop not at all)
    for size, delay, median, _, _ in rows:
        assert 0.8 * delay <= median <= 1.2 * delay, (size, delay, median)


@pytest.mark.parametrize("args", [["10", "5"], ["2", "5", "1"], ["10", "0", "1"], ["10", "5", "0"], ["10", "5", "-1"],
                                  ["10", "5", "1us"], ["10.5", "5", "1"], ["10", "5", "2e6"],
                                  ["10", "5", "1", "1", "1", "1", "1", "1", "1", "1", "1"]])
def test_bad_arguments_say_how_to_call_it(spun_reply, args):
    proc = run([installed("mpiexec"), "-n", "2", spun_reply, *args], env=PLAIN)
    assert proc.returncode != 0 and "usage: mpiexec -n 2 spun_reply" in proc.stderr
