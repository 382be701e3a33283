"""Reads the traces `loggp run --trace DIR` writes (DIR/trace.<rank>.bin) into
numpy structured arrays. The format is docs/trace-format.md; the C side is
shim/src/pmpi/trace.h.

    trace = read("DIR/trace.0.bin")        # one rank
    traces = read_folder("DIR")            # every rank, rank order
    trace.records["start_ns"], trace.call_names(), trace.posts()
"""
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"LGPTRACE"
VERSION = 4          # written by libloggp.so; versions 1 to 3 are still read (see HEADERS)
CLOCK_MONOTONIC = 1
CALL, COMPLETE = 0, 1

HEADER_V1 = np.dtype([
    ("magic", "S8"), ("version", "<u4"), ("header_bytes", "<u4"), ("record_bytes", "<u4"),
    ("names_bytes", "<u4"), ("rank", "<i4"), ("size", "<i4"), ("clock", "<u4"), ("reserved", "<u4"),
    ("records", "<u8"), ("init_ns", "<u8"), ("finalize_ns", "<u8"), ("clock_offset_ns", "<i8"),
])
# version 2 adds the run's id (the same in every rank's file of one run) and its transport;
# version 3 keeps the layout, but a record's comm_id is an id every rank of the communicator
# shares (in versions 1 and 2 each rank's own handle, which could differ between ranks)
HEADER_V2 = np.dtype(HEADER_V1.descr + [("run_id", "<u8"), ("transport", "S32")])
# version 4 adds the memberships of the communicators the rank belongs to, after the records
# (comms_bytes of them: per communicator its id, its size and its members' world ranks, uint32 each)
HEADER = np.dtype(HEADER_V2.descr + [("comms_bytes", "<u8")])
HEADERS = {1: HEADER_V1, 2: HEADER_V2, 3: HEADER_V2, 4: HEADER}
RECORD = np.dtype([
    ("start_ns", "<u8"), ("end_ns", "<u8"), ("bytes", "<u8"), ("request", "<u8"),
    ("peer", "<i4"), ("tag", "<i4"), ("comm_id", "<u4"), ("comm_size", "<u4"),
    ("call", "<u2"), ("kind", "<u2"), ("index", "<i4"),
])

# The collectives MPI-3 and MPI-4 give a nonblocking form, MPI_I<name> (MPI_Iallreduce,
# MPI_Ineighbor_alltoallw): every one posts a request, whether or not our PMPI layer wraps it
# (an OTF2 archive names its region) and whether or not the replay has a schedule for it.
NONBLOCKING_COLLECTIVES = {"MPI_I" + name.lower() for name in (
    "Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
    "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce", "Reduce_scatter_block", "Reduce_scatter",
    "Scan", "Exscan", "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
    "Neighbor_alltoallw")}

# Calls that start a request a later completion call completes (a persistent
# request, made by MPI_*_init, starts with each MPI_Start/MPI_Startall).
POSTING = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Start", "MPI_Startall",
           "MPI_Comm_idup", "MPI_Comm_idup_with_info"} | NONBLOCKING_COLLECTIVES


class TraceError(ValueError):
    """A trace file that is not one, or is truncated or corrupt: says which file and where
    (offset None: the error is about no position, e.g. a folder's set of files)."""

    def __init__(self, path, offset, what):
        super().__init__(f"{path}: {what}" if offset is None else f"{path}: at offset {offset}: {what}")
        self.path, self.offset, self.what = str(path), offset, what


@dataclass
class Trace:
    path: Path
    rank: int
    size: int
    init_ns: int
    finalize_ns: int
    clock_offset_ns: int  # this rank's clock minus rank 0's (0: unknown, or rank 0)
    names: list  # call index -> "MPI_Send", ...
    records: np.ndarray  # dtype RECORD
    records_offset: int  # where the first record starts in the file
    run_id: int = None   # None: a version 1 file, which has none
    transport: str = None  # "libfabric:shm", "pmpi"; None: not recorded
    version: int = VERSION  # the file's format version (HEADERS)
    # communicator id -> its members' world ranks in its rank order (tuple), for the communicators
    # this rank belongs to whose membership the file records (version 4); see members_of
    comms: dict = None

    def call_names(self):
        """Each record's call as a name (numpy array of str)."""
        return np.asarray(self.names, dtype=object)[self.records["call"]]

    def calls(self):
        """The call records only (no completions)."""
        return self.records[self.records["kind"] == CALL]

    def posts(self):
        """For each record, the position of the record that posted the request it
        completes (COMPLETE records with a request), else -1."""
        return match_completions(self.records, self.names)


def match_completions(records, names):
    """Pairs each completion with its post: a request's handle is live from
    the call that posts it to the completion (or MPI_Request_free) that ends
    it, and may be reused afterwards. MPICH hands every send it completed at
    once the same handle; such posts are paired oldest first (they are done
    when posted, so which completion takes which does not change a time).
    A completion of a request no recorded call posted (MPI-IO's, one-sided,
    a matched receive: docs/trace-format.md) pairs with nothing (-1)."""
    posting = np.array([n in POSTING for n in names], dtype=bool)
    freeing = np.array([n == "MPI_Request_free" for n in names], dtype=bool)
    live = {}
    out = np.full(len(records), -1, dtype=np.int64)
    kinds, calls, requests = records["kind"], records["call"], records["request"]
    for i in range(len(records)):
        handle = int(requests[i])
        if handle == 0:
            continue
        if kinds[i] == CALL and posting[calls[i]]:
            live.setdefault(handle, deque()).append(i)
        elif kinds[i] == CALL and freeing[calls[i]] and live.get(handle):
            live[handle].popleft()
        elif kinds[i] == COMPLETE and live.get(handle):
            out[i] = live[handle].popleft()
    return out


@dataclass
class TraceFile:
    """One rank's trace file as its header describes it; its records stay on disk
    (iter_records reads them a chunk at a time)."""
    path: Path
    rank: int
    size: int
    init_ns: int
    finalize_ns: int
    clock_offset_ns: int
    names: list
    records_offset: int
    count: int  # records in the file
    run_id: int = None
    transport: str = None
    version: int = VERSION
    comms: dict = None  # as Trace.comms


def parse_comms(path, blob, at, rank, size):
    """The memberships section of a file (bytes blob, found at offset at) of rank `rank` in a
    world of `size`: {comm id: world ranks in its rank order}; TraceError at the first entry
    that cannot be one. An id listed twice with different members (two communicators whose
    ids collide) is left out: its records keep the rule for communicators of unknown membership."""
    if len(blob) % 4:
        raise TraceError(path, at, f"the communicators' memberships take {len(blob)} bytes, not whole 4-byte words")
    words = np.frombuffer(blob, "<u4")
    comms, clashing, k = {}, set(), 0
    while k < len(words):
        if k + 2 > len(words):
            raise TraceError(path, at + 4 * k, "a communicator's membership is cut short")
        comm, n = int(words[k]), int(words[k + 1])
        members = words[k + 2:k + 2 + n].astype(np.int64)
        if n == 0 or len(members) < n:
            raise TraceError(path, at + 4 * k, f"communicator {comm:#x}: membership of {n} ranks "
                                               f"{'is empty' if n == 0 else 'is cut short'}")
        if members.max() >= size or len(np.unique(members)) != n or rank not in members:
            raise TraceError(path, at + 4 * k, f"communicator {comm:#x}: members {members[:8].tolist()}"
                                               f"{'...' if n > 8 else ''} are not distinct ranks of the "
                                               f"{size} that include this rank {rank}")
        members = tuple(members.tolist())
        if comms.get(comm, members) != members:
            clashing.add(comm)
        comms[comm] = members
        k += 2 + n
    for comm in clashing:
        del comms[comm]
    return comms


# name tables seen, by their bytes: the thousands of ranks of one run share one list
_NAME_TABLES = {}


def _header(path, data, file_size):
    """The TraceFile of a file whose first bytes are data (its header and name table, at
    least) and whose size is file_size; TraceError naming the file and offset."""
    if len(data) < 12:
        raise TraceError(path, len(data), f"truncated: {len(data)} bytes, shorter than the header")
    if data[:8] != MAGIC:
        raise TraceError(path, 0, f"not a loggp trace (magic {data[:8]!r}, expected {MAGIC!r})")
    version = int.from_bytes(data[8:12], "little")
    layout = HEADERS.get(version)
    if layout is None:
        raise TraceError(path, 8, f"format version {version}, this reader knows {', '.join(map(str, HEADERS))}")
    if len(data) < layout.itemsize:
        raise TraceError(path, len(data), f"truncated: {len(data)} bytes, shorter than the "
                                          f"{layout.itemsize}-byte header")
    h = np.frombuffer(data, layout, count=1)[0]
    if h["header_bytes"] != layout.itemsize or h["record_bytes"] != RECORD.itemsize:
        raise TraceError(path, 12, f"header of {h['header_bytes']} bytes and records of {h['record_bytes']}, "
                                   f"expected {layout.itemsize} and {RECORD.itemsize}")
    if h["clock"] != CLOCK_MONOTONIC:
        raise TraceError(path, 32, f"unknown clock {h['clock']}")
    if not 0 <= h["rank"] < h["size"]:
        raise TraceError(path, 24, f"rank {h['rank']} outside a job of size {h['size']}")
    names_end = layout.itemsize + int(h["names_bytes"])
    if names_end > len(data):
        raise TraceError(path, len(data), f"truncated inside the call-name table (ends at {names_end})")
    names_blob = data[layout.itemsize:names_end]
    if not names_blob.endswith(b"\0"):
        raise TraceError(path, names_end - 1, "the call-name table does not end with NUL")
    names = _NAME_TABLES.setdefault(names_blob, names_blob[:-1].decode("ascii", "replace").split("\0"))
    comms_bytes = int(h["comms_bytes"]) if version >= 4 else 0
    expected = names_end + int(h["records"]) * RECORD.itemsize + comms_bytes
    if file_size != expected:
        at = min(file_size, expected)
        said = f" and {comms_bytes} bytes of memberships" if comms_bytes else ""
        raise TraceError(path, at, f"{'truncated' if file_size < expected else 'trailing bytes'}: the header "
                                   f"says {h['records']} records{said} ({expected} bytes), the file has {file_size}")
    return TraceFile(path=path, rank=int(h["rank"]), size=int(h["size"]), init_ns=int(h["init_ns"]),
                     finalize_ns=int(h["finalize_ns"]), clock_offset_ns=int(h["clock_offset_ns"]), names=names,
                     records_offset=names_end, count=int(h["records"]),
                     run_id=int(h["run_id"]) if version >= 2 else None,
                     transport=(bytes(h["transport"]).decode("ascii", "replace") or None) if version >= 2 else None,
                     version=version, comms={} if version >= 4 else None)


def _read_comms(f, fh):
    """f's memberships (a version 4 file's section after the records), read from open file fh."""
    if f.version < 4:
        return
    at = f.records_offset + f.count * RECORD.itemsize
    fh.seek(at)
    f.comms = parse_comms(f.path, fh.read(), at, f.rank, f.size)


def _check_records(f, records, first):
    """TraceError at the first record (numbered from first) that cannot be one."""
    bad = np.flatnonzero((records["call"] >= len(f.names)) | (records["kind"] > COMPLETE)
                         | (records["end_ns"] < records["start_ns"]))
    if len(bad):
        i = first + int(bad[0])
        r = records[int(bad[0])]
        raise TraceError(f.path, f.records_offset + i * RECORD.itemsize,
                         f"record {i} is corrupt (call {r['call']}, kind {r['kind']}, "
                         f"start {r['start_ns']}, end {r['end_ns']})")


def open_trace(path):
    """One rank's TraceFile (header and name table only); TraceError when it is not a whole trace."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read(HEADER.itemsize)
            if len(data) >= 24:  # names_bytes, in every version's header
                names_bytes = int.from_bytes(data[20:24], "little")
                data += fh.read(min(names_bytes, 1 << 20))
            f = _header(path, data, size)
            _read_comms(f, fh)
    except OSError as err:
        raise TraceError(path, None, f"cannot read: {err.strerror}") from None
    return f


def iter_records(f, chunk=65536):
    """The records of TraceFile f, chunk records at a time (numpy arrays), each checked."""
    try:
        with open(f.path, "rb") as fh:
            fh.seek(f.records_offset)
            for first in range(0, f.count, chunk):
                want = min(chunk, f.count - first)
                data = fh.read(want * RECORD.itemsize)
                if len(data) != want * RECORD.itemsize:
                    raise TraceError(f.path, f.records_offset + first * RECORD.itemsize + len(data),
                                     "truncated: the file changed while it was read")
                records = np.frombuffer(data, RECORD)
                _check_records(f, records, first)
                yield records
    except OSError as err:
        raise TraceError(f.path, None, f"cannot read: {err.strerror}") from None


def read(path):
    """One rank's trace; TraceError naming the file and offset when it is not a whole trace."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise TraceError(path, None, f"cannot read: {err.strerror}") from None
    f = _header(path, data, len(data))
    records = np.frombuffer(data, RECORD, count=f.count, offset=f.records_offset).copy()
    _check_records(f, records, 0)
    if f.version >= 4:
        at = f.records_offset + f.count * RECORD.itemsize
        f.comms = parse_comms(path, data[at:], at, f.rank, f.size)
    return Trace(path=path, rank=f.rank, size=f.size, init_ns=f.init_ns, finalize_ns=f.finalize_ns,
                 clock_offset_ns=f.clock_offset_ns, names=f.names, records=records, records_offset=f.records_offset,
                 run_id=f.run_id, transport=f.transport, version=f.version, comms=f.comms)


def _one_run(folder, files):
    """files (in rank order) when they are every rank of one run; TraceError otherwise,
    before anything replays them."""
    size = files[0].size
    ranks = [f.rank for f in files]
    if ranks != list(range(size)):
        raise TraceError(folder, None, f"expected ranks 0..{size - 1}, found {ranks}" + _unfinished_said(folder))
    runs = {}
    for f in files:
        runs.setdefault(f.run_id, []).append(Path(f.path).name)
    if len(runs) > 1:
        said = "; ".join(f"{_files(names)} {'are' if len(names) > 1 else 'is'} "
                         f"{'a version 1 trace, without one' if run is None else f'run {run:#018x}'}"
                         for run, names in runs.items())
        raise TraceError(folder, None, f"the traces are of {len(runs)} different runs: {said}. Trace the "
                                       "program again into an empty folder")
    return files


def memberships(files):
    """The communicators' memberships over a run's files (Trace or TraceFile, rank order):
    {comm id: world ranks in its rank order}, each as every member's file records it. An id
    whose files disagree (two communicators whose ids collide) is left out, as is any that
    files of versions before 4 cannot say: their records keep the rule for communicators of
    unknown membership (docs/trace-format.md)."""
    out, clashing = {}, set()
    for f in files:
        for comm, members in (f.comms or {}).items():
            if out.get(comm, members) != members:
                clashing.add(comm)
            out[comm] = members
    for comm in clashing:
        del out[comm]
    return out


def _files(names, shown=4):
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def open_folder(folder):
    """Every rank's TraceFile in folder, in rank order, records left on disk; TraceError when one
    is missing, doubled or not a whole trace."""
    folder = Path(folder)
    files = sorted(folder.glob("trace.*.bin"))
    if not files:
        raise TraceError(folder, None, "no trace.<rank>.bin files" + _unfinished_said(folder))
    return _one_run(folder, sorted((open_trace(f) for f in files), key=lambda t: t.rank))


def unfinished(folder):
    """Names of the traces a rank began and never finished (.trace.<rank>.bin.tmp.<pid>: its
    run died or left before MPI_Finalize; the next run into the folder removes them)."""
    return sorted(p.name for p in Path(folder).glob(".trace.*.bin.tmp.*"))


def unfinished_note(folder):
    """One sentence naming the folder's unfinished traces, or None."""
    names = unfinished(folder)
    if not names:
        return None
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (f"{folder} holds unfinished traces of a run that did not get through MPI_Finalize ({shown}); "
            "they are not read")


def _unfinished_said(folder):
    note = unfinished_note(folder)
    return f"; {note}" if note else ""


def read_folder(folder):
    """Every rank's trace in folder, in rank order; TraceError when one is missing or doubled."""
    folder = Path(folder)
    files = sorted(folder.glob("trace.*.bin"))
    if not files:
        raise TraceError(folder, None, "no trace.<rank>.bin files" + _unfinished_said(folder))
    return _one_run(folder, sorted((read(f) for f in files), key=lambda t: t.rank))
