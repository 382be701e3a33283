"""`loggp run --trace DIR`: a real np=2 run of known calls (loggp-test-tracecalls:
a ping-pong, an Isend/Irecv window closed by one Waitall, a Bcast from rank 1,
an Allreduce), read back with loggp.analysis.trace and checked call by call;
bad folders refused before launch; no trace unless asked."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from loggp.analysis import trace as tr
from tests.testkit import built, installed, run

PINGPONGS, SIZE, WINDOW = 3000, 100, 4  # 3 records per ping-pong step: past one 4096-record buffer


def traced_run(folder, engine="auto", extra_env=None):
    return run([installed("loggp"), "run", "-n", "2", "--quiet", "--engine", engine, "--trace", folder, "--",
                built("shim/tests/loggp-test-tracecalls"), PINGPONGS, SIZE, WINDOW], env=extra_env)


def test_the_record_does_not_guess_the_hosts_of_a_launcher_template(tmp_path):
    # a template may start the ranks anywhere: the record says it does not know
    proc = run([installed("loggp"), "run", "-n", "1", "--quiet", "--launcher", "{program}", "--trace", tmp_path / "t",
                "--", "true"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "t" / "run.json").read_text())["one_host"] is None


@pytest.mark.parametrize("engine", ["libfabric", "pmpi"])
def test_a_traced_run_records_each_call(tmp_path, engine):
    out = tmp_path / "trace"
    proc = traced_run(out, engine)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loggp" not in proc.stderr, proc.stderr
    # only the final files: no temporary left behind; run.json says how the run went
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "trace.0.bin", "trace.1.bin"]
    recorded = json.loads((out / "run.json").read_text())
    assert recorded["engine"] == engine and recorded["provider"] == (None if engine == "pmpi" else "shm")
    traces = tr.read_folder(out)
    for t in traces:
        check_rank(t)


def check_rank(t):
    peer = 1 - t.rank
    r, names = t.records, t.call_names()
    calls = r["kind"] == tr.CALL
    assert (t.size, len(t.names) > 0) == (2, True)
    # every record inside the run, each call's start and end in order, calls one after another
    assert np.all(r["start_ns"] <= r["end_ns"])
    assert t.init_ns <= r["start_ns"].min() and r["end_ns"].max() <= t.finalize_ns
    c = r[calls]
    assert np.all(c["start_ns"][1:] >= c["end_ns"][:-1])
    # the ping-pong: PINGPONGS sends and receives alternating, each with its completion
    sends = c[names[calls] == "MPI_Send"]
    recvs = c[names[calls] == "MPI_Recv"]
    assert len(sends) == len(recvs) == PINGPONGS
    for part in (sends, recvs):
        assert set(part["peer"]) == {peer} and set(part["tag"]) == {7} and set(part["bytes"]) == {SIZE}
        assert set(part["comm_size"]) == {2} and len(set(part["comm_id"])) == 1
    first = "MPI_Send" if t.rank == 0 else "MPI_Recv"
    pingpong = names[calls][:2 * PINGPONGS]
    assert list(pingpong[0::2]) == [first] * PINGPONGS
    recv_done = r[(names == "MPI_Recv") & (r["kind"] == tr.COMPLETE)]
    assert len(recv_done) == PINGPONGS
    assert set(recv_done["peer"]) == {peer} and set(recv_done["bytes"]) == {SIZE}
    # the window: W Irecv and W Isend posts, one Waitall completing all 2W, matched to their posts
    irecv = np.flatnonzero((names == "MPI_Irecv") & calls)
    isend = np.flatnonzero((names == "MPI_Isend") & calls)
    assert len(irecv) == len(isend) == WINDOW
    assert list(r["tag"][irecv]) == list(range(100, 100 + WINDOW)) == list(r["tag"][isend])
    assert np.all(r["request"][irecv] != 0) and np.all(r["request"][isend] != 0)
    assert len(set(r["request"][irecv])) == WINDOW  # live receives have handles of their own
    assert np.count_nonzero((names == "MPI_Waitall") & calls) == 1
    done = np.flatnonzero((names == "MPI_Waitall") & (r["kind"] == tr.COMPLETE))
    assert len(done) == 2 * WINDOW
    assert sorted(r["index"][done]) == list(range(2 * WINDOW))
    posts = t.posts()
    assert sorted(posts[done]) == sorted(list(irecv) + list(isend))
    for d in done:
        post = posts[d]
        assert r["request"][post] == r["request"][d]
        if post in irecv:  # the receive's status: who sent it, which tag, how much
            assert (r["peer"][d], r["tag"][d], r["bytes"][d]) == (peer, r["tag"][post], SIZE)
        # the completion index is the request's place in Waitall's array: receives first
        assert r["index"][d] == (list(irecv).index(post) if post in irecv else WINDOW + list(isend).index(post))
    # the collectives, last: Bcast of 64 doubles from rank 1, Allreduce of 16 ints
    tail = c[-2:]
    assert list(np.asarray(t.names, dtype=object)[tail["call"]]) == ["MPI_Bcast", "MPI_Allreduce"]
    assert (tail["bytes"][0], tail["peer"][0], tail["comm_size"][0]) == (512, 1, 2)
    assert (tail["bytes"][1], tail["peer"][1], tail["comm_size"][1]) == (64, -1, 2)


def test_the_variable_alone_traces_too(tmp_path):
    out = tmp_path / "direct"
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-tracecalls"),
                2, 8, 1], env={"LOGGP_TRACE": str(out)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [t.rank for t in tr.read_folder(out)] == [0, 1]


def preloaded(np, *args, env):
    """The program under mpiexec with libloggp.so preloaded by hand (no `loggp run` checks first)."""
    return run([installed("mpiexec"), "-n", str(np), *args],
               env={"LD_PRELOAD": str(Path(sys.prefix) / "lib" / "libloggp.so"), "LOGGP_QUIET": "1", **env})


def test_an_unwritable_trace_variable_stops_the_run_with_a_reason(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    program = [built("shim/tests/loggp-test-tracecalls"), 2, 8, 1]
    proc = preloaded(2, *program, env={"LOGGP_TRACE": str(blocker / "sub")})
    assert proc.returncode != 0
    assert f"cannot write a trace into LOGGP_TRACE={blocker / 'sub'}: Not a directory" in proc.stderr, proc.stderr
    assert not list(tmp_path.glob("**/trace.*"))
    # loggp run says so before it starts anything
    refused = run([installed("loggp"), "run", "-n", "2", "--", *program], env={"LOGGP_TRACE": str(blocker / "sub")})
    assert refused.returncode == 2 and f"LOGGP_TRACE={blocker / 'sub'}: " in refused.stderr, refused.stderr


def test_the_variable_makes_missing_parent_folders(tmp_path):
    out = tmp_path / "a" / "b"
    proc = preloaded(2, built("shim/tests/loggp-test-tracecalls"), 2, 8, 1, env={"LOGGP_TRACE": str(out)})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["trace.0.bin", "trace.1.bin"]


def test_a_reused_folder_holds_only_the_last_runs_traces(tmp_path):
    out = tmp_path / "tr"
    out.mkdir()
    # the unfinished file of a live process (this test's own) is another run's, still being written
    kept = ["notes.txt", "trace.02.bin", "trace.x.bin", f".trace.5.bin.tmp.{os.getpid()}"]
    for name in kept:
        (out / name).write_text("not ours")
    (out / "trace.7.bin").mkdir()  # not a file a rank wrote: left alone
    program = [built("shim/tests/loggp-test-ordering"), 2]
    assert preloaded(3, *program, env={"LOGGP_TRACE": str(out)}).returncode == 0
    proc = preloaded(2, *program, env={"LOGGP_TRACE": str(out)})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(["trace.0.bin", "trace.1.bin", "trace.7.bin", *kept])
    assert [tr.read(out / f"trace.{r}.bin").size for r in (0, 1)] == [2, 2]


@pytest.mark.parametrize("make, why", [
    (lambda p: (p / "f").write_text("x") and p / "f", "not a folder"),
    (lambda p: (p / "f").write_text("x") and p / "f" / "sub", "parent folder does not exist"),
    (lambda p: p / "missing" / "sub", "parent folder does not exist"),
    (lambda p: Path("/proc/self/loggp-trace"), "cannot write into"),
])
def test_a_bad_trace_folder_is_refused_before_launch(tmp_path, make, why):
    folder = make(tmp_path)
    marker = tmp_path / "ran"
    proc = run([installed("loggp"), "run", "-n", "2", "--trace", folder, "--", "touch", marker])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"--trace '{folder}'" in proc.stderr and why in proc.stderr, proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize("variable", [None, ""])
def test_no_trace_without_asking(tmp_path, variable):
    work = tmp_path / "work"
    work.mkdir()
    env = {} if variable is None else {"LOGGP_TRACE": variable}
    root_before = set(Path("/").glob("*trace.*.bin"))
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-tracecalls"),
                2, 8, 1], env=env, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == "", proc.stderr
    assert not list(tmp_path.glob("**/*trace.*"))
    assert set(Path("/").glob("*trace.*.bin")) == root_before
