"""Knob flags on `loggp run`, `loggp probe` and `loggp predict`: a value starting
with '-' reaches the knob parser, which names it; a knob flag given twice is
refused; a usage error is one line and a pointer to --help."""
import pytest

from tests.testkit import installed, run


def loggp(*args):
    return run([installed("loggp"), *args])


@pytest.mark.parametrize("command", [
    ["run", "-n", "2", "--L", "-1us", "--dry-run", "--", "true"],
    ["probe", "--L", "-1us"],
    ["predict", ".", "--L", "-1us"],
])
def test_a_negative_knob_is_refused_naming_the_value(command):
    proc = loggp(*command)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"loggp {command[0]}: --L{' -1us' if command[0] == 'predict' else ''}: '-1us': negative values are "
        "not allowed (knobs are increments >= 0)"]


@pytest.mark.parametrize("command, said", [
    (["run", "-n", "2", "--L", "1us", "--L", "2us", "--dry-run", "--", "true"], "--L is given twice ('1us', then '2us')"),
    (["run", "-n", "2", "--L-jitter", "normal:1us", "--L-jitter", "exp:1us", "--dry-run", "--", "true"],
     "--L-jitter is given twice ('normal:1us', then 'exp:1us')"),
    (["probe", "--L", "1us", "--L", "2us"], "--L is given twice ('1us', then '2us')"),
    (["predict", ".", "--G", "1ns/B", "--G", "2ns/B"], "--G is given twice ('1ns/B', then '2ns/B')"),
])
def test_a_knob_flag_given_twice_is_refused(command, said):
    proc = loggp(*command)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"loggp {command[0]}: {said}; give it once\n")


def test_probe_names_itself_for_a_bad_knob():
    proc = loggp("probe", "--L", "5")
    assert proc.returncode == 2
    assert proc.stderr.startswith("loggp probe: --L: '5': a bare number has no unit")


def test_run_says_a_usage_error_in_one_line_and_suggests_the_flag():
    proc = loggp("run", "-n", "2", "--latency", "5us", "--", "true")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["loggp run: unrecognized arguments: --latency (did you mean --L?)",
                                        "(see `loggp run --help`)"]


def test_the_programs_own_arguments_are_left_alone():
    proc = loggp("run", "-n", "2", "--dry-run", "--", "echo", "--L", "-1us", "--L", "2us")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("echo --L -1us --L 2us")
