"""Settings `loggp run` accepts must do something, or be refused before launch
(exit 2) or named in one warning line: per-pair values no pair of the run gets,
LOGGP_* variables loggp does not read."""
import pytest

from tests.testkit import installed, run


def loggp_run(*args, env=None, timeout=120):
    return run([installed("loggp"), "run", *args], env=env, timeout=timeout)


def refused_before_launch(proc, marker, *named):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not marker.exists(), "the program ran"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    for words in named:
        assert words in lines[0], lines[0]


@pytest.mark.parametrize("flags, named", [
    (["-n", "2", "--L-inter", "20us"],
     ["--L-inter 20us is never applied", "every rank runs on this one host", "without --ranks-per-node"]),
    (["--ranks-per-node", "2", "--L-inter", "20us", "-n", "2"],
     ["--ranks-per-node 2 puts all 2 ranks on one node: no pair is inter-node"]),
    (["-n", "2", "--G-inter", "1ns/B", "--ranks-per-node", "4"], ["--ranks-per-node 4 puts all 2 ranks on one node"]),
    (["--ranks-per-node", "3", "-n", "2"], ["--ranks-per-node 3 puts all 2 ranks on one node"]),
])
def test_per_pair_values_no_pair_gets_are_refused_before_launch(tmp_path, flags, named):
    marker = tmp_path / "ran"
    refused_before_launch(loggp_run(*flags, "--", "touch", marker), marker, *named)


def test_a_topology_level_without_its_ranks_is_refused_before_launch(tmp_path):
    topo = tmp_path / "switch.topo"
    topo.write_text("ranks_per_node = 1\nL_inter_switch = 20us\n")
    marker = tmp_path / "ran"
    refused_before_launch(loggp_run("-n", "4", "--topology", topo, "--", "touch", marker), marker,
                          f"--topology {topo}: L_inter_switch = 20us is never applied",
                          "without ranks_per_switch no pair is inter-switch")
    # with the level that reaches those pairs it runs
    topo.write_text("ranks_per_node = 1\nranks_per_switch = 2\nL_inter_switch = 20us\n")
    proc = loggp_run("-n", "4", "--topology", topo, "--dry-run", "--", "true")
    assert proc.returncode == 0, proc.stderr


def test_per_pair_values_some_pair_gets_pass_and_ranks_elsewhere_are_not_judged(tmp_path):
    proc = loggp_run("-n", "4", "--ranks-per-node", "2", "--L-inter", "20us", "--dry-run", "--", "true")
    assert proc.returncode == 0, proc.stderr
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n")
    # with a host file the ranks may be on several hosts: the hosts are the nodes
    proc = loggp_run("-n", "2", "--hostfile", hosts, "--L-inter", "20us", "--dry-run", "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert "never applied" not in proc.stderr


@pytest.mark.parametrize("variable, value, closest", [
    ("LOGGP_LATENCEY", "20us", "LOGGP_LATENCY"),
    ("LOGGP_L_JITER", "normal:5us", "LOGGP_L_JITTER"),
    ("LOGGP_RANKS_PER_NOD", "2", "LOGGP_RANKS_PER_NODE"),
])
def test_an_unknown_variable_gets_one_warning_with_the_closest_name(variable, value, closest):
    proc = loggp_run("-n", "1", "--dry-run", "--", "true", env={variable: value})
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warned == [f"loggp run: warning: {variable}={value}: loggp reads no variable {variable}, so it does "
                      f"nothing (did you mean {closest}?)"]


def test_an_unknown_variable_far_from_every_name_gets_no_guess():
    proc = loggp_run("-n", "1", "--dry-run", "--", "true", env={"LOGGP_WHATEVER": "1"})
    warned = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warned == ["loggp run: warning: LOGGP_WHATEVER=1: loggp reads no variable LOGGP_WHATEVER, so it does "
                      "nothing"]
