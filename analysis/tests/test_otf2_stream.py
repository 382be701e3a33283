"""`loggp predict ARCHIVE` streams: an OTF2 archive's records are written a chunk at a time
into temporary trace files and replayed from them, so what it predicts is what the in-memory
import predicts, its memory stays the same when the archive grows tenfold, and the temporary
folder goes afterwards, on an error too."""
import errno
import gc
import json
import os
import sys
import tempfile
import tracemalloc

import otf2
import pytest

from loggp.analysis import loggops, otf2_import, otf2_stream, predict, replay, trace, trace_input
from test_otf2_import import ScorePArchive  # this folder is on the path: no package
from tests.testkit import installed, run

US = 1000
SETTINGS = {"L": [1e3, 20e3], "o": [2e3], "G": [0.5]}


def exchange(folder, ranks, rounds):
    """A ring exchange as Score-P records one: per round each rank computes, posts an Irecv from
    its left neighbour and an Isend to its right, does a Sendrecv the other way round, then
    completes both requests in one Waitall; an Allreduce every 5th round, and an Iallreduce
    posted every 7th round and completed 3 rounds later, its request open across many records."""
    a = ScorePArchive(folder, ranks)
    world = a.comms["MPI_COMM_WORLD"]
    undefined = otf2.Undefined.UINT32.value
    for rank in range(ranks):
        left, right = (rank - 1) % ranks, (rank + 1) % ranks
        w = a.writers[rank]
        w.enter(0, a.region("main"))
        a.call(rank, "MPI_Init", 0, 5 * US)
        t = 5 * US
        open_collectives = {}
        for k in range(rounds):
            t += 20 * US + 300 * ((k * 7 + rank * 3) % 11)  # computation, differing by rank
            request = 4 * k
            a.call(rank, "MPI_Irecv", t, t + US, ("mpi_irecv_request", request))
            a.call(rank, "MPI_Isend", t + 2 * US, t + 3 * US, ("mpi_isend", right, world, k % 4, 1024, request + 1))
            a.call(rank, "MPI_Sendrecv", t + 4 * US, t + 9 * US, ("mpi_send", left, world, 9, 64),
                   ("end", "mpi_recv", right, world, 9, 64))
            a.call(rank, "MPI_Waitall", t + 10 * US, t + 19 * US, ("end", "mpi_isend_complete", request + 1),
                   ("end", "mpi_irecv", left, world, k % 4, 1024, request))
            t += 20 * US
            if k % 5 == 4:
                a.call(rank, "MPI_Allreduce", t, t + 6 * US, ("mpi_collective_begin",),
                       ("end", "mpi_collective_end", otf2.CollectiveOp.ALLREDUCE, world, undefined, 8, 8))
                t += 7 * US
            if k % 7 == 0:
                a.call(rank, "MPI_Iallreduce", t, t + US, ("non_blocking_collective_request", request + 2))
                open_collectives[k + 3] = request + 2
                t += 2 * US
            if k in open_collectives:
                a.call(rank, "MPI_Wait", t, t + 4 * US,
                       ("end", "non_blocking_collective_complete", otf2.CollectiveOp.ALLREDUCE, world, undefined,
                        16, 16, open_collectives.pop(k)))
                t += 5 * US
        for late, req in sorted(open_collectives.items()):
            a.call(rank, "MPI_Wait", t, t + 4 * US,
                   ("end", "non_blocking_collective_complete", otf2.CollectiveOp.ALLREDUCE, world, undefined,
                    16, 16, req))
            t += 5 * US
        a.call(rank, "MPI_Finalize", t + 10 * US, t + 20 * US)
        w.leave(a.t(t + 20 * US), a.region("main"))
    a.close()
    return folder


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    """The folder tempfile makes its folders in, here, so a test sees what is left."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_the_files_hold_the_in_memory_import_record_for_record(tmp_path):
    """A chunk of 5 records: requests posted in one chunk are completed in a later one."""
    archive = exchange(tmp_path / "ring", 3, 60)
    otf2_stream.write_folder(archive, tmp_path / "files", chunk=5)
    assert not list((tmp_path / "files").glob(".*"))  # only the trace files are left
    streamed, in_memory = trace.read_folder(tmp_path / "files"), trace_input.read(archive)
    assert len(streamed) == len(in_memory) == 3
    for s, m in zip(streamed, in_memory):
        assert (s.rank, s.size, s.init_ns, s.finalize_ns) == (m.rank, m.size, m.init_ns, m.finalize_ns)
        assert len(s.records) == len(m.records) > 60 * 7
        assert list(s.call_names()) == list(m.call_names())
        for field in trace.RECORD.names:
            if field != "call":
                assert (s.records[field] == m.records[field]).all(), field
    # what the posts learn from their completions, a chunk or more later, is in the files too
    names = in_memory[0].call_names()
    collectives, receives = (in_memory[0].records[names == name] for name in ("MPI_Iallreduce", "MPI_Irecv"))
    assert len(collectives) == 9 and (collectives["comm_size"] == 3).all() and (collectives["bytes"] > 0).all()
    assert len(receives) == 60 and (receives["comm_size"] == 3).all()


def test_a_large_archive_predicts_what_the_in_memory_import_does(tmp_path):
    archive = exchange(tmp_path / "ring", 4, 400)
    whole = replay.build(trace_input.read(archive))
    with predict.load(archive, chunk=64) as streamed:
        assert isinstance(streamed, otf2_stream.ArchiveReplay)
        assert (streamed.ranks, streamed.messages, streamed.collectives, streamed.unmodelled) == \
            (whole.ranks, whole.messages, whole.collectives, whole.unmodelled)
        assert streamed.traced_ns == whole.traced_ns
        assert whole.collectives == {"Allreduce": 4 * (80 + 58)} and whole.messages > 4 * 400 * 2
        machine = predict.DEFAULT_MACHINE
        assert predict.runtime(streamed, machine) == pytest.approx(predict.runtime(whole, machine), rel=1e-12)
        for knob, deltas in SETTINGS.items():
            for (d, want), (_, got) in zip(predict.slowdowns(whole, machine, knob, deltas),
                                           predict.slowdowns(streamed, machine, knob, deltas)):
                assert got == pytest.approx(want, rel=1e-9, abs=1e-12), (knob, d)
                assert got > 0, (knob, d)


def _peak_bytes(archive, chunk):
    """The most Python memory (tracemalloc) loading, replaying and closing the archive took,
    and the core's own peaks (records its readers held, replay state)."""
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        with predict.load(archive, chunk=chunk) as programs:
            programs.simulate(loggops.Params(o_s=100.0, o_r=100.0, L=2000.0, S=4096))
            core = (programs.reader_stats()[0].tolist(), programs.state_peak())
        return tracemalloc.get_traced_memory()[1] - start, core
    finally:
        tracemalloc.stop()


def _in_memory_peak(archive):
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        traces = otf2_import.read(archive)
        assert traces
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def tenfold(tmp_path_factory):
    """The same ring exchange, 150 rounds and 1,500."""
    folder = tmp_path_factory.mktemp("tenfold")
    return exchange(folder / "small", 4, 150), exchange(folder / "large", 4, 1500)


def test_memory_stays_flat_when_the_archive_grows_tenfold(tenfold):
    small, large = tenfold
    chunk = 64  # well below a rank's records in the small archive: both fill the same buffers
    _peak_bytes(small, chunk)  # once before: what the first use of the library and the core allocates
    small_peak, small_core = _peak_bytes(small, chunk)
    large_peak, large_core = _peak_bytes(large, chunk)
    assert large_core == small_core  # the core holds as many records and as much state either way
    assert large_peak <= 1.2 * small_peak, (small_peak, large_peak)
    # the measure sees a trace held whole: the in-memory import of the small archive alone
    # takes more than the streamed replay of the large one
    in_memory = _in_memory_peak(small)
    assert in_memory > 2 * large_peak, (in_memory, large_peak)


# VmHWM, not getrusage's ru_maxrss, which keeps the forking process's peak across exec
PEAK_RSS = """
import re, sys
from loggp.analysis import loggops, otf2_import, predict
if sys.argv[2] == "in-memory":
    otf2_import.read(sys.argv[1])
else:
    with predict.load(sys.argv[1]) as programs:
        programs.simulate(loggops.Params(o_s=100.0, L=2000.0, S=4096))
with open("/proc/self/status") as status:
    print(re.search(r"VmHWM:\\s*(\\d+) kB", status.read()).group(1))
"""


def test_peak_rss_stays_flat_when_the_archive_grows_tenfold(tenfold):
    """The whole process, OTF2's library and the replay core included: the streamed replay's
    peak RSS grows by a small part of what the in-memory import's grows by."""
    def peak_kib(archive, how):
        proc = run([sys.executable, "-c", PEAK_RSS, archive, how], timeout=300)
        assert proc.returncode == 0, proc.stderr
        return int(proc.stdout.split()[-1])

    small, large = tenfold
    streamed = peak_kib(large, "streamed") - peak_kib(small, "streamed")
    in_memory = peak_kib(large, "in-memory") - peak_kib(small, "in-memory")
    assert in_memory > 4096, in_memory  # KiB: the measure sees a trace held whole
    assert streamed < in_memory / 4, (streamed, in_memory)


def test_the_temporary_folder_goes_when_closed_or_collected(tmp_path, temporary):
    archive = exchange(tmp_path / "ring", 2, 10)
    with predict.load(archive) as programs:
        made = list(temporary.iterdir())
        assert len(made) == 1 and sorted(p.name for p in made[0].iterdir()) == ["trace.0.bin", "trace.1.bin"]
        programs.simulate(loggops.Params())
    assert not made[0].exists()
    with pytest.raises(ValueError, match="the replay is closed"):
        programs.simulate(loggops.Params())
    programs = predict.load(archive)
    assert len(list(temporary.iterdir())) == 1
    del programs
    gc.collect()
    assert list(temporary.iterdir()) == []


def test_the_temporary_folder_goes_on_an_error(tmp_path, temporary):
    """Refused while converting (nothing predict models), and after (a deadlock in the replay)."""
    rma = ScorePArchive(tmp_path / "rma", 2)
    for rank in (0, 1):
        rma.call(rank, "MPI_Init", 0, US)
        rma.call(rank, "MPI_Win_fence", 10 * US, 20 * US)
        rma.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    rma.close()
    with pytest.raises(trace.TraceError, match="no MPI call predict can model"):
        predict.load(tmp_path / "rma")
    assert list(temporary.iterdir()) == []

    stuck = ScorePArchive(tmp_path / "stuck", 2)
    world = stuck.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        stuck.call(rank, "MPI_Init", 0, US)
        stuck.call(rank, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 1 - rank, world, 3, 8))
        stuck.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    stuck.close()
    with pytest.raises(loggops.DeadlockError):
        predict.load(tmp_path / "stuck")
    assert list(temporary.iterdir()) == []


def test_no_room_for_the_converted_records_is_said(tmp_path, temporary, monkeypatch):
    archive = exchange(tmp_path / "ring", 2, 10)

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patched:
        patched.setattr(os, "pwrite", full)
        with pytest.raises(trace.TraceError, match=r"/\.records\.0: cannot write the records converted from the "
                                                   r"archive \(No space left on device\)"):
            predict.load(archive, chunk=4)
    assert list(temporary.iterdir()) == []
    monkeypatch.setattr(tempfile, "tempdir", str(archive / "traces.otf2"))  # a file: no folder can be made in it
    with pytest.raises(trace.TraceError, match="traces.otf2: cannot make a folder for the records converted from "):
        predict.load(archive)


def test_a_record_the_replay_refuses_is_said_of_the_archive(tmp_path, temporary):
    """A message to a rank the run does not have: named by the archive and the rank, not by the
    converted file, which is gone."""
    a = ScorePArchive(tmp_path / "stray", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 5, world, 3, 8))
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    with pytest.raises(trace.TraceError) as err:
        predict.load(tmp_path / "stray")
    assert str(err.value) == (f"{tmp_path / 'stray' / 'traces.otf2'}: rank 0: record 0: a message with rank 5, "
                              "not one of the run's 2 ranks")
    assert list(temporary.iterdir()) == []


def test_a_completion_no_recorded_call_posted_keeps_its_waits_time(tmp_path):
    """A Wait completing a request no recorded call posted (MPI-IO's, one-sided): the wait keeps
    its traced time in both replays, and the rest of the run is modelled."""
    a = ScorePArchive(tmp_path / "orphan", 2)
    world = a.comms["MPI_COMM_WORLD"]
    for rank in (0, 1):
        a.call(rank, "MPI_Init", 0, US)
    a.call(0, "MPI_Send", 10 * US, 11 * US, ("mpi_send", 1, world, 3, 8))
    a.call(1, "MPI_Recv", 10 * US, 20 * US, ("end", "mpi_recv", 0, world, 3, 8))
    a.call(1, "MPI_Wait", 21 * US, 24 * US, ("end", "mpi_isend_complete", 41))
    for rank in (0, 1):
        a.call(rank, "MPI_Finalize", 30 * US, 31 * US)
    a.close()
    native_programs = predict.load(tmp_path / "orphan")
    python_programs = replay.build(trace_input.read(tmp_path / "orphan"))
    machine = loggops.Params(L=10 * US)
    for programs in (native_programs, python_programs):
        assert programs.messages == 1 and programs.unmodelled == {}
    # rank 1, from MPI_Init's end: 9 us to its Recv, the message there at 10 + 10 us (sent at 10 us,
    # L), 1 us to the
    # Wait, which keeps its 3 us, 6 us to MPI_Finalize
    assert predict.runtime(native_programs, machine) == predict.runtime(python_programs, machine) == \
        (9 + 10 + 1 + 3 + 6) * US


def test_the_command_streams_an_archive_and_leaves_nothing(tmp_path):
    archive = exchange(tmp_path / "ring", 3, 30)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    results = []
    for jobs in (1, 2):  # the processes of --jobs replay the converted files, not the archive again
        out = tmp_path / f"p{jobs}.json"
        proc = run([installed("loggp"), "predict", archive, "--L", "0:20us:10us", "--jobs", jobs, "--json", out],
                   env={"TMPDIR": str(scratch)})
        assert proc.returncode == 0, proc.stderr
        assert list(scratch.iterdir()) == []
        results.append(json.loads(out.read_text()))
    assert results[0]["knobs"] == results[1]["knobs"] and results[0]["ranks"] == 3
    assert results[0]["knobs"]["L"]["points"][-1]["slowdown_percent"] > 0
