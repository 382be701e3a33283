"""loggp.analysis.trace on damaged files: a real trace (from loggp-test-tracecalls)
cut short or with a byte changed gives TraceError naming the file and the
offset, never a partial array."""
import numpy as np
import pytest

from loggp.analysis import trace as tr
from tests.testkit import built, installed, run


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace")
    run([installed("loggp"), "run", "-n", "2", "--quiet", "--trace", out, "--",
         built("shim/tests/loggp-test-tracecalls"), 3, 16, 2], check=True)
    return (out / "trace.0.bin").read_bytes()


def damaged(tmp_path, data):
    path = tmp_path / "trace.0.bin"
    path.write_bytes(data)
    return path


def error_of(path):
    with pytest.raises(tr.TraceError) as info:
        tr.read(path)
    assert str(path) in str(info.value)
    return info.value


def test_the_good_file_reads(tmp_path, good):
    t = tr.read(damaged(tmp_path, good))
    assert t.rank == 0 and len(t.records) > 0 and t.records.dtype == tr.RECORD


def test_a_file_cut_inside_a_record(tmp_path, good):
    err = error_of(damaged(tmp_path, good[:-10]))
    assert err.offset == len(good) - 10 and "truncated" in str(err)


def test_a_file_cut_inside_the_header(tmp_path, good):
    err = error_of(damaged(tmp_path, good[:30]))
    assert err.offset == 30 and "header" in str(err)


def test_trailing_bytes(tmp_path, good):
    err = error_of(damaged(tmp_path, good + b"\0" * 56))
    assert err.offset == len(good) and "trailing" in str(err)


def test_not_a_trace(tmp_path, good):
    err = error_of(damaged(tmp_path, b"PROFILE!" + good[8:]))
    assert err.offset == 0 and "not a loggp trace" in str(err)


def test_a_corrupt_record_is_named_by_its_offset(tmp_path, good):
    t = tr.read(damaged(tmp_path, good))
    k = 3
    at = t.records_offset + k * tr.RECORD.itemsize + tr.RECORD.fields["kind"][1]
    data = bytearray(good)
    data[at] = 9
    err = error_of(damaged(tmp_path, bytes(data)))
    assert err.offset == t.records_offset + k * tr.RECORD.itemsize and f"record {k}" in str(err)


def test_a_completion_without_its_post(tmp_path, good):
    t = tr.read(damaged(tmp_path, good))
    posts = t.posts()
    done = int(np.flatnonzero(posts >= 0)[0])
    data = bytearray(good)
    request = t.records_offset + int(posts[done]) * tr.RECORD.itemsize + tr.RECORD.fields["request"][1]
    data[request:request + 8] = (0).to_bytes(8, "little")  # the post no longer names its request
    # as a request an unrecorded call posted (MPI-IO's, one-sided): it pairs with nothing, the
    # other completions as before
    after = tr.read(damaged(tmp_path, bytes(data))).posts()
    assert after[done] == -1
    assert np.array_equal(np.delete(after, done), np.delete(posts, done))


def test_a_folder_error_names_no_offset(tmp_path, good):
    with pytest.raises(tr.TraceError) as info:
        tr.read_folder(tmp_path)
    assert str(info.value) == f"{tmp_path}: no trace.<rank>.bin files"
    (tmp_path / "trace.1.bin").write_bytes(good)  # rank 0's trace under a second name
    damaged(tmp_path, good)
    with pytest.raises(tr.TraceError) as info:
        tr.read_folder(tmp_path)
    assert str(info.value) == f"{tmp_path}: expected ranks 0..1, found [0, 0]"


def version_1(data):
    """A trace as version 1 wrote it: no run id, no transport."""
    v1 = bytearray(data[:tr.HEADER_V1.itemsize]) + data[tr.HEADER.itemsize:]
    v1[8:12] = (1).to_bytes(4, "little")
    v1[12:16] = tr.HEADER_V1.itemsize.to_bytes(4, "little")
    return bytes(v1)


def test_a_version_1_trace_still_reads(tmp_path, good):
    new = tr.read(damaged(tmp_path, good))
    old = tr.read(damaged(tmp_path, version_1(good)))
    assert old.run_id is None and old.transport is None and new.run_id and new.transport
    assert old.version == 1
    assert (old.records == new.records).all() and old.names == new.names


def test_a_folder_of_version_1_and_2_traces_is_two_runs(tmp_path, good):
    (tmp_path / "trace.0.bin").write_bytes(good)
    (tmp_path / "trace.1.bin").write_bytes(version_1(good))
    data = bytearray((tmp_path / "trace.1.bin").read_bytes())
    data[24:28] = (1).to_bytes(4, "little")  # rank 1
    (tmp_path / "trace.1.bin").write_bytes(bytes(data))
    with pytest.raises(tr.TraceError) as info:
        tr.open_folder(tmp_path)
    assert "2 different runs" in str(info.value) and "trace.1.bin is a version 1 trace" in str(info.value)


def test_a_wrong_version_is_named_with_its_offset(tmp_path, good):
    data = bytearray(good)
    data[8:12] = (9).to_bytes(4, "little")
    err = error_of(damaged(tmp_path, bytes(data)))
    assert err.offset == 8 and "format version 9, this reader knows 1, 2, 3" in str(err)


def test_a_version_2_trace_still_reads_and_says_its_version(tmp_path, good):
    # version 2 had this layout; only what comm_id means changed
    data = bytearray(good)
    data[8:12] = (2).to_bytes(4, "little")
    old, new = tr.read(damaged(tmp_path, bytes(data))), tr.read(damaged(tmp_path, good))
    assert old.version == 2 and new.version == tr.VERSION == 3
    assert (old.records == new.records).all() and old.run_id == new.run_id


def test_every_nonblocking_collective_posts_its_request(tmp_path):
    """In our own format too, a Wait completing any of MPI-4's nonblocking collectives (those
    our PMPI layer does not wrap as well, MPI_Iscan, MPI_Ineighbor_alltoall) finds its post."""
    from loggp.analysis import trace_write
    from test_otf2_import import NONBLOCKING  # this folder is on the path: no package
    rows = []
    for k, name in enumerate(NONBLOCKING):
        rows += [{"call": name, "start_ns": 10 * k, "end_ns": 10 * k + 1, "request": 0x40},  # one handle, reused
                 {"call": "MPI_Wait", "start_ns": 10 * k + 2, "end_ns": 10 * k + 3},
                 {"call": "MPI_Wait", "kind": tr.COMPLETE, "start_ns": 10 * k + 2, "end_ns": 10 * k + 3,
                  "request": 0x40, "index": 0}]
    trace_write.write_folder(tmp_path, [trace_write.make(0, 1, 0, 10 * len(NONBLOCKING), rows)])
    posts = tr.read(tmp_path / "trace.0.bin").posts()
    assert list(np.flatnonzero(posts >= 0)) == [3 * k + 2 for k in range(len(NONBLOCKING))]
    assert list(posts[posts >= 0]) == [3 * k for k in range(len(NONBLOCKING))]


NONBLOCKING_PROGRAM = r"""
#include <mpi.h>
/* every nonblocking collective with an MPI_Wait, as a traced program makes them */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int in[2] = {1, 2}, out[4], counts[2] = {1, 1}, displs[2] = {0, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Request r;
    MPI_Iscan(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iexscan(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Igatherv(in, 1, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iscatterv(in, counts, displs, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Iallgatherv(in, 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    int sdispls[2] = {0, 4}, rdispls[2] = {0, 4};
    MPI_Ialltoallw(in, counts, sdispls, types, out, counts, rdispls, types, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter_block(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""


def test_a_traced_program_using_every_nonblocking_collective_replays(tmp_path):
    from loggp.analysis import predict
    source = tmp_path / "nbc.c"
    source.write_text(NONBLOCKING_PROGRAM)
    exe = tmp_path / "nbc"
    run([installed("mpicc"), "-O1", "-o", exe, source], check=True)
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--trace", tmp_path / "t", "--", exe])
    assert proc.returncode == 0, proc.stderr
    programs = predict.load(tmp_path / "t")
    assert programs.collectives == {name: 2 for name in ("Scan", "Exscan", "Gatherv", "Scatterv", "Allgatherv",
                                                         "Alltoallw", "Reduce_scatter", "Reduce_scatter_block")}
    assert programs.unmodelled == {}
