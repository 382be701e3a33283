"""An OTF2 archive replayed the way our own traces are (native.TraceReplay): the import
(otf2_import.convert) writes each rank's records to trace.<rank>.bin in a temporary folder
a chunk at a time as it reads the archive, and the core replays those files a chunk at a
time, so memory follows the ranks and the requests in flight, not the archive's length.
The folder is removed when the replay is closed or collected, and at once on an error.

    with load("scorep-run") as programs:   # its folder or its traces.otf2
        programs.simulate(params)
"""
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from . import native, otf2_import, trace, trace_write
from .trace import RECORD, TraceError


class _RecordFile:
    """Where one rank's records go while the archive is read: chunk records held, then appended
    to a file of bare records (opened only to write, so thousands of ranks need no open files).
    A record already written that its request's completion amends is rewritten in place with
    the next chunk. finish() puts the header and name table, known only at the end, in front."""

    def __init__(self, folder, rank, chunk):
        self.rank = rank
        self.path = Path(folder) / f"trace.{rank}.bin"
        self.body = Path(folder) / f".records.{rank}"
        self.held = np.zeros(max(1, int(chunk)), dtype=RECORD)
        self.count = 0       # records held
        self.written = 0     # records in the body file
        self.patches = {}    # position in the body file -> the record's new bytes
        self.names, self.index = [], {}

    def number(self, name):
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def add(self, row):
        if self.count == len(self.held):
            self.flush()
        self.held[self.count] = trace_write.record_of(row, self.number(row["call"]))
        self.count += 1
        return self.written + self.count - 1

    def amend(self, position, row, **changes):
        row.update(changes)
        record = trace_write.record_of(row, self.number(row["call"]))
        if position >= self.written:
            self.held[position - self.written] = record
        else:  # at most one per completion since the last chunk: bounded by the chunk
            self.patches[position] = np.array([record], dtype=RECORD).tobytes()

    def flush(self):
        if not self.count and not self.patches:
            return
        data = self.held[:self.count].tobytes()
        try:
            fd = os.open(self.body, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                _write_at(fd, data, self.written * RECORD.itemsize)
                for position, record in self.patches.items():
                    _write_at(fd, record, position * RECORD.itemsize)
            finally:
                os.close(fd)
        except OSError as err:
            raise _cannot_write(self.body, err) from None
        self.written += self.count
        self.count = 0
        self.patches.clear()

    def finish(self, size, init_ns, finalize_ns, comms=None):
        """Writes trace.<rank>.bin: header, name table, the records, copied from the body file, then
        the memberships comms ({comm id: world ranks})."""
        self.flush()
        header = SimpleNamespace(rank=self.rank, size=size, init_ns=int(init_ns), finalize_ns=int(finalize_ns),
                                 clock_offset_ns=0, names=self.names, run_id=0, transport=None, comms=comms)
        try:
            with open(self.path, "wb") as out:
                out.write(trace_write.head(header, self.written))
                if self.written:
                    with open(self.body, "rb") as body:
                        shutil.copyfileobj(body, out, self.held.nbytes)  # a chunk at a time, as it was written
                out.write(trace_write.comms_blob(comms))
            if self.written:
                os.unlink(self.body)
        except OSError as err:
            raise _cannot_write(self.path, err) from None
        self.held = None  # nothing more is added


def _write_at(fd, data, offset):
    view = memoryview(data)
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _cannot_write(path, err):
    return TraceError(path, None, f"cannot write the records converted from the archive ({err.strerror}); they "
                                  f"take {RECORD.itemsize} bytes per record in the temporary folder (TMPDIR)")


def write_folder(path, folder, notes=None, chunk=native.CHUNK_RECORDS):
    """The archive at path (its folder or anchor file) as our trace files folder/trace.<rank>.bin,
    each written chunk records at a time as the archive is read; TraceError as otf2_import.convert."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    files = []

    def file_of(rank):
        files.append(_RecordFile(folder, rank, chunk))
        return files[-1]

    world, ranks = otf2_import.convert(path, file_of, notes)
    for f, r in zip(files, ranks):
        f.finish(world, r.init_ns, r.finalize_ns, r.comms())


class ArchiveReplay(native.TraceReplay):
    """native.TraceReplay of an archive's records converted into folder, which it owns: removed
    by close() (or a with block), or when the replay is collected. A record the replay finds
    wrong is said of the archive and the rank, not of the converted file."""

    def __init__(self, anchor, folder, chunk=native.CHUNK_RECORDS):
        self.anchor, self.folder = Path(anchor), Path(folder)
        self._remove = weakref.finalize(self, _remove, str(folder), os.getpid())
        super().__init__(trace.open_folder(folder), chunk=chunk)

    def close(self):
        super().close()
        self._remove()

    def _raise_error(self):
        try:
            super()._raise_error()
        except TraceError as err:
            ranks = [f.rank for f in self.files if str(f.path) == err.path]
            if not ranks:
                raise
            raise TraceError(self.anchor, None, f"rank {ranks[0]}: {err.what}") from None


def _remove(folder, owner):
    if os.getpid() == owner:  # a forked process (predict --jobs) leaves its parent's folder alone
        shutil.rmtree(folder, ignore_errors=True)


def load(path, notes=None, chunk=native.CHUNK_RECORDS):
    """The archive at path (its folder or anchor file) ready to replay (ArchiveReplay), its records
    converted into a new temporary folder; the folder is removed again on any error."""
    anchor = otf2_import.anchor_of(path)
    try:
        folder = tempfile.mkdtemp(prefix="loggp-otf2-")
    except OSError as err:
        raise TraceError(tempfile.gettempdir(), None, f"cannot make a folder for the records converted from "
                                                      f"{anchor} ({err.strerror}): set TMPDIR to a writable "
                                                      "folder") from None
    try:
        write_folder(anchor, folder, notes, chunk)
        return ArchiveReplay(anchor, folder, chunk)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
