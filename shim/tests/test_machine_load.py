"""Other work on the cores, from /proc/stat samples (synthetic, so no test depends on the
machine's own load)."""
import pytest

from loggp.shim import machine_load as ml


def stat(user, system, idle, iowait=0, steal=0):
    return (f"cpu  {user} 0 {system} {idle} {iowait} 0 0 {steal} 0 0\n"
            f"cpu0 1 0 1 1 0 0 0 0 0 0\nintr 5\n")


def test_ticks_count_steal_as_busy_and_iowait_as_idle():
    assert ml.cpu_ticks(stat(100, 50, 800, iowait=30, steal=20)) == (170, 1000)
    with pytest.raises(ValueError):
        ml.cpu_ticks("intr 5\n")


def test_others_cores_takes_our_own_cpu_out():
    before, after = (1000, 10000), (1150, 10200)  # 150 of 200 ticks busy on 2 cores
    assert ml.others_cores(before, after, 0.0, 100, 2) == pytest.approx(1.5)
    assert ml.others_cores(before, after, 0.5, 100, 2) == pytest.approx(1.0)  # 50 ticks were ours
    assert ml.others_cores(before, after, 5.0, 100, 2) == 0.0
    assert ml.others_cores(before, before, 0.0, 100, 2) == 0.0


def test_sample_reads_twice_around_its_sleep():
    texts = iter([stat(0, 0, 1000), stat(180, 20, 1200)])
    slept = []
    cores = ml.sample(0.25, read=lambda: next(texts), sleep=slept.append)
    assert slept == [0.25] and cores is not None and cores > 0
    assert ml.sample(read=lambda: (_ for _ in ()).throw(OSError("no proc")), sleep=lambda s: None) is None


def test_one_line_only_above_the_share_on_either_side():
    assert ml.shared_cores_line([0.1, 0.3], cores=2) is None
    assert ml.shared_cores_line([None, None], cores=2) is None
    line = ml.shared_cores_line([0.1, 1.4], cores=2)
    assert line.startswith("other work shares the cores") and "1.4 of 2" in line and "\n" not in line
    assert ml.shared_cores_line([0.6, None], cores=2) is not None  # 0.6 > 0.25 * 2


def test_watch_samples_at_start_and_end():
    values = iter([0.0, 1.9])
    watch = ml.LoadWatch(sampler=lambda: next(values)).start().end()
    assert watch.samples == [0.0, 1.9] and watch.line(cores=2)
    assert watch.as_dict(cores=2)["shared"] is True


def test_loggp_run_samples_only_when_a_person_reads_it():
    calls = []

    def busy():
        calls.append(1)
        return 1.9
    assert ml.before_run_line(False, busy) is None and not calls  # a study's runs pay nothing
    line = ml.before_run_line(True, busy)
    assert calls and "just before it started the program" in line and "carry its noise" in line
    assert ml.before_run_line(True, lambda: 0.0) is None
