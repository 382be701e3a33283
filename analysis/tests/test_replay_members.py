"""The replay of communicators whose ranks are not the world's: mapped to world ranks through
the members a version 4 trace lists, on hand-made traces whose times are known exactly (the
three replays of test_replay_matching.py, which holds the trace-making helpers)."""
import pytest

from loggp.analysis import loggops, predict, replay, synth, trace
from loggp.analysis.loggops import Params
from test_replay_matching import INIT, NAMES, P, PATH, Rank, _start, assert_times, replays, write  # this folder is on the path: no package

REVERSED, SUB = 0x84000004, 0x84000005


def test_a_reordered_world_sized_communicator_replays_through_its_membership(tmp_path):
    # a world-sized split in reverse order (test_replay_matching.py: the replay sticks without
    # its members), its members recorded: its rank 0 is world rank 1
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send", 0, 0, 8, comm=REVERSED)
    r1.call("MPI_Recv", 1, 0, 8, comm=REVERSED, done=[(0, (1, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1], comms={REVERSED: (1, 0)}), [100, PATH])
    sent = [op for op in replay.build(trace.read_folder(tmp_path)).programs[0] if op[0] == "isend"]
    assert [op[1] for op in sent] == [1]


def test_a_smaller_communicators_messages_go_to_its_members_world_ranks(tmp_path):
    # SUB is world ranks 2 and 0, in that order; rank 1 is not in it
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r2.call("MPI_Isend", 1, 4, 8, request=0x71, comm=SUB, size=2)
    r2.call("MPI_Wait", after=500, done=[(0x71, None)])
    r0.call("MPI_Irecv", 0, 4, 8, request=0x72, comm=SUB, size=2)
    r0.call("MPI_Wait", done=[(0x72, (0, 4, 8))])
    r1.call("MPI_Probe", 0, 4, took=700)
    assert_times(replays(tmp_path, [r0, r1, r2], comms={SUB: (2, 0)}), [PATH, 700, 600])
    programs = replay.build(trace.read_folder(tmp_path))
    assert programs.unmodelled == {"MPI_Probe": 1}
    assert predict.load(tmp_path).unmodelled == {"MPI_Probe": 1}
    assert programs.messages == 1


def test_persistent_requests_on_a_smaller_communicator_of_known_members_are_messages(tmp_path):
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r2.call("MPI_Send_init", 1, 9, 8, request=0x61, comm=SUB, size=2)
    r0.call("MPI_Recv_init", 0, 9, 8, request=0x62, comm=SUB, size=2)
    _start(r2, 0x61, nbytes=8, took=300)
    r2.call("MPI_Wait", done=[(0x61, None)])
    _start(r0, 0x62, took=50)
    r0.call("MPI_Wait", done=[(0x62, (0, 9, 8))])
    assert_times(replays(tmp_path, [r0, r1, r2], comms={SUB: (2, 0)}), [PATH, 0, 100])
    assert predict.load(tmp_path).unmodelled == {}


@pytest.mark.parametrize("name, root, nbytes", [("MPI_Bcast", 0, 8), ("MPI_Bcast", 1, 8), ("MPI_Allreduce", -1, 8)])
def test_a_collective_on_a_smaller_communicator_runs_among_its_members(tmp_path, name, root, nbytes):
    # 2 of 3 ranks (world 2 and 0): one flight between them, whichever the root; rank 1 takes no part
    ranks = [Rank(3) for _ in range(3)]
    for me in (0, 2):
        ranks[me].call(name, root, -1, nbytes, comm=SUB, size=2)
    got = replays(tmp_path, ranks, Params(L=1000.0), comms={SUB: (2, 0)})
    for how, ends in got.items():
        assert ends[1] == 0 and max(ends) == pytest.approx(1000.0), how
    for load in (predict.load, lambda folder: replay.build(trace.read_folder(folder))):
        assert load(tmp_path).collectives == {name[4:]: 2}
    if name == "MPI_Bcast":  # the root (world 2 for SUB's rank 0) only sends
        root_world = (2, 0)[root]
        ops = replay.build(trace.read_folder(tmp_path)).programs[root_world]
        assert [op[:2] for op in ops if op[0] in ("isend", "irecv")] == [("isend", 2 - root_world)]


def test_a_rank_outside_its_communicator_is_a_damaged_trace(tmp_path):
    # rank 1 of a 2-rank communicator is world rank 0; its rank 2 is none, though the run has 3
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r2.call("MPI_Send", 2, 0, 8, comm=SUB, size=2)
    write(tmp_path, [r0, r1, r2], comms={SUB: (2, 0)})
    with pytest.raises(trace.TraceError, match=r"trace\.2\.bin: .*record 0: a message with rank 2, not one of its "
                                               r"communicator's 2 ranks"):
        predict.load(tmp_path)
    with pytest.raises(trace.TraceError, match=r"trace\.2\.bin: a message with rank 2, not one of its "
                                               r"communicator's 2 ranks"):
        replay.build(trace.read_folder(tmp_path))


def test_a_collective_on_a_communicator_whose_members_leave_the_rank_out_is_a_damaged_trace(tmp_path):
    # rank 1's file lists no members for SUB (e.g. an intercommunicator's id that collides), the
    # others list members without it
    ranks = [Rank(3) for _ in range(3)]
    for r in ranks:
        r.call("MPI_Bcast", 0, -1, 8, comm=SUB, size=2)
    write(tmp_path, ranks, comms={SUB: (2, 0)})
    with pytest.raises(trace.TraceError, match=r"trace\.1\.bin: .*record 0: Bcast on communicator 0x84000005, "
                                               r"whose members do not include this rank 1"):
        predict.load(tmp_path)
    with pytest.raises(trace.TraceError, match=r"trace\.1\.bin: Bcast on communicator 0x84000005, whose members "
                                               r"\[2, 0\] do not include this rank 1"):
        replay.build(trace.read_folder(tmp_path))


def test_a_membership_the_ranks_disagree_on_is_unknown(tmp_path):
    # two communicators whose ids collide: neither membership is used, the calls keep their time
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r0.call("MPI_Send", 0, 0, 8, comm=SUB, size=2, took=40)
    r2.call("MPI_Recv", 1, 0, 8, comm=SUB, size=2, took=60, done=[(0, (1, 0, 8))])
    write(tmp_path, [r0, r1, r2])
    for me, members in ((0, (1, 0)), (2, (2, 0))):
        t = trace.read(tmp_path / f"trace.{me}.bin")
        synth.write_rank(t.path, me, 3, t.records, INIT, t.finalize_ns, names=NAMES, comms={SUB: members})
    assert trace.memberships(trace.read_folder(tmp_path)) == {}
    assert_times(replays_only(tmp_path), [40, 0, 60])


def replays_only(tmp_path, params=P):
    """End times of the three replays of the files already in tmp_path."""
    programs = replay.build(trace.read_folder(tmp_path)).programs
    return {"files": predict.load(tmp_path).simulate(params).end_ns,
            "core": loggops.simulate(programs, params).end_ns,
            "python": loggops.simulate_reference(programs, params).end_ns}
