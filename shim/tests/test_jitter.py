"""Jitter under real MPI runs: MPI's non-overtaking rule holds whatever the
draws (many numbered messages, heavy-tailed draws, wildcard receives, two
communicators), the banner names the setting, and bad settings are refused
naming the bad value."""
import sys
from pathlib import Path

import pytest

from tests.testkit import built, installed, run


def loggp_run(np, *args, env=None):
    return run([installed("loggp"), "run", "-n", str(np), "--engine", "libfabric", *args], timeout=240, env=env)


@pytest.mark.parametrize("np, jitter", [(2, "normal:20us"), (2, "exp:10us"), (4, "pareto:20us:2.5"),
                                        (3, "lognormal:15us:1.5")])
def test_messages_between_a_pair_arrive_in_order_whatever_the_draw(np, jitter):
    proc = loggp_run(np, "--quiet", "--L", "5us", "--L-jitter", jitter, "--o", "200ns", "--o-jitter", "exp:200ns",
                     "--seed", "7", "--", built("shim/tests/loggp-test-ordering"), "400")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ordering OK {400 * 2 * np * (np - 1)}" in proc.stdout


def test_banner_names_the_jitter_and_seed():
    proc = loggp_run(2, "--L", "10us", "--L-jitter", "normal:2us", "--seed", "11", "--",
                     built("shim/tests/loggp-test-ordering"), "8")
    assert proc.returncode == 0, proc.stderr
    assert "jitter L normal:2us, o none, seed 11" in proc.stderr


def test_no_jitter_leaves_the_banner_as_it_was():
    proc = loggp_run(2, "--L", "10us", "--", built("shim/tests/loggp-test-ordering"), "8")
    assert proc.returncode == 0, proc.stderr
    assert "; jitter" not in proc.stderr and "knobs o_s=" in proc.stderr


@pytest.mark.parametrize("value, named", [("gauss:2us", "'gauss'"), ("normal:2", "'2'"),
                                          ("pareto:2us:1.5", "alpha")])
def test_a_bad_jitter_is_refused_naming_it(value, named):
    proc = run([installed("mpiexec"), "-n", "1", built("shim/tests/loggp-test-ordering"), "1"],
               env={"LD_PRELOAD": str(Path(sys.prefix) / "lib" / "libloggp.so"), "LOGGP_L_JITTER": value})
    assert proc.returncode != 0
    assert f"LOGGP_L_JITTER={value}" in proc.stderr and named in proc.stderr, proc.stderr


@pytest.mark.parametrize("seed", ["18446744073709551616", "99999999999999999999999"])
def test_a_seed_over_64_bits_stops_mpi_init_naming_it(seed):
    proc = run([installed("mpiexec"), "-n", "1", built("shim/tests/loggp-test-ordering"), "1"],
               env={"LD_PRELOAD": str(Path(sys.prefix) / "lib" / "libloggp.so"), "LOGGP_L_JITTER": "normal:1us",
                    "LOGGP_SEED": seed})
    assert proc.returncode != 0
    assert f"LOGGP_SEED={seed}: over the largest seed" in proc.stderr, proc.stderr


def test_a_negative_seed_is_refused():
    proc = loggp_run(2, "--seed", "-3", "--", built("shim/tests/loggp-test-ordering"), "8")
    assert proc.returncode != 0
    assert "--seed -3" in proc.stderr
