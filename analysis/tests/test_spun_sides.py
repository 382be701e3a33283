"""analysis/bench/spun_sides.c, the apparatus-free twin of bulk_slope_by_side: the stream
interval at two sizes with the program's own spins on the send side, the receive side or
both (docs/benchmarks.md, "Known defects")."""
from pathlib import Path

import pytest

from tests.testkit import installed, run

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "spun_sides.c"
PLAIN = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": "shm"}
SPIN_US = 40


@pytest.fixture(scope="module")
def spun_sides(tmp_path_factory):
    exe = tmp_path_factory.mktemp("sides") / "spun_sides"
    run([installed("mpicc"), "-O2", "-o", exe, SOURCE, "-lm"], check=True)
    return exe


@pytest.fixture(scope="module")
def lines(spun_sides):
    proc = run([installed("mpiexec"), "-n", "2", spun_sides, SPIN_US, 5, 3, 8, 4096], env=PLAIN, check=True)
    out = {}
    for line in proc.stdout.splitlines():
        name, *values = line.split()
        out[name] = [float(v) for v in values]
    return out


def test_one_line_per_spun_mode_with_each_median_inside_its_interval(lines):
    assert list(lines) == ["both", "receive", "send"]
    for values in lines.values():
        assert len(values) == 9
        for median, low, high in zip(values[0::3], values[1::3], values[2::3]):
            assert low <= median <= high


def test_a_spin_far_longer_than_a_message_sets_the_interval_on_every_side_it_is_on(lines):
    # at 40 us a side against a few us a message, the spun side bounds the stream: each spun mode's
    # interval grows by about the spin at both sizes, whichever side spins (a mode spinning nowhere
    # or the wrong side would grow by far less), and the slope between sizes barely moves
    for name, values in lines.items():
        for grown in (values[3], values[6]):
            assert 0.8 * SPIN_US <= grown <= 1.2 * SPIN_US, (name, values)
        assert abs(values[0]) * (4096 - 8) / 1000.0 < 0.2 * SPIN_US, (name, values)


@pytest.mark.parametrize("args", [["1", "10", "5", "8"], ["-1", "10", "5", "8", "64"], ["1us", "10", "5", "8", "64"],
                                  ["1", "2", "5", "8", "64"], ["1", "10", "0", "8", "64"], ["1", "10", "5", "64", "8"],
                                  ["1", "10", "5", "8", "8"], ["1", "10.5", "5", "8", "64"],
                                  ["1", "10", "5", "8", "99999999"], ["1", "10", "5", "8", "64", "x"]])
def test_bad_arguments_say_how_to_call_it(spun_sides, args):
    proc = run([installed("mpiexec"), "-n", "2", spun_sides, *args], env=PLAIN)
    assert proc.returncode != 0 and "usage: mpiexec -n 2 spun_sides" in proc.stderr
