"""analysis/bench/spun_pingpong.c, the program that shows how much an 8 B half round trip
grows when both ranks spin around each call, without the apparatus (docs/benchmarks.md,
"Known defects")."""
from pathlib import Path

import pytest

from tests.testkit import installed, run

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "spun_pingpong.c"
PLAIN = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": "shm"}


@pytest.fixture(scope="module")
def spun_pingpong(tmp_path_factory):
    exe = tmp_path_factory.mktemp("spun") / "spun_pingpong"
    run([installed("mpicc"), "-O2", "-o", exe, SOURCE, "-lm"], check=True)
    return exe


def growth_us(exe, spin_us, rounds=5, messages=50):
    proc = run([installed("mpiexec"), "-n", "2", exe, spin_us, rounds, messages], env=PLAIN, check=True)
    median, low, high = (float(v) for v in proc.stdout.split())
    return median, low, high


def test_both_ranks_spin_on_every_message(spun_pingpong):
    # rank 0 spins S before its send and after its receive, rank 1 twice S between its
    # receive and its send: a half round trip grows by 2 S at least, whatever the machine;
    # one rank's spins alone, or one spin a side, would add S
    median, low, high = growth_us(spun_pingpong, 20)
    assert low <= median <= high
    assert median >= 0.9 * 2 * 20


def test_no_spin_no_growth_to_speak_of(spun_pingpong):
    # the same batch twice: what is left is the machine's noise, well under a 20 us spin's
    median, low, high = growth_us(spun_pingpong, 0)
    assert low <= median <= high
    assert abs(median) < 0.25 * growth_us(spun_pingpong, 20)[0]


@pytest.mark.parametrize("args", [["1", "10"], ["1", "2", "100"], ["-1", "10", "100"], ["1us", "10", "100"],
                                  ["1", "10", "0"], ["1", "10.5", "100"], ["1", "1001", "100"],
                                  ["1", "10", "100", "x"]])
def test_bad_arguments_say_how_to_call_it(spun_pingpong, args):
    proc = run([installed("mpiexec"), "-n", "2", spun_pingpong, *args], env=PLAIN)
    assert proc.returncode != 0 and "usage: mpiexec -n 2 spun_pingpong" in proc.stderr
