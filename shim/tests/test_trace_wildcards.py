"""A traced run that receives by wildcard (loggp-test-ordering: MPI_ANY_SOURCE and
MPI_ANY_TAG receives after an Iprobe, on MPI_COMM_WORLD and a duplicate, eager and
rendezvous sizes): each receive's completion must name the source and tag it got, so
that the replay matches every message, in the core and in Python alike."""
import numpy as np
import pytest

from loggp.analysis import loggops, predict, replay, trace as tr
from tests.testkit import built, installed, run

MESSAGES = 16  # per pair and communicator
ANY_SOURCE, ANY_TAG = -2, -1


# Under the PMPI engine MPICH gives rank 0 one more internal communicator than rank 1, so the
# duplicate's handle differs between them: the trace's comm_id must not (shim/src/pmpi/comms.c).
@pytest.mark.parametrize("engine", ["libfabric", "pmpi"])
def test_wildcard_receives_are_traced_with_what_they_got_and_all_replay(tmp_path, engine):
    out = tmp_path / "trace"
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--engine", engine, "--trace", out, "--",
                built("shim/tests/loggp-test-ordering"), MESSAGES])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ordering OK {MESSAGES * 2 * 2}" in proc.stdout
    traces = tr.read_folder(out)
    ids = []
    for t in traces:
        r, names = t.records, t.call_names()
        calls = (names == "MPI_Recv") & (r["kind"] == tr.CALL)
        asked = r[calls]
        # both ways of receiving were taken: by wildcard, and by the source and tag probed
        assert np.any((asked["peer"] == ANY_SOURCE) & (asked["tag"] == ANY_TAG))
        assert np.any(asked["peer"] == 1 - t.rank)
        got = r[(names == "MPI_Recv") & (r["kind"] == tr.COMPLETE)]
        assert len(got) == len(asked) == MESSAGES * 2
        assert set(got["peer"]) == {1 - t.rank}
        assert set(got["tag"]) == set(range(MESSAGES))
        assert len(set(asked["comm_id"])) == 2  # the world and its duplicate
        ids.append(sorted(set(asked["comm_id"])))
    assert ids[0] == ids[1]  # each communicator has one id on both ranks
    programs = replay.build(traces)
    p2p = [op for prog in programs.programs for op in prog
           if op[0] in ("isend", "irecv") and not isinstance(op[2][1], tuple)]  # not a collective's
    assert sum(op[0] == "isend" for op in p2p) == sum(op[0] == "irecv" for op in p2p) == 2 * MESSAGES * 2
    params = loggops.Params(o_s=100.0, o_r=200.0, L=1000.0, G=0.01, S=4096)
    want = loggops.simulate_reference(programs.programs, params)
    got = predict.load(out).simulate(params)
    assert got.end_ns == pytest.approx(want.end_ns, rel=1e-12)


# loggp-test-somecalls: per phase rank 0 posts a receive of tag 99 (sent last) at position 0 and three
# wildcard receives at positions 1-3, which get tags 10, 11 and 12 in post order; phases complete them by
# MPI_Waitsome, MPI_Testsome and MPI_Waitany, so a call's k-th status is that of position indices[k].
SOME_CALLS = ("MPI_Waitsome", "MPI_Testsome", "MPI_Waitany")


def test_completions_out_of_the_arrays_order_are_traced_with_their_own_request_and_status(tmp_path):
    out = tmp_path / "trace"
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--trace", out, "--",
                built("shim/tests/loggp-test-somecalls")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "somecalls OK" in proc.stdout
    traces = tr.read_folder(out)
    t = traces[0]
    r, names, posts = t.records, t.call_names(), t.posts()
    irecvs = [i for i in range(len(r)) if names[i] == "MPI_Irecv" and r[i]["kind"] == tr.CALL]
    assert len(irecvs) == 4 * len(SOME_CALLS)
    got = {}  # Irecv record -> (source, tag) its completion says
    for j in range(len(r)):
        if r[j]["kind"] == tr.COMPLETE and names[j] in SOME_CALLS:
            assert posts[j] >= 0, f"record {j}: a {names[j]} completion pairs with no post"
            got[int(posts[j])] = (int(r[j]["peer"]), int(r[j]["tag"]))
    for phase, name in enumerate(SOME_CALLS):
        posted = irecvs[4 * phase:4 * phase + 4]
        # each receive's completion names it (its handle) and what it received
        assert [got.get(i) for i in posted] == [(1, 99), (1, 10), (1, 11), (1, 12)], name
        completed_by = {names[j] for j in range(len(r)) if r[j]["kind"] == tr.COMPLETE and posts[j] in posted}
        assert completed_by == {name}
    # and the replay matches every message, in the core and in Python alike
    programs = replay.build(traces)
    params = loggops.Params(o_s=100.0, o_r=200.0, L=1000.0, G=0.01, S=4096)
    want = loggops.simulate_reference(programs.programs, params)
    assert predict.load(out).simulate(params).end_ns == pytest.approx(want.end_ns, rel=1e-12)
