"""Builds loggp.analysis.trace.Trace objects from rows of fields, and writes them in
the format `loggp run --trace` writes (docs/trace-format.md): what a converter from
another format (loggp.analysis.otf2_import) produces, and what a test makes a
hand-made program with.

    t = make(rank=0, size=2, init_ns=0, finalize_ns=900, rows=[
        {"call": "MPI_Send", "start_ns": 100, "end_ns": 120, "peer": 1, "tag": 5, "bytes": 8,
         "comm_id": WORLD, "comm_size": 2}])
    write_folder("DIR", [t, ...])
"""
from pathlib import Path

import numpy as np

from loggp.knobs.files import write_text_atomic

from . import trace

# MPICH's handle of MPI_COMM_WORLD, which traces of MPICH runs carry
WORLD = 0x44000000

# a field a row leaves out: "none" in the format's words
DEFAULTS = {"start_ns": 0, "end_ns": 0, "bytes": 0, "request": 0, "peer": -1, "tag": -1, "comm_id": 0,
            "comm_size": 0, "kind": trace.CALL, "index": -1}
_FIELDS = set(DEFAULTS) | {"call"}


def make(rank, size, init_ns, finalize_ns, rows, path=None, clock_offset_ns=0, run_id=0, comms=None):
    """A Trace of one rank; rows: dicts with "call" (a name) and any RECORD field; run_id the
    same for every rank of one run (0: unknown); comms: {communicator id: its members' world
    ranks in its rank order} for the communicators this rank belongs to."""
    names = []
    index = {}
    for i, row in enumerate(rows):
        if row["call"] not in index:
            index[row["call"]] = len(names)
            names.append(row["call"])
        if not row.keys() <= _FIELDS:
            raise ValueError(f"row {i}: unknown fields {sorted(set(row) - _FIELDS)}")
    records = np.zeros(len(rows), dtype=trace.RECORD)
    for field, default in DEFAULTS.items():  # column by column: one numpy copy per field
        records[field] = [row.get(field, default) for row in rows]
    records["call"] = [index[row["call"]] for row in rows]
    return trace.Trace(path=Path(path) if path else Path(f"trace.{rank}.bin"), rank=rank, size=size,
                       init_ns=int(init_ns), finalize_ns=int(finalize_ns), clock_offset_ns=int(clock_offset_ns),
                       names=names, records=records,
                       records_offset=trace.HEADER.itemsize + len(_names_blob(names)), run_id=run_id,
                       comms={int(c): tuple(int(r) for r in m) for c, m in (comms or {}).items()})


def record_of(row, call):
    """One row as a RECORD element's tuple, its call numbered call."""
    return tuple(call if field == "call" else row.get(field, DEFAULTS[field]) for field in trace.RECORD.names)


def _names_blob(names):
    return b"\0".join(n.encode("ascii") for n in names) + b"\0"


def comms_blob(comms):
    """The memberships section of a file: per communicator its id, its size and its members."""
    words = []
    for comm, members in (comms or {}).items():
        words += [comm, len(members), *members]
    return np.array(words, dtype="<u4").tobytes()


def encode(t):
    """The bytes of t's file."""
    return (head(t, len(t.records)) + np.ascontiguousarray(t.records, dtype=trace.RECORD).tobytes()
            + comms_blob(getattr(t, "comms", None)))


def head(t, count):
    """The bytes of the header and name table of a file of count records whose other header
    fields are t's (a Trace, or anything with its rank, size, init_ns, finalize_ns,
    clock_offset_ns, names, run_id and transport): what precedes its records."""
    blob = _names_blob(t.names)
    header = np.zeros(1, dtype=trace.HEADER)  # by name: a field the header gains later stays 0
    for field, value in (("magic", trace.MAGIC), ("version", trace.VERSION),
                         ("header_bytes", trace.HEADER.itemsize), ("record_bytes", trace.RECORD.itemsize),
                         ("names_bytes", len(blob)), ("rank", t.rank), ("size", t.size),
                         ("clock", trace.CLOCK_MONOTONIC), ("records", count), ("init_ns", t.init_ns),
                         ("finalize_ns", t.finalize_ns), ("clock_offset_ns", t.clock_offset_ns),
                         ("run_id", t.run_id or 0), ("transport", (t.transport or "").encode("ascii")),
                         ("comms_bytes", len(comms_blob(getattr(t, "comms", None))))):
        header[0][field] = value
    return header.tobytes() + blob


def write_folder(folder, traces):
    """Each trace as folder/trace.<rank>.bin (the folder is made), each file written whole."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for t in traces:
        write_text_atomic(folder / f"trace.{t.rank}.bin", encode(t))
