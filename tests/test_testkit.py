"""The timing tests' judgement of a loaded machine: relative to baselines measured alike,
never a fixed number of microseconds, so a machine twice as slow (or fast) is judged alike;
and what the suite clears after the runs it killed."""
import mmap
import os
import subprocess

import pytest

from tests import testkit
from tests.testkit import LOAD_RATIO, MIN_CPU_SHARE, failure, figures, load_reason, spread, stretch_share, tolerance


def test_spread_is_the_slowest_over_the_quickest():
    assert spread([2.0, 3.0, 4.0]) == 2.0
    assert spread([0.0, 1.0]) == float("inf")


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0, 4.0])
def test_a_steady_machine_is_judgeable_at_any_speed(scale):
    # the same relative spread is quiet whatever the machine's own half round trip
    assert load_reason([scale * 0.7, scale * 0.8, scale * 0.75]) == ""


def test_a_baseline_past_the_ratio_is_loaded_and_one_just_below_is_not():
    assert load_reason([1.0, 1.0, LOAD_RATIO * 1.0 - 1e-9]) == ""
    assert "more than" in load_reason([1.0, 1.0, LOAD_RATIO * 1.0 + 1e-6])


def test_the_quickest_seen_earlier_counts():
    assert load_reason([2.5, 2.6]) == ""
    assert "quickest, 1.00" in load_reason([2.5, 2.6], quickest=1.0)


def test_a_rank_short_of_cpu_is_loaded():
    assert load_reason([1.0, 1.0], cpu_shares=[1.0, MIN_CPU_SHARE]) == ""
    assert "of a core" in load_reason([1.0, 1.0], cpu_shares=[1.0, MIN_CPU_SHARE - 0.01])


def test_a_share_that_would_stretch_the_figure_out_of_its_tolerance_cannot_judge_it():
    # g_total = 20 us within 3 us: a share of 20/23 stretches it to the edge, one below past it
    need = stretch_share(20.0, 3.0)
    assert 20.0 / need == pytest.approx(23.0)
    assert stretch_share(0.0, 0.4) == 0.0   # nothing expected: nothing to stretch
    assert load_reason([1.0, 1.0], cpu_shares=[need], min_share=need) == ""
    assert f"< {need:.2f}" in load_reason([1.0, 1.0], cpu_shares=[need - 0.01], min_share=need)
    # a share the plain rule calls quiet (2g read at half a core is not a half-done knob)
    assert load_reason([1.0, 1.0], cpu_shares=[0.61]) == ""
    assert load_reason([1.0, 1.0], cpu_shares=[0.61], min_share=need)


def test_the_tolerance_follows_the_expectation_or_the_unperturbed_figure():
    assert tolerance(20.0, 1.0) == pytest.approx(3.0)       # 15 % of the expectation
    assert tolerance(0.0, 1.0) == pytest.approx(0.4)        # nothing expected: the figure's own noise
    assert tolerance(0.0, 2.0) == 2 * tolerance(0.0, 1.0)   # a machine twice as slow, twice the noise


def test_a_machine_busy_with_other_work_skips_and_a_quiet_one_does_not():
    from tests.testkit import BUSY_SHARE, skip_if_busy
    skip_if_busy("quiet", share=BUSY_SHARE - 0.01)   # returns: the test goes on to fail or pass
    with pytest.raises(pytest.skip.Exception, match="51 % of the cores busy"):
        skip_if_busy("busy", share=0.51)


def test_the_busy_share_is_a_share():
    from tests.testkit import others_busy_share
    assert 0.0 <= others_busy_share(0.2) <= 1.0


def test_a_run_a_signal_ended_fails_naming_the_rank_first():
    crashed = subprocess.CompletedProcess([], 11, "halfrtt_us=1.0\n",
                                          "noise\nloggp run: rank 1 was killed by signal 11 (SIGSEGV)\n")
    with pytest.raises(AssertionError) as raised:
        figures(crashed)
    assert str(raised.value).startswith("CRASHED: rank 1 was killed by signal 11 (SIGSEGV) (exit 11)\n")
    # an exit of its own is no crash
    exited = subprocess.CompletedProcess([], 11, "", "loggp: rank 1: cannot write\n")
    assert failure(exited).startswith("exited 11\n") and "cannot write" in failure(exited)
    assert figures(subprocess.CompletedProcess([], 0, "a=1.5\nnot a figure\n", "")) == {"a": 1.5}


def test_only_our_unmapped_mpich_segments_made_since_the_start_are_removed(tmp_path):
    for name in ("mpich_shm_1_0", "mpich_shm_2_0", "mpich_shm_3_0", "4711:0:0", "notes"):
        (tmp_path / name).write_bytes(b"x" * 4096)
    os.utime(tmp_path / "mpich_shm_1_0", (1000, 1000))
    with open(tmp_path / "mpich_shm_3_0", "r+b") as f, mmap.mmap(f.fileno(), 4096):
        removed = testkit.remove_leftover_mpich_segments(tmp_path, since=2000)
    assert removed == ["mpich_shm_2_0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["4711:0:0", "mpich_shm_1_0", "mpich_shm_3_0", "notes"]
