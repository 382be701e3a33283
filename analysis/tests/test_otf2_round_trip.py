"""A trace exported to OTF2 and read back predicts what the trace itself predicts:
a real traced run (loggp-test-tracecalls: ping-pong, a window of Isend/Irecv,
collectives) and a hand-made program of every call the export writes."""
import pytest

from loggp.analysis import otf2_export, predict, replay, schedules, trace, trace_input, trace_write
from test_otf2_export import program  # this folder is on the path: no package
from test_otf2_import import NONBLOCKING, ONLY_L, US
from tests.testkit import built, installed, run

SETTINGS = {"L": [1e3, 10e3, 50e3], "o": [1e3, 10e3], "G": [0.5, 2.0]}


def exported(folder, out):
    proc = run([installed("loggp"), "trace", "export", "--otf2", folder, out])
    assert proc.returncode == 0, proc.stderr
    return out


def same_predictions(folder, archive):
    original = replay.build(trace.read_folder(folder))
    back = replay.build(trace_input.read(archive))
    assert back.messages == original.messages and back.collectives == original.collectives
    assert back.unmodelled == original.unmodelled
    assert back.traced_ns == original.traced_ns  # nanoseconds both ways: the clock's resolution is kept
    machine = predict.DEFAULT_MACHINE
    assert predict.runtime(back, machine) == pytest.approx(predict.runtime(original, machine), abs=1.0)
    for knob, deltas in SETTINGS.items():
        for (d, a), (_, b) in zip(predict.slowdowns(original, machine, knob, deltas),
                                  predict.slowdowns(back, machine, knob, deltas)):
            assert b == pytest.approx(a, abs=1.0 / original.traced_ns), (knob, d)


def test_a_traced_run_round_trips(tmp_path):
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--trace", tmp_path / "tr", "--",
                built("shim/tests/loggp-test-tracecalls"), 50, 8, 4], timeout=300)
    assert proc.returncode == 0, proc.stderr
    same_predictions(tmp_path / "tr", exported(tmp_path / "tr", tmp_path / "otf2"))


def test_every_exported_call_round_trips(tmp_path):
    trace_write.write_folder(tmp_path / "tr", [program(0), program(1)])
    archive = exported(tmp_path / "tr", tmp_path / "otf2")
    same_predictions(tmp_path / "tr", archive)
    again = exported(archive, tmp_path / "otf2-again")  # an archive exports as well as a trace folder
    same_predictions(tmp_path / "tr", again)


def test_an_archive_exports_the_same_goal_schedule(tmp_path):
    trace_write.write_folder(tmp_path / "tr", [program(0), program(1)])
    archive = exported(tmp_path / "tr", tmp_path / "otf2")
    schedules = []
    for source, out in ((tmp_path / "tr", tmp_path / "a.goal"), (archive, tmp_path / "b.goal")):
        proc = run([installed("loggp"), "trace", "export", "--goal", source, out])
        assert proc.returncode == 0, proc.stderr
        schedules.append([ln for ln in out.read_text().splitlines() if not ln.startswith("//")])
    assert schedules[0] == schedules[1] and any(" send " in ln for ln in schedules[0])


def nonblocking_program(rank, name):
    """Rank rank of two posting the nonblocking collective name at 10 us (1 us long) and completing it
    in an MPI_Wait from 20 to 25 us; MPI_Init ends at 1 us, MPI_Finalize starts at 30 us."""
    rooted = schedules.base_name(name) in ("Bcast", "Reduce", "Gather", "Gatherv", "Scatter", "Scatterv")
    rows = [{"call": name, "start_ns": 10 * US, "end_ns": 11 * US, "comm_id": trace_write.WORLD, "comm_size": 2,
             "bytes": 8, "peer": 0 if rooted else -1, "request": 0x30 + rank},
            {"call": "MPI_Wait", "start_ns": 20 * US, "end_ns": 25 * US},
            {"call": "MPI_Wait", "kind": trace.COMPLETE, "start_ns": 20 * US, "end_ns": 25 * US,
             "request": 0x30 + rank, "index": 0}]
    return trace_write.make(rank, 2, US, 30 * US, rows)


@pytest.mark.parametrize("name", NONBLOCKING)
def test_every_nonblocking_collective_replays_and_round_trips(tmp_path, name):
    """Each of MPI-4's nonblocking collectives in our own format replays as it does from an OTF2 archive
    (test_otf2_import): modelled as done at its post where the schedules know its blocking form (its
    message takes L, 33 us in all), else kept at its traced time (24 us: the Wait's time is in the
    post's), in the native replay (predict.load) and the Python one; exported to OTF2 and read back it
    replays the same. A neighbourhood collective is exported with Enter/Leave only (no OTF2 operation
    names it), so its Wait comes back completing nothing and keeps its traced 5 us."""
    trace_write.write_folder(tmp_path / "tr", [nonblocking_program(0, name), nonblocking_program(1, name)])
    otf2_export.write(trace.read_folder(tmp_path / "tr"), tmp_path / "otf2")
    known = schedules.base_name(name) is not None
    original = [predict.load(tmp_path / "tr"), replay.build(trace.read_folder(tmp_path / "tr"))]
    back = [predict.load(tmp_path / "otf2"), replay.build(trace_input.read(tmp_path / "otf2"))]
    for programs in original + back:
        assert programs.collectives == ({schedules.base_name(name): 2} if known else {})
        assert programs.unmodelled == ({} if known else {name: 2})
    for programs in original:
        assert predict.runtime(programs, ONLY_L) == (33 if known else 24) * US
    for programs in back:
        assert predict.runtime(programs, ONLY_L) == (33 if known else 24 + 5) * US


REVERSED, PAIR = 0x20000011, 0x20000012  # a split of 3 ranks with reversed keys; world ranks 2 and 0


def reordered_program(rank):
    """One rank of a program on communicators whose ranks are not the world's: on REVERSED (its
    rank k is world rank 2-k) a Sendrecv to its next rank and a Bcast from its rank 0; on PAIR
    (world ranks 2, 0) an Allreduce and a Barrier."""
    me = 2 - rank  # on REVERSED
    rows, t = [], 10 * US

    def call(name, comm, size, **fields):
        nonlocal t
        rows.append({"call": name, "start_ns": t, "end_ns": t + US, "comm_id": comm, "comm_size": size, **fields})
        t += 5 * US

    call("MPI_Sendrecv", REVERSED, 3, peer=(me + 1) % 3, tag=4, bytes=8 * (rank + 1))
    before = 2 - (me + 2) % 3  # the world rank of my rank before on REVERSED
    rows.append({**rows[-1], "kind": trace.COMPLETE, "index": -1, "peer": (me + 2) % 3, "tag": 4,
                 "bytes": 8 * (before + 1), "comm_id": 0, "comm_size": 0})
    call("MPI_Bcast", REVERSED, 3, peer=0, bytes=64)
    if rank in (2, 0):
        call("MPI_Allreduce", PAIR, 2, bytes=16)
        call("MPI_Barrier", PAIR, 2)
    comms = {REVERSED: (2, 1, 0), **({PAIR: (2, 0)} if rank in (2, 0) else {})}
    return trace_write.make(rank, 3, 0, t + 10 * US, rows, comms=comms)


def test_communicators_of_listed_members_round_trip(tmp_path):
    trace_write.write_folder(tmp_path / "tr", [reordered_program(r) for r in range(3)])
    original = replay.build(trace.read_folder(tmp_path / "tr"))
    assert original.unmodelled == {} and original.collectives == {"Bcast": 3, "Allreduce": 2, "Barrier": 2}
    archive = exported(tmp_path / "tr", tmp_path / "otf2")
    same_predictions(tmp_path / "tr", archive)
    back = trace_input.read(archive)
    assert {c for t in back for c in t.comms.values()} == {(2, 1, 0), (2, 0)}
