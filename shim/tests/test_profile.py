"""The profile is written only when asked for: LOGGP_PROFILE unset or empty
leaves no file anywhere a profile could land and says nothing on stderr. A
folder that cannot take it stops the run at MPI_Init; a reused folder holds
the last run's profiles only."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testkit import built, installed, run


def profiles_under(*folders):
    return {p for folder in folders for p in Path(folder).glob("**/profile.*.json")}


@pytest.mark.parametrize("engine", ["libfabric", "pmpi"])
def test_an_empty_profile_variable_writes_no_profile(tmp_path, engine):
    work = tmp_path / "work"
    work.mkdir()
    # an empty folder name would put profile.<rank>.json at the root or in the working folder
    root_before = set(Path("/").glob("profile.*.json"))
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--engine", engine, "--",
                built("shim/tests/loggp-test-timing"), "pingpong", "8", "10"],
               env={"LOGGP_PROFILE": ""}, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loggp" not in proc.stderr, proc.stderr
    assert not profiles_under(work, tmp_path)
    assert set(Path("/").glob("profile.*.json")) == root_before


def test_a_profile_lands_only_where_asked(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-timing"),
                "pingpong", "8", "10"], env={"LOGGP_PROFILE": str(out)}, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loggp" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["profile.0.json", "profile.1.json"]
    assert not profiles_under(work)


def preloaded(np, *args, env):
    """The program under mpiexec with libloggp.so preloaded by hand (no `loggp run` checks first)."""
    return run([installed("mpiexec"), "-n", str(np), *args],
               env={"LD_PRELOAD": str(Path(sys.prefix) / "lib" / "libloggp.so"), "LOGGP_QUIET": "1", **env})


@pytest.mark.parametrize("make, why", [
    (lambda p: (p / "afile").write_text("x") and p / "afile", "Not a directory"),
    (lambda p: Path("/proc/self/loggp-profile"), ""),
])
def test_a_profile_folder_that_cannot_be_written_stops_the_run_at_mpi_init(tmp_path, make, why):
    folder = make(tmp_path)
    proc = preloaded(2, built("shim/tests/loggp-test-timing"), "pingpong", "8", "10",
                     env={"LOGGP_PROFILE": str(folder)})
    assert proc.returncode != 0
    assert "halfrtt_us" not in proc.stdout, "the run went on to lose its profile at the end"
    for rank in (0, 1):
        assert f"loggp: rank {rank}: cannot write a profile into LOGGP_PROFILE={folder}: {why}" in proc.stderr, \
            proc.stderr


def test_a_run_stopped_at_mpi_init_leaves_no_trace_file_behind(tmp_path):
    (tmp_path / "afile").write_text("x")
    traces = tmp_path / "traces"
    proc = preloaded(2, built("shim/tests/loggp-test-timing"), "pingpong", "8", "10",
                     env={"LOGGP_PROFILE": str(tmp_path / "afile"), "LOGGP_TRACE": str(traces)})
    assert proc.returncode != 0 and "cannot write a profile" in proc.stderr, proc.stderr
    assert list(traces.iterdir()) == [], "each rank's opened trace stays as a temporary file"


def test_the_variable_makes_missing_parent_folders(tmp_path):
    out = tmp_path / "a" / "b"
    proc = preloaded(2, built("shim/tests/loggp-test-timing"), "pingpong", "8", "10", env={"LOGGP_PROFILE": str(out)})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["profile.0.json", "profile.1.json"]


def test_a_reused_folder_holds_only_the_last_runs_profiles(tmp_path):
    out = tmp_path / "prof"
    program = [built("shim/tests/loggp-test-timing"), "pingpong", "8", "10"]
    assert run([installed("loggp"), "run", "-n", "3", "--quiet", "--profile", out, "--", *program]).returncode == 0
    # a file being written by a live process (this one) is kept; a dead run's is removed
    kept = ["notes.txt", "profile.02.json", "profile.x.json", f"profile.1.json.tmp.{os.getpid()}"]
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name in kept + [f"profile.1.json.tmp.{dead.pid}"]:
        (out / name).write_text("not ours")
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--profile", out, "--", *program])
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(["libmpi.json", "outcome.json", "profile.0.json",
                                                            "profile.1.json", *kept])
    assert {json.loads((out / f"profile.{r}.json").read_text())["size"] for r in (0, 1)} == {2}


# What loggp-test-selfsends sends on each rank, in bytes per message (its header says how).
TO_SELF = ([100] * 3            # Send_init, three starts
           + [200, 300]         # Ssend_init and Rsend_init, one Startall
           + [400]              # Bsend_init
           + [50, 60]           # Sendrecv, Sendrecv_replace
           + [10, 20, 30, 40]   # Isend, Ibsend, Issend, Irsend
           + [700, 800])        # Send_init and Isend on the reversed communicator
TO_THE_OTHER = [1000] + [1500] * 2 + [3000]  # reversed Send_init to the own world rank; Send_init x 2; Sendrecv


@pytest.mark.parametrize("engine", ["libfabric", "pmpi"])
def test_messages_to_oneself_are_counted_apart_by_every_kind_of_send(tmp_path, engine):
    out = tmp_path / "prof"
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--engine", engine, "--profile", out, "--",
                built("shim/tests/loggp-test-selfsends")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "selfsends OK" in proc.stdout, proc.stdout
    for rank in (0, 1):
        profile = json.loads((out / f"profile.{rank}.json").read_text())
        sent = TO_SELF + TO_THE_OTHER
        assert (profile["sent"]["messages"], profile["sent"]["bytes"]) == (len(sent), sum(sent)), profile["sent"]
        assert profile["sent_to_self"] == {"messages": len(TO_SELF), "bytes": sum(TO_SELF)}, rank
        assert profile["calls"]["MPI_Start"] == 3 + 1 + 1 + 1 + 1 + 2 and profile["calls"]["MPI_Startall"] == 1
