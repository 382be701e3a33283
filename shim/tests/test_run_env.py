"""`loggp run` checks every LOGGP_* variable the ranks would get before it
starts anything (with --dry-run too, with or without a knob flag): what
MPI_Init would refuse in every rank is refused once, exit 2, naming the flag
or variable and its value; jitter with nothing to draw around is warned of."""
import os
import subprocess

import pytest

from tests.testkit import installed, run


def loggp_run(*args, env=None, cwd=None):
    return run([installed("loggp"), "run", "-n", "2", *args], env=env, cwd=cwd)


def refused_before_launch(proc, marker, named):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("loggp run: ") and named in first, proc.stderr
    assert "MPI_Init" not in proc.stderr and not marker.exists()


@pytest.mark.parametrize("dry", [True, False])
@pytest.mark.parametrize("flags, named", [
    (["--L-jitter", "gauss:1us"], "--L-jitter gauss:1us: unknown distribution 'gauss'"),
    (["--L-jitter", "pareto:1us:0.5"], "--L-jitter pareto:1us:0.5: bad alpha"),
    (["--o-jitter", "normal:2"], "--o-jitter normal:2: "),
    (["--seed", "99999999999999999999999"], "--seed 99999999999999999999999: over the largest seed"),
])
def test_a_bad_flag_is_refused_before_launch(tmp_path, dry, flags, named):
    marker = tmp_path / "ran"
    proc = loggp_run(*flags, *(["--dry-run"] if dry else []), "--", "touch", marker)
    refused_before_launch(proc, marker, named)


@pytest.mark.parametrize("knob_flag", [[], ["--g", "1us"]])
@pytest.mark.parametrize("name, value", [
    ("LOGGP_LATENCY", "banana"), ("LOGGP_L_JITTER", "foo"), ("LOGGP_SEED", "18446744073709551616"),
    ("LOGGP_QUIET", "banana"), ("LOGGP_RANKS_PER_NODE", "0"), ("LOGGP_ROUTE", "maybe"),
])
def test_a_bad_variable_is_refused_before_launch(tmp_path, knob_flag, name, value):
    marker = tmp_path / "ran"
    proc = loggp_run(*knob_flag, "--", "touch", marker, env={name: value})
    refused_before_launch(proc, marker, f"{name}={value}: ")


@pytest.mark.parametrize("knob_flag", [[], ["--g", "1us"]])
def test_a_corrupt_knob_file_is_refused_before_launch(tmp_path, private_knob_file, knob_flag):
    private_knob_file.parent.mkdir(mode=0o700, parents=True)
    private_knob_file.write_text("L = lots\n")
    private_knob_file.chmod(0o600)
    marker = tmp_path / "ran"
    proc = loggp_run(*knob_flag, "--dry-run", "--", "touch", marker)
    refused_before_launch(proc, marker, "corrupt")


@pytest.mark.parametrize("option", ["--profile", "--trace"])
def test_an_empty_output_folder_is_refused(tmp_path, option):
    marker = tmp_path / "ran"
    proc = loggp_run(option, "", "--", "touch", marker)
    refused_before_launch(proc, marker, f"{option} '': expected a folder")


def warnings(proc):
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stderr.splitlines() if "warning" in line]


def test_jitter_on_a_zero_L_is_warned_of_once():
    lines = warnings(loggp_run("--L-jitter", "normal:5us", "--dry-run", "--", "true"))
    assert lines == ["loggp run: warning: --L-jitter normal:5us does nothing while L is 0: jitter draws L around "
                     "its set value (give --L, or `loggp-knobs set --L`)"]
    assert warnings(loggp_run("--L-jitter", "normal:5us", "--L", "1us", "--dry-run", "--", "true")) == []
    # a topology's own L is drawn around too
    assert warnings(loggp_run("--L-jitter", "normal:5us", "--L-inter", "5us", "--ranks-per-node", "1", "--dry-run",
                              "--", "true")) == []
    named = warnings(loggp_run("--dry-run", "--", "true", env={"LOGGP_L_JITTER": "exp:1us"}))
    assert len(named) == 1 and "LOGGP_L_JITTER=exp:1us does nothing while L is 0" in named[0]


def test_jitter_on_a_zero_o_is_warned_of_once(private_knob_file):
    lines = warnings(loggp_run("--o-jitter", "exp:1us", "--dry-run", "--", "true"))
    assert len(lines) == 1 and "--o-jitter exp:1us does nothing while o_s and o_r are 0" in lines[0]
    assert warnings(loggp_run("--o-jitter", "exp:1us", "--or", "1us", "--dry-run", "--", "true")) == []
    # the knob file's L counts as much as a flag's
    assert run([installed("loggp-knobs"), "set", "--L", "2us"]).returncode == 0
    assert warnings(loggp_run("--L-jitter", "normal:1us", "--dry-run", "--", "true")) == []


def test_folders_are_left_to_ranks_on_other_hosts(tmp_path):
    # a node-local folder (/scratch/...) may not exist on the launching host
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost\n")
    elsewhere = loggp_run("--hostfile", hostfile, "--dry-run", "--", "true", env={"LOGGP_PROFILE": "/proc/nope"})
    assert elsewhere.returncode == 0, elsewhere.stderr
    here = loggp_run("--dry-run", "--", "true", env={"LOGGP_PROFILE": "/proc/nope"})
    assert here.returncode == 2 and "LOGGP_PROFILE=/proc/nope" in here.stderr, here.stderr


def test_a_path_that_is_not_utf8_is_no_crash(tmp_path):
    knob_file = os.fsencode(tmp_path) + b"/x\xff/knobs"
    proc = subprocess.run([str(installed("loggp")), "run", "-n", "1", "--dry-run", "--", "true"], capture_output=True,
                          env={**os.environ, "LOGGP_KNOB_FILE": os.fsdecode(knob_file)})
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
