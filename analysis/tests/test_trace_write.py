"""loggp.analysis.trace_write: what it writes, the reader reads back whole."""
import numpy as np
import pytest

from loggp.analysis import trace, trace_write


def test_written_traces_read_back(tmp_path):
    rows = [{"call": "MPI_Isend", "start_ns": 10, "end_ns": 20, "peer": 1, "tag": 3, "bytes": 8, "request": 5,
             "comm_id": trace_write.WORLD, "comm_size": 2},
            {"call": "MPI_Wait", "start_ns": 30, "end_ns": 40},
            {"call": "MPI_Wait", "start_ns": 30, "end_ns": 40, "kind": trace.COMPLETE, "request": 5, "index": 0}]
    made = [trace_write.make(r, 2, 5, 100 + r, rows, clock_offset_ns=-7 * r) for r in range(2)]
    trace_write.write_folder(tmp_path, made)
    for t, back in zip(made, trace.read_folder(tmp_path)):
        assert (back.rank, back.size, back.init_ns, back.finalize_ns, back.clock_offset_ns) == \
            (t.rank, 2, 5, t.finalize_ns, t.clock_offset_ns)
        assert back.names == ["MPI_Isend", "MPI_Wait"] and np.array_equal(back.records, t.records)
        assert list(back.posts()) == [-1, -1, 0] and back.records["peer"][1] == -1  # a field left out: none


def test_an_unknown_field_is_refused():
    with pytest.raises(ValueError, match="row 0: unknown fields"):
        trace_write.make(0, 1, 0, 1, [{"call": "MPI_Send", "destination": 1}])
