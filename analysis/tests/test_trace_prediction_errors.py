"""The study report's prediction column when a baseline's trace cannot be used: a note in
its row, never a failed report."""
from types import SimpleNamespace

import numpy as np

from loggp.analysis import analyze, synth, trace, trace_prediction
from loggp.experiments import precision


def resolved_curve():
    """A curve of cg's L whose measured slope is resolved (its interval excludes zero)."""
    return analyze.Curve("cg", 2, "S", "L", 1.0, [SimpleNamespace(value=10.0)],
                         slope=precision.Interval(1.0, 0.9, 1.1, 8), model_slope=1.0)


def baseline(tmp_path, records_by_rank):
    folder = tmp_path / "runs" / "1" / "trace"
    folder.mkdir(parents=True)
    for rank, recs in enumerate(records_by_rank):
        synth.write_rank(folder / f"trace.{rank}.bin", rank, len(records_by_rank),
                         np.array(recs, dtype=trace.RECORD), 1000, 100000, run_id=7)
    runs = [{"benchmark": "cg", "np": 2, "class": "S", "sweep": "baseline", "status": "ok", "plan_id": 1}]
    return trace_prediction.rows(tmp_path, runs, [resolved_curve()])


def test_a_trace_that_deadlocks_is_a_note(tmp_path):
    irecv = (2000, 2100, 8, 0x98000000, 1, 0, synth.WORLD, 2, synth.CALL["MPI_Irecv"], 0, -1)
    wait = (2200, 2300, 0, 0, -1, -1, 0, 0, synth.CALL["MPI_Wait"], 0, -1)
    done = (2200, 2300, 8, 0x98000000, 1, 0, 0, 0, synth.CALL["MPI_Wait"], 1, 0)
    [row] = baseline(tmp_path, [[irecv, wait, done], []])
    assert row[4] is None and row[6].startswith("replay failed: the traces cannot be replayed to the end: "
                                                "rank 0 is stuck in MPI_Wait (call 2 of its trace)"), row


def test_a_damaged_trace_is_a_note(tmp_path):
    folder = tmp_path / "runs" / "1" / "trace"
    [row] = baseline(tmp_path, [[], []])
    assert row[4] is not None  # a trace with no calls replays (to its computation)
    (folder / "trace.1.bin").write_bytes((folder / "trace.1.bin").read_bytes()[:50])
    [row] = trace_prediction.rows(tmp_path, [{"benchmark": "cg", "np": 2, "class": "S", "sweep": "baseline",
                                              "status": "ok", "plan_id": 1}], [resolved_curve()])
    assert row[6].startswith("trace unreadable: ") and "trace.1.bin" in row[6], row


def test_a_measurement_that_resolves_no_effect_is_not_compared(tmp_path):
    baseline(tmp_path, [[], []])
    unresolved = resolved_curve()
    unresolved.slope = precision.Interval(0.1, -0.2, 0.4, 8)   # holds zero
    [row] = trace_prediction.rows(tmp_path, [{"benchmark": "cg", "np": 2, "class": "S", "sweep": "baseline",
                                              "status": "ok", "plan_id": 1}], [unresolved])
    assert row[2].startswith("no effect resolved, below 0.4") and row[5] is None
    assert row[6] == "measurement not resolved: no comparison" and row[4] is not None   # still predicted
