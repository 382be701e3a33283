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
