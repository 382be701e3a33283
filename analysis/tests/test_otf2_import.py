"""`loggp predict` on OTF2 archives written through OTF2's writer API the way
Score-P lays them out (definitions, a location per rank, MPI events inside
Enter/Leave of MPI regions, user regions around them), and its refusals."""
import json

import otf2
import pytest

from loggp.analysis import loggops, otf2_import, predict, replay, schedules, trace, trace_input
from tests.testkit import installed, run

US = 1000


class ScorePArchive:
    """An archive as Score-P writes one: a system tree, a location group and a
    "Master thread" location per rank, the MPI COMM_LOCATIONS group, a COMM_GROUP and a
    communicator per MPI communicator, a region per MPI function and one for main."""

    def __init__(self, folder, ranks, ticks_per_s=10 ** 9, communicators=None):
        self.ctx = otf2.writer.open(str(folder), timer_resolution=ticks_per_s)
        self.archive = self.ctx.__enter__()
        self.scale = ticks_per_s / 1e9
        d = self.archive.definitions
        node = d.system_tree_node("machine", class_name="machine")
        self.locations = [d.location("Master thread", type=otf2.LocationType.CPU_THREAD,
                                     group=d.location_group(f"MPI Rank {r}", system_tree_parent=node,
                                                            location_group_type=otf2.LocationGroupType.PROCESS))
                          for r in range(ranks)]
        d.group("", group_type=otf2.GroupType.COMM_LOCATIONS, paradigm=otf2.Paradigm.MPI, members=self.locations)
        self.comms = {}
        for name, members in (communicators or {"MPI_COMM_WORLD": list(range(ranks))}).items():
            group = d.group("", group_type=otf2.GroupType.COMM_GROUP, paradigm=otf2.Paradigm.MPI, members=members)
            self.comms[name] = d.comm(name, group=group)
        self.regions = {}
        self.writers = [self.archive.event_writer_from_location(loc) for loc in self.locations]

    def region(self, name):
        if name not in self.regions:
            mpi = name.startswith("MPI_")
            self.regions[name] = self.archive.definitions.region(
                name, paradigm=otf2.Paradigm.MPI if mpi else otf2.Paradigm.USER,
                region_role=otf2.RegionRole.POINT2POINT if mpi else otf2.RegionRole.FUNCTION)
        return self.regions[name]

    def t(self, ns):
        return int(round(ns * self.scale))

    def call(self, rank, name, start_ns, end_ns, *events):
        """Enter, each event (a method name of the event writer and its arguments after
        the time; a leading "end" puts it at the Leave's time), Leave."""
        w = self.writers[rank]
        w.enter(self.t(start_ns), self.region(name))
        for ev in events:
            at = end_ns if ev[0] == "end" else start_ns
            method, *args = ev[1:] if ev[0] == "end" else ev
            getattr(w, method)(self.t(at), *args)
        w.leave(self.t(end_ns), self.region(name))

    def close(self):
        self.ctx.__exit__(None, None, None)


def ping_pong(folder, n, ticks_per_s=10 ** 9):
    """n round trips of 8 B between two ranks, each rank computing 10 us between its
    calls; rank 1 receives with Irecv + Wait, rank 0 with Recv; an Allreduce at the end."""
    a = ScorePArchive(folder, 2, ticks_per_s)
    world = a.comms["MPI_COMM_WORLD"]
    ends = []
    for rank in (0, 1):
        w = a.writers[rank]
        w.enter(0, a.region("main"))
        a.call(rank, "MPI_Init", 0, 5 * US)
        t = 5 * US
        for k in range(n):
            t += 10 * US
            if rank == 0:
                a.call(rank, "MPI_Send", t, t + US, ("mpi_send", 1, world, 7, 8))
                a.call(rank, "MPI_Recv", t + 2 * US, t + 30 * US, ("end", "mpi_recv", 1, world, 7, 8))
            else:
                a.call(rank, "MPI_Irecv", t, t + US, ("mpi_irecv_request", 2 * k))
                a.call(rank, "MPI_Wait", t + 2 * US, t + 12 * US, ("end", "mpi_irecv", 0, world, 7, 8, 2 * k))
                a.call(rank, "MPI_Isend", t + 13 * US, t + 14 * US, ("mpi_isend", 0, world, 7, 8, 2 * k + 1))
                a.call(rank, "MPI_Waitall", t + 15 * US, t + 16 * US, ("end", "mpi_isend_complete", 2 * k + 1))
            t += 30 * US
        a.call(rank, "MPI_Allreduce", t, t + 5 * US, ("mpi_collective_begin",),
               ("end", "mpi_collective_end", otf2.CollectiveOp.ALLREDUCE, world, otf2.Undefined.UINT32.value,
                16, 16))
        a.call(rank, "MPI_Finalize", t + 10 * US, t + 20 * US)
        w.leave(a.t(t + 20 * US), a.region("main"))
        ends.append(t + 10 * US)
    a.close()
    return ends


@pytest.mark.parametrize("ticks_per_s", [10 ** 9, 10 ** 6])
def test_a_scorep_archive_replays_as_its_program(tmp_path, ticks_per_s):
    n = 20
    ends = ping_pong(tmp_path / "pp", n, ticks_per_s)
    traces = trace_input.read(tmp_path / "pp")
    assert [t.rank for t in traces] == [0, 1]
    assert [t.init_ns for t in traces] == [5 * US] * 2 and [t.finalize_ns for t in traces] == ends
    programs = predict.load(tmp_path / "pp" / "traces.otf2")
    assert programs.unmodelled == {} and programs.collectives == {"Allreduce": 2}  # one per rank
    assert programs.messages == 2 * n + 2  # the round trips, and the allreduce's exchange
    # past the program's slack every half round trip waits each added L, and so does the allreduce
    added = predict.runtime(programs, predict.DEFAULT_MACHINE, L=100e3) - predict.runtime(
        programs, predict.DEFAULT_MACHINE, L=50e3)
    assert added == pytest.approx((2 * n + 1) * 50e3, rel=1e-6)


def test_point_to_point_on_a_communicator_goes_to_its_members_world_ranks(tmp_path):
    """A communicator whose rank 0 is world rank 1: the converted trace keeps its ranks and lists
    its members, through which the replay translates them."""
    a = ScorePArchive(tmp_path / "sub", 2, communicators={"MPI_COMM_WORLD": [0, 1], "swapped": [1, 0]})
    swapped = a.comms["swapped"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 0, swapped, 3, 64))     # to its rank 0: world 1
    a.call(1, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 1, swapped, 3, 64))  # from its rank 1: world 0
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    traces = trace_input.read(tmp_path / "sub")
    send = traces[0].records[0]
    assert send["peer"] == 0 and send["comm_size"] == 2
    assert traces[0].comms == traces[1].comms == {int(send["comm_id"]): (1, 0)}
    assert [op[1] for op in replay.build(traces).programs[0] if op[0] == "isend"] == [1]
    programs = predict.load(tmp_path / "sub")
    assert programs.messages == 1 and programs.unmodelled == {}
    predict.runtime(programs, predict.DEFAULT_MACHINE)  # matches: no deadlock


@pytest.mark.parametrize("name", ["MPI_Ssend", "MPI_Issend"])
def test_a_synchronous_send_is_named_by_its_region_and_waits_for_the_receiver(tmp_path, name):
    """Rank 0 sends 8 B synchronously at 10 us (blocking, or Issend + a Wait at 12 us) and calls
    MPI_Finalize at 31 us; rank 1 receives it at 30 us and calls MPI_Finalize at 40 us."""
    a = ScorePArchive(tmp_path / "sync", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    if name == "MPI_Ssend":
        a.call(0, name, 10 * US, 11 * US, ("mpi_send", 1, world, 3, 8))
    else:
        a.call(0, name, 10 * US, 11 * US, ("mpi_isend", 1, world, 3, 8, 4))
        a.call(0, "MPI_Wait", 12 * US, 13 * US, ("end", "mpi_isend_complete", 4))
    a.call(1, "MPI_Recv", 30 * US, 31 * US, ("end", "mpi_recv", 0, world, 3, 8))
    a.call(0, "MPI_Finalize", 31 * US, 32 * US)
    a.call(1, "MPI_Finalize", 40 * US, 41 * US)
    a.close()
    traces = trace_input.read(tmp_path / "sync")
    assert name in list(traces[0].call_names())
    # by hand, L = 10 us alone, from MPI_Init's end: injected at 9 us; rank 1 takes it at 29 us and
    # its answer is back at 39 us; then rank 0's 20 us (Ssend) or 18 us (Issend's Wait) to MPI_Finalize.
    # A standard send would be done at its injection: 38 us, rank 1's.
    for programs in (predict.load(tmp_path / "sync"), replay.build(traces)):
        assert predict.runtime(programs, ONLY_L) == (59 if name == "MPI_Ssend" else 57) * US


def test_the_regions_name_the_exchange_and_the_completion_calls(tmp_path):
    """MPI_Sendrecv_replace, MPI_Waitany and MPI_Test keep their names; a completion call's
    completions are numbered in their order."""
    a = ScorePArchive(tmp_path / "names", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        other = 1 - rank
        a.call(rank, "MPI_Init", 0, US)
        a.call(rank, "MPI_Sendrecv_replace", 10 * US, 12 * US, ("mpi_send", other, world, 1, 8),
               ("end", "mpi_recv", other, world, 1, 8))
        a.call(rank, "MPI_Irecv", 13 * US, 14 * US, ("mpi_irecv_request", 1))
        a.call(rank, "MPI_Irecv", 14 * US, 15 * US, ("mpi_irecv_request", 2))
        a.call(rank, "MPI_Isend", 15 * US, 16 * US, ("mpi_isend", other, world, 2, 8, 3))
        a.call(rank, "MPI_Isend", 16 * US, 17 * US, ("mpi_isend", other, world, 2, 8, 4))
        a.call(rank, "MPI_Waitall", 18 * US, 19 * US, ("end", "mpi_irecv", other, world, 2, 8, 1),
               ("end", "mpi_irecv", other, world, 2, 8, 2))
        a.call(rank, "MPI_Waitany", 20 * US, 21 * US, ("end", "mpi_isend_complete", 3))
        a.call(rank, "MPI_Test", 22 * US, 23 * US, ("end", "mpi_isend_complete", 4))
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    for t in trace_input.read(tmp_path / "names"):
        names = list(t.call_names())
        assert names.count("MPI_Sendrecv_replace") == 2, names
        assert names.count("MPI_Waitany") == 2 and names.count("MPI_Test") == 2, names
        waitall = t.records[[n == "MPI_Waitall" for n in names]]
        assert list(waitall["kind"]) == [trace.CALL, trace.COMPLETE, trace.COMPLETE]
        assert list(waitall["index"][1:]) == [0, 1]


def test_a_communicator_of_some_ranks_sends_through_its_members(tmp_path):
    """Three ranks; a communicator of world ranks 2 and 0 (in that order): world rank 0 sends to
    its rank 0 (world 2), which receives from its rank 1 (world 0)."""
    a = ScorePArchive(tmp_path / "part", 3, communicators={"MPI_COMM_WORLD": [0, 1, 2], "pair": [2, 0]})
    pair = a.comms["pair"]
    for rank in (0, 1, 2):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 0, pair, 3, 64))
    a.call(2, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 1, pair, 3, 64))
    for rank in (0, 1, 2):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    traces = trace_input.read(tmp_path / "part")
    send, recv = traces[0].records[0], traces[2].records[0]
    # peers stay the communicator's ranks, checked against its size, and its members are listed
    assert (send["peer"], send["comm_size"]) == (0, 2) and (recv["peer"], recv["comm_size"]) == (1, 2)
    assert traces[0].comms == traces[2].comms == {int(send["comm_id"]): (2, 0)} and traces[1].comms == {}
    for programs in (predict.load(tmp_path / "part"), replay.build(traces)):
        assert programs.messages == 1 and programs.unmodelled == {}
        # 9 us to the send, L, then rank 2's 10 us from its receive's end to MPI_Finalize
        assert predict.runtime(programs, ONLY_L) == 9 * US + 10 * US + 10 * US


@pytest.mark.parametrize("op", ["SCAN", "EXSCAN"])
def test_a_scans_size_is_read_at_each_ranks_place_in_its_communicator(tmp_path, op):
    """A scan of 8 B a rank on a communicator whose rank 0 is world rank 1: Score-P counts a scan's
    bytes by the rank's place in the communicator (collective_bytes), not in the world."""
    a = ScorePArchive(tmp_path / "scan", 2, communicators={"MPI_COMM_WORLD": [0, 1], "swapped": [1, 0]})
    swapped = a.comms["swapped"]
    # (sent, received) at communicator rank 0 and 1, 2 ranks, 8 B each
    sizes = {"SCAN": [(16, 8), (8, 16)], "EXSCAN": [(8, 0), (0, 8)]}[op]
    for rank in (0, 1):
        me = 1 - rank
        a.call(rank, "MPI_Init", 0, US)
        a.call(rank, "MPI_" + op.capitalize(), 10 * US, 12 * US, ("mpi_collective_begin",),
               ("end", "mpi_collective_end", getattr(otf2.CollectiveOp, op), swapped, otf2.Undefined.UINT32.value,
                *sizes[me]))
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    got = [int(t.records[0]["bytes"]) for t in trace_input.read(tmp_path / "scan")]
    assert got == [8, 8]


def test_a_peer_past_its_communicator_is_kept_as_recorded(tmp_path):
    """A damaged archive's send to rank 2 of a two-rank communicator: read, the peer as it was
    recorded beside the communicator's size, which the replay's check names; never a crash."""
    a = ScorePArchive(tmp_path / "past", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 2, world, 3, 8))
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    send = trace_input.read(tmp_path / "past")[0].records[0]
    assert (send["peer"], send["comm_size"]) == (2, 2)
    with pytest.raises(trace.TraceError, match="a message with rank 2, not one of the run's 2 ranks"):
        predict.load(tmp_path / "past")


def test_the_run_spans_mpi_init_thread_to_mpi_finalize_or_else_the_first_and_last_events(tmp_path):
    a = ScorePArchive(tmp_path / "thread", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "main", 0, US)
        a.call(rank, "MPI_Init_thread", 2 * US, 7 * US)
        a.call(rank, "MPI_Send" if rank == 0 else "MPI_Recv", 10 * US, 12 * US,
               ("mpi_send", 1, world, 3, 8) if rank == 0 else ("end", "mpi_recv", 0, world, 3, 8))
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
        a.call(rank, "main", 40 * US, 41 * US)
    a.close()
    traces = trace_input.read(tmp_path / "thread")
    assert [(t.init_ns, t.finalize_ns) for t in traces] == [(7 * US, 30 * US)] * 2
    # no MPI_Init or MPI_Finalize recorded: the run spans the rank's first and last events
    a = ScorePArchive(tmp_path / "bare", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "main", 3 * US, 4 * US)
        a.call(rank, "MPI_Send" if rank == 0 else "MPI_Recv", 10 * US, 12 * US,
               ("mpi_send", 1, world, 3, 8) if rank == 0 else ("end", "mpi_recv", 0, world, 3, 8))
        a.call(rank, "main", 20 * US, 21 * US)
    a.close()
    assert [(t.init_ns, t.finalize_ns) for t in trace_input.read(tmp_path / "bare")] == [(3 * US, 21 * US)] * 2


def test_an_mpi_event_outside_any_region_that_predict_cannot_model_makes_no_record(tmp_path):
    a = ScorePArchive(tmp_path / "loose", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 1, world, 3, 8))
    a.call(1, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 0, world, 3, 8))
    a.writers[1].mpi_request_cancelled(a.t(21 * US), 5)
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    notes = []
    traces = otf2_import.read(tmp_path / "loose", notes)
    assert [len(t.records) for t in traces] == [1, 2]   # the send; the receive and its completion
    assert any("MpiRequestCancelled x1" in n for n in notes), notes


def test_an_mpi_region_entered_again_inside_itself_is_one_call(tmp_path):
    """A region Score-P enters again before leaving it (a wrapper recorded twice): the call spans
    the outer Enter and Leave, with the events of both."""
    a = ScorePArchive(tmp_path / "nested", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    w = a.writers[0]
    w.enter(a.t(10 * US), a.region("MPI_Send"))
    a.call(0, "MPI_Send", 11 * US, 12 * US)
    w.mpi_send(a.t(13 * US), 1, world, 3, 8)
    w.leave(a.t(15 * US), a.region("MPI_Send"))
    a.call(1, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 0, world, 3, 8))
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    send = trace_input.read(tmp_path / "nested")[0].records
    assert len(send) == 1 and (send[0]["start_ns"], send[0]["end_ns"]) == (10 * US, 15 * US)
    assert send[0]["peer"] == 1 and send[0]["bytes"] == 8


def test_a_collective_on_a_smaller_communicator_runs_among_its_members(tmp_path):
    """A Bcast from rank 0 of a communicator of world ranks 2 and 0: one message, 2 to 0, and
    rank 1 takes no part."""
    a = ScorePArchive(tmp_path / "pair", 3, communicators={"MPI_COMM_WORLD": [0, 1, 2], "pair": [2, 0]})
    pair = a.comms["pair"]
    for rank in range(3):
        a.call(rank, "MPI_Init", 0, US)
    for rank in (2, 0):
        a.call(rank, "MPI_Bcast", 10 * US, 20 * US, ("mpi_collective_begin",),
               ("end", "mpi_collective_end", otf2.CollectiveOp.BCAST, pair, 0, 64 if rank == 2 else 0, 64))
    for rank in range(3):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    traces = trace_input.read(tmp_path / "pair")
    assert traces[1].comms == {} and traces[0].comms == traces[2].comms
    programs = replay.build(traces)
    assert programs.collectives == {"Bcast": 2} and programs.unmodelled == {}
    assert [[op[:2] for op in p if op[0] in ("isend", "irecv")] for p in programs.programs] == \
        [[("irecv", 2)], [], [("isend", 0)]]
    files = predict.load(tmp_path / "pair")
    assert files.collectives == {"Bcast": 2} and files.unmodelled == {}


def nonblocking_collective(folder, name, region="own"):
    """Two ranks post the nonblocking collective name as Score-P records one (a
    NonBlockingCollectiveRequest in its region: region "own" is name's, None no region at all),
    compute 9 us and complete it in an MPI_Wait of 5 us. Its completion says the operation of
    its blocking form (a neighbourhood collective's, which no OTF2 operation names, that of the
    collective it is a neighbourhood form of)."""
    a = ScorePArchive(folder, 2)
    world = a.comms["MPI_COMM_WORLD"]
    base = schedules.base_name(name) or name.removeprefix("MPI_Ineighbor_").capitalize()
    rooted = base in ("Bcast", "Reduce", "Gather", "Gatherv", "Scatter", "Scatterv")
    root = 0 if rooted else otf2.Undefined.UINT32.value
    region = name if region == "own" else region
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
        if region is None:
            a.writers[rank].non_blocking_collective_request(a.t(10 * US), 7)
        else:
            a.call(rank, region, 10 * US, 11 * US, ("non_blocking_collective_request", 7))
        a.call(rank, "MPI_Wait", 20 * US, 25 * US, ("end", "non_blocking_collective_complete",
                                                    getattr(otf2.CollectiveOp, base.upper()), world, root, 16, 16, 7))
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    return folder


# L alone, 10 us: what the hand-made nonblocking collectives replay in (nonblocking_collective)
ONLY_L = loggops.Params(L=10 * US)
# MPI-4's nonblocking collectives (its chapters 6 and 8), written out here as the standard lists them
NONBLOCKING = ["MPI_Ibarrier", "MPI_Ibcast", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv",
               "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw",
               "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iscan",
               "MPI_Iexscan", "MPI_Ineighbor_allgather", "MPI_Ineighbor_allgatherv", "MPI_Ineighbor_alltoall",
               "MPI_Ineighbor_alltoallv", "MPI_Ineighbor_alltoallw"]


def test_the_nonblocking_collectives_are_the_standards():
    assert trace.NONBLOCKING_COLLECTIVES == set(NONBLOCKING) and set(NONBLOCKING) <= trace.POSTING
    # those the schedules know are the nonblocking forms of every blocking collective they know
    assert {schedules.base_name(n) for n in NONBLOCKING} - {None} == set(schedules.SCHEDULES)
    assert all(schedules.base_name(n) is None for n in NONBLOCKING if "neighbor" in n)


@pytest.mark.parametrize("name", NONBLOCKING)
def test_every_nonblocking_collective_completed_by_a_wait_replays(tmp_path, name):
    """MPI-3/4's nonblocking collectives, each posted and completed by a Wait: one whose blocking form
    the schedules know is modelled as done at its post; the others (the neighbourhood ones) are kept
    at their traced time and counted unmodelled. The post never goes unmatched, in the native replay
    (predict.load) as in the Python one (replay.build)."""
    archive = nonblocking_collective(tmp_path / "nbc", name)
    base = schedules.base_name(name)
    for programs in (predict.load(archive), replay.build(trace_input.read(archive))):
        if base is not None:
            assert programs.collectives == {base: 2} and programs.unmodelled == {}
            # by hand, each rank: 9 us from MPI_Init's end to the post, whose one message (or the
            # other rank's) takes L = 10 us at o = g = G = 0; 9 us of computation to the Wait, done
            # at once; 5 us to MPI_Finalize
            assert predict.runtime(programs, ONLY_L) == 9 * US + 10 * US + 9 * US + 5 * US
        else:
            assert programs.collectives == {} and programs.unmodelled == {name: 2}
            # the post's traced 1 us instead of the message; its Wait's time is in that kept time
            assert predict.runtime(programs, ONLY_L) == 9 * US + 1 * US + 9 * US + 5 * US


@pytest.mark.parametrize("region", [None, "MPI_Foo"])
def test_a_nonblocking_collective_outside_its_region_is_named_by_its_operation(tmp_path, region):
    """A NonBlockingCollectiveRequest outside any region, or in a region that names no
    nonblocking collective, is the nonblocking form of the operation its completion says."""
    archive = nonblocking_collective(tmp_path / "nbc", "MPI_Iscan", region)
    traces = trace_input.read(archive)
    assert list(traces[0].call_names()).count("MPI_Iscan") == 1
    posted = 0 if region is None else 1 * US  # an event outside any region takes no time
    for programs in (predict.load(archive), replay.build(traces)):
        assert programs.collectives == {"Scan": 2}
        assert predict.runtime(programs, ONLY_L) == 9 * US + 10 * US + (10 * US - posted) + 5 * US


def test_the_command_predicts_from_an_archive(tmp_path):
    ping_pong(tmp_path / "pp", 10)
    for given in (tmp_path / "pp", tmp_path / "pp" / "traces.otf2"):
        out = tmp_path / "p.json"
        proc = run([installed("loggp"), "predict", given, "--L", "10us", "--json", out])
        assert proc.returncode == 0, proc.stderr
        result = json.loads(out.read_text())
        assert result["ranks"] == 2 and result["messages"] == 22
        assert result["knobs"]["L"]["points"][0]["slowdown_percent"] > 0


def test_events_predict_cannot_model_are_named(tmp_path):
    a = ScorePArchive(tmp_path / "odd", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 1, world, 3, 64))
    a.call(1, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 0, world, 3, 64))
    a.call(1, "MPI_Cancel", 21 * US, 22 * US, ("mpi_request_cancelled", 5))
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    proc = run([installed("loggp"), "predict", tmp_path / "odd", "--L", "1us"])
    assert proc.returncode == 0, proc.stderr
    assert "note: MPI events predict cannot model, their calls kept as computation: MpiRequestCancelled x1" \
        in proc.stderr
    assert "kept at their traced time (not modelled): MPI_Cancel x1" in proc.stdout


def test_an_archive_without_mpi_events_is_refused(tmp_path):
    a = ScorePArchive(tmp_path / "plain", 2)
    for rank in (0, 1):
        a.call(rank, "main", 0, 100 * US)
    a.close()
    proc = run([installed("loggp"), "predict", tmp_path / "plain", "--L", "1us"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"{tmp_path / 'plain' / 'traces.otf2'}: no MPI events in it (regions: main)" in proc.stderr


def test_an_archive_of_calls_predict_cannot_model_is_refused(tmp_path):
    a = ScorePArchive(tmp_path / "rma", 2)
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
        a.call(rank, "MPI_Win_fence", 10 * US, 20 * US)
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    proc = run([installed("loggp"), "predict", tmp_path / "rma", "--L", "1us"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "no MPI call predict can model: its MPI calls are MPI_Win_fence x2" in proc.stderr


def test_foreign_and_truncated_files_are_named(tmp_path):
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "traces.otf2").write_text("not a trace\n")
    proc = run([installed("loggp"), "predict", tmp_path / "foreign" / "traces.otf2", "--L", "1us"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"{tmp_path / 'foreign' / 'traces.otf2'}: not an OTF2 anchor file" in proc.stderr
    assert "expected an OTF2 archive's anchor file" in proc.stderr

    ping_pong(tmp_path / "cut", 50)
    events = tmp_path / "cut" / "traces" / "1.evt"
    events.write_bytes(events.read_bytes()[:200])
    proc = run([installed("loggp"), "predict", tmp_path / "cut", "--L", "1us"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"{events}: trunc" in proc.stderr or f"{events}: truncated or damaged OTF2 event file" in proc.stderr

    ping_pong(tmp_path / "cutdef", 2)
    defs = tmp_path / "cutdef" / "traces.def"
    defs.write_bytes(defs.read_bytes()[:40])
    proc = run([installed("loggp"), "predict", tmp_path / "cutdef", "--L", "1us"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert f"{defs}: truncated or damaged OTF2 definitions" in proc.stderr
