"""analysis/bench/spun_stream.c, the program that shows what LogP's max(o_s, o_r) leaves
out on a stream without the apparatus (docs/benchmarks.md, "Known defects")."""
from pathlib import Path

import pytest

from tests.testkit import installed, run

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "spun_stream.c"
PLAIN = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": "shm"}


@pytest.fixture(scope="module")
def spun_stream(tmp_path_factory):
    exe = tmp_path_factory.mktemp("spun") / "spun_stream"
    run([installed("mpicc"), "-O2", "-o", exe, SOURCE], check=True)
    return exe


def interval_us(exe, send_us, receive_us, *size):
    proc = run([installed("mpiexec"), "-n", "2", exe, send_us, receive_us, 200, 5, *size], env=PLAIN, check=True)
    return float(proc.stdout)


def test_each_side_spends_its_spin_on_every_message(spun_stream):
    # a spin of 20 us on either side bounds every message's interval from below, whatever the
    # machine's speed; the same stream without spins, on the same machine, runs well under it
    sending, receiving = interval_us(spun_stream, 20, 0), interval_us(spun_stream, 0, 20)
    assert sending >= 20 and receiving >= 20
    assert 2 * interval_us(spun_stream, 0, 0) < min(sending, receiving)


def test_the_size_is_the_messages_own(spun_stream):
    # a 1 MiB message takes the receiver a copy an 8 B one does not: its stream runs slower
    assert interval_us(spun_stream, 0, 0, 1 << 20) > 2 * interval_us(spun_stream, 0, 0, 8)


@pytest.mark.parametrize("args", [["1", "1", "0", "5"], ["1", "1", "100", "1001"], ["1", "1"],
                                  ["1us", "1", "100", "5"], ["1", "-1", "100", "5"], ["1", "1", "ten", "5"],
                                  ["1", "1", "100", "5", "0"], ["1", "1", "100", "5", "16KiB"],
                                  ["1", "1", "100", "5", "1.5"], ["1", "1", "100", "5", "8", "x"]])
def test_bad_arguments_say_how_to_call_it(spun_stream, args):
    proc = run([installed("mpiexec"), "-n", "2", spun_stream, *args], env=PLAIN)
    assert proc.returncode != 0 and "usage: mpiexec -n 2 spun_stream" in proc.stderr
