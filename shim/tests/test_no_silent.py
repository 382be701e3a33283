"""Settings `loggp run` accepts must do something, or be refused before launch
(exit 2) or named in one warning line: per-pair values no pair of the run gets,
LOGGP_* variables loggp does not read."""
import json
import signal

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


def tracecalls():
    from tests.testkit import built
    return built("shim/tests/loggp-test-tracecalls")


def test_kernel_scope_in_a_program_that_marks_no_region_says_nothing_was_applied():
    proc = loggp_run("-n", "2", "--scope", "kernel", "--L", "20us", "--", tracecalls(), 10, 8, 2)
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "nothing was applied" in line]
    assert said == ["loggp: warning: nothing was applied: the knobs apply inside the kernel region only (scope "
                    "kernel), and the program marked no region (loggp_hint IN_KERNEL or MPI_Pcontrol); use scope "
                    "all, or mark the region"], proc.stderr


def test_kernel_scope_in_a_program_that_marks_its_region_is_not_warned_of():
    from tests.testkit import built
    proc = loggp_run("-n", "2", "--scope", "kernel", "--L", "20us", "--", built("shim/tests/loggp-test-regions"),
                     5, 5, 5, "pcontrol")
    assert proc.returncode == 0, proc.stderr
    assert "nothing was applied" not in proc.stderr
    proc = loggp_run("-n", "2", "--L", "20us", "--", tracecalls(), 10, 8, 2)  # scope all
    assert proc.returncode == 0 and "nothing was applied" not in proc.stderr, proc.stderr


def test_a_program_without_mpi_is_said_to_have_had_no_knob(tmp_path):
    proc = loggp_run("-n", "2", "--L", "10us", "--", "hostname")
    assert proc.returncode == 0, proc.stderr
    # (a note that other work shares the cores may come first)
    assert [line for line in proc.stderr.splitlines() if "note:" not in line] == [
        "loggp run: warning: the program never called MPI_Init, so no knob applied (libloggp.so acts inside MPI "
        "programs only; is it one, or does it start one?)"]
    proc = loggp_run("-n", "1", "--profile", tmp_path / "p", "--trace", tmp_path / "t", "--", "sh", "-c", "exit 4")
    assert proc.returncode == 4, "the program's exit status is the run's"
    assert ("never called MPI_Init, so no knob applied, and neither the profile nor the trace was written"
            in proc.stderr), proc.stderr
    # an MPI program started by a shell counts: the record is per process, not per launch
    proc = loggp_run("-n", "2", "--quiet", "--", "sh", "-c", f"{tracecalls()} 5 8 2")
    assert proc.returncode == 0 and "MPI_Init" not in proc.stderr, proc.stderr


def unfinished():
    from tests.testkit import built
    return built("shim/tests/loggp-test-unfinished")


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_run_that_does_not_finish_names_the_outputs_not_written(tmp_path, how):
    profile, trace = tmp_path / "p", tmp_path / "t"
    proc = loggp_run("-n", "2", "--quiet", "--profile", profile, "--trace", trace, "--", unfinished(), 1, how)
    assert proc.returncode == (3 if how == "exit" else 9), proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("loggp run:")]
    # a rank a signal killed is named first (test_exit_status.py); one that exits is no signal's.
    # Rank 0 may still be in MPI_Finalize when the launcher, seeing rank 1 gone, ends it: then it
    # is named too, whichever way rank 1 left (a race the machine's speed decides)
    killed = [line for line in said if " was killed by signal " in line]
    by_the_launcher = {f"loggp run: rank 0 was killed by signal {s.value} ({s.name})"
                       for s in (signal.SIGKILL, signal.SIGTERM)}
    own = ["loggp run: rank 1 was killed by signal 9 (SIGKILL)"] if how == "kill" else []
    assert [line for line in killed if line not in by_the_launcher] == own, proc.stderr
    assert said[:len(killed)] == killed and len(said) == len(killed) + 1, proc.stderr
    said = said[len(killed):]
    assert said[0].startswith("loggp run: warning: the run did not finish, so these requested outputs were not "
                              f"written: --profile {profile}: "), said[0]
    # rank 1 left before MPI_Finalize; rank 0 may or may not have written before the launcher ended it
    assert "profile.1.json" in said[0] or "profile.<rank>.json of every rank" in said[0]
    assert "trace.1.bin" in said[0] or "trace.<rank>.bin of every rank" in said[0]
    assert json.loads((profile / "outcome.json").read_text())["mpi_init"] is True


def test_a_dead_runs_unfinished_traces_are_named_by_predict_and_removed_by_the_next_run(tmp_path):
    trace = tmp_path / "t"
    assert loggp_run("-n", "2", "--quiet", "--trace", trace, "--", tracecalls(), 5, 8, 2).returncode == 0
    loggp_run("-n", "2", "--quiet", "--trace", trace, "--", unfinished(), 1, "kill")
    left = sorted(p.name for p in trace.glob(".trace.*.bin.tmp.*"))
    assert ".trace.1.bin.tmp." in " ".join(left), left
    proc = run([installed("loggp"), "predict", trace, "--L", "0:10us:10us"], timeout=120)
    assert f"{trace} holds unfinished traces of a run that did not get through MPI_Finalize ({left[0]}" \
        in proc.stderr, proc.stderr
    # a live process's unfinished file is another run's, still being written: kept
    live = trace / ".trace.7.bin.tmp.1"
    live.write_bytes(b"")
    assert loggp_run("-n", "2", "--quiet", "--trace", trace, "--", tracecalls(), 5, 8, 2).returncode == 0
    assert sorted(p.name for p in trace.glob(".trace.*.bin.tmp.*")) == [live.name]
    assert sorted(p.name for p in trace.glob("trace.*.bin")) == ["trace.0.bin", "trace.1.bin"]
    # beside whole traces it is named, and the whole ones are replayed
    proc = run([installed("loggp"), "predict", trace, "--L", "0:10us:10us"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"loggp predict: note: {trace} holds unfinished traces of a run that did not get through " \
           f"MPI_Finalize ({live.name})" in proc.stderr, proc.stderr
