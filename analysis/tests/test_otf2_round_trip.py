"""A trace exported to OTF2 and read back predicts what the trace itself predicts:
a real traced run (loggp-test-tracecalls: ping-pong, a window of Isend/Irecv,
collectives) and a hand-made program of every call the export writes."""
import pytest

from loggp.analysis import predict, replay, trace, trace_input, trace_write
from test_otf2_export import program  # this folder is on the path: no package
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
