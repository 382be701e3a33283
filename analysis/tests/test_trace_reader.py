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



def test_a_rank_must_be_below_the_jobs_size(tmp_path, good):
    # the rank (offset 24) of a 2-rank job: 2 is outside it, 1 (the last rank) is not
    size = int.from_bytes(good[28:32], "little")
    assert size == 2
    err = error_of(damaged(tmp_path, good[:24] + size.to_bytes(4, "little") + good[28:]))
    assert err.offset == 24 and "outside a job of size 2" in str(err)
    last = good[:24] + (size - 1).to_bytes(4, "little") + good[28:]
    try:
        tr.read(damaged(tmp_path, last))
    except tr.TraceError as other:   # rank 0's memberships may not hold rank 1; its rank itself is fine
        assert other.offset != 24, other

def test_a_corrupt_record_is_named_by_its_offset(tmp_path, good):
    t = tr.read(damaged(tmp_path, good))
    k = 3
    at = t.records_offset + k * tr.RECORD.itemsize + tr.RECORD.fields["kind"][1]
    data = bytearray(good)
    data[at] = 9
    err = error_of(damaged(tmp_path, bytes(data)))
    assert err.offset == t.records_offset + k * tr.RECORD.itemsize and f"record {k}" in str(err)
    # read a chunk at a time, the record keeps its number in the file, not in its chunk
    for chunk in (1, 2, 3):
        with pytest.raises(tr.TraceError) as streamed:
            for _ in tr.iter_records(tr.open_trace(damaged(tmp_path, bytes(data))), chunk=chunk):
                pass
        assert streamed.value.offset == err.offset and f"record {k}" in str(streamed.value), chunk


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


def older(data, version):
    """A trace as an earlier version wrote it: its shorter header, no memberships after the records
    (version 1: no run id, no transport either)."""
    layout = tr.HEADERS[version]
    comms = int.from_bytes(data[112:120], "little")
    old = bytearray(data[:layout.itemsize]) + data[tr.HEADER.itemsize:len(data) - comms]
    old[8:12] = version.to_bytes(4, "little")
    old[12:16] = layout.itemsize.to_bytes(4, "little")
    return bytes(old)


def version_1(data):
    return older(data, 1)


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
    assert err.offset == 8 and "format version 9, this reader knows 1, 2, 3, 4" in str(err)


@pytest.mark.parametrize("version", [2, 3])
def test_a_version_2_or_3_trace_still_reads_and_says_its_version(tmp_path, good, version):
    # versions 2 and 3 had this layout less the memberships; version 3 changed what comm_id means
    old, new = tr.read(damaged(tmp_path, older(good, version))), tr.read(damaged(tmp_path, good))
    assert old.version == version and new.version == tr.VERSION == 4
    assert (old.records == new.records).all() and old.run_id == new.run_id
    assert old.comms is None and new.comms is not None


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


# ---- version 4: the memberships after the records ----

def with_comms(tmp_path, comms, rank=1, size=4):
    """A trace of rank `rank` of `size` whose memberships section holds comms (a list of
    (id, members) entries, written as given), its header saying their bytes."""
    from loggp.analysis import trace_write
    t = trace_write.make(rank, size, 0, 100, [{"call": "MPI_Barrier", "start_ns": 10, "end_ns": 20}])
    blob = b"".join(np.array([comm, len(members), *members], dtype="<u4").tobytes() for comm, members in comms)
    head = bytearray(trace_write.encode(t))
    head[112:120] = len(blob).to_bytes(8, "little")
    return damaged(tmp_path, bytes(head) + blob)


def test_the_memberships_read_by_id_in_rank_order(tmp_path):
    path = with_comms(tmp_path, [(0x20000001, (3, 2, 1, 0)), (0x20000002, (1, 3))])
    for t in (tr.read(path), tr.open_trace(path)):
        assert t.comms == {0x20000001: (3, 2, 1, 0), 0x20000002: (1, 3)}


def test_a_written_trace_keeps_its_memberships(tmp_path):
    from loggp.analysis import trace_write
    t = trace_write.make(0, 2, 0, 100, [{"call": "MPI_Barrier", "start_ns": 10, "end_ns": 20}],
                         comms={0x20000003: (1, 0)})
    assert tr.read(damaged(tmp_path, trace_write.encode(t))).comms == {0x20000003: (1, 0)}


@pytest.mark.parametrize("comms, what", [
    ([(0x20000001, (1, 4))], "are not distinct ranks of the 4 that include this rank 1"),
    ([(0x20000001, (0, 2))], "are not distinct ranks of the 4 that include this rank 1"),
    ([(0x20000001, (1, 1))], "are not distinct ranks"),
    ([(0x20000001, ())], "membership of 0 ranks is empty"),
])
def test_a_membership_that_cannot_be_is_named_with_its_offset(tmp_path, comms, what):
    path = with_comms(tmp_path, [(0x20000002, (1, 3))] + comms)
    err = error_of(path)
    entries = path.stat().st_size - 8 - 4 * len(comms[0][1])
    assert err.offset == entries and "communicator 0x20000001" in str(err) and what in str(err)
    with pytest.raises(tr.TraceError, match=what):
        tr.open_trace(path)


def test_a_membership_cut_short_is_named(tmp_path):
    path = with_comms(tmp_path, [(0x20000001, (1, 3))])
    data = bytearray(path.read_bytes())
    data[-12:-8] = (3).to_bytes(4, "little")  # says 3 members, has 2
    err = error_of(damaged(tmp_path, bytes(data)))
    assert err.offset == len(data) - 16 and "membership of 3 ranks is cut short" in str(err)


def test_memberships_beyond_the_headers_count_are_trailing_bytes(tmp_path):
    path = with_comms(tmp_path, [(0x20000001, (1, 3))])
    data = path.read_bytes()
    err = error_of(damaged(tmp_path, data + b"\0" * 4))
    assert err.offset == len(data) and "trailing bytes" in str(err) and "16 bytes of memberships" in str(err)
    err = error_of(damaged(tmp_path, data[:-4]))
    assert err.offset == len(data) - 4 and "truncated" in str(err)


def test_an_id_listed_twice_with_other_members_is_unknown(tmp_path):
    # two communicators whose ids collide: which one a record means cannot be told
    path = with_comms(tmp_path, [(0x20000001, (1, 3)), (0x20000002, (1, 0)), (0x20000001, (3, 1))])
    assert tr.read(path).comms == {0x20000002: (1, 0)}


def test_a_runs_memberships_leave_out_the_ids_its_files_disagree_on():
    from types import SimpleNamespace as F
    files = [F(comms={1: (0, 1), 2: (0, 2)}), F(comms={1: (0, 1), 3: (1, 2)}), F(comms={2: (2, 0), 3: (1, 2)}),
             F(comms=None)]  # a version 3 file says nothing
    assert tr.memberships(files) == {1: (0, 1), 3: (1, 2)}
