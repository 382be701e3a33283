"""The replay core in C (analysis/replay/, installed as
<prefix>/lib/libloggp-replay.so), loaded with ctypes: the LogGOPS replay of
loggp.analysis.loggops on arrays of operations, and straight from trace files,
read in chunks (TraceReplay), so a replay's memory follows the ranks and the
messages in flight, not the trace's length."""
import ctypes
import math
import os
from collections import Counter

import numpy as np

from loggp.knobs.programs import MissingProgram, prefix_path

from . import loggops, replay, schedules, trace

LIBRARY = "libloggp-replay.so"
CALC, ISEND, IRECV, WAIT, DONE = range(5)
OP = np.dtype([("req", "<i8"), ("comm", "<i8"), ("tag", "<i8"), ("bytes", "<u8"), ("ns", "<f8"),
               ("kind", "<i4"), ("peer", "<i4"), ("mode", "<i4"), ("unused", "<i4")])
SEND_MODES = {"standard": 0, "sync": 1, "buffered": 2}   # replay_internal.h: SEND_*
CHUNK_RECORDS = 1024  # records a rank's reader takes from its file at a time (56 KiB: 224 MiB at 4096 ranks)

# the C side's call classes (replay_internal.h: C_*) and its order of collectives (schedules.c: B_*)
(C_OTHER, C_SEND, C_ISEND, C_IRECV, C_RECV, C_SENDRECV, C_WAIT, C_SEND_INIT, C_RECV_INIT, C_START, C_COLL,
 C_IGNORED) = range(12)
POSTING, FREEING, SYNC, BUFFERED = 1 << 16, 1 << 17, 1 << 18, 1 << 19
BASES = ("Barrier", "Bcast", "Reduce", "Allreduce", "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw",
         "Gather", "Gatherv", "Scatter", "Scatterv", "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan")
ERR_IO, ERR_CORRUPT, ERR_COLLECTIVE, ERR_TRUNCATED, ERR_MEMORY, ERR_PEER, ERR_NOT_MEMBER = range(1, 8)


class Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("rank", ctypes.c_int32), ("record", ctypes.c_int64),
                ("value", ctypes.c_uint64), ("value2", ctypes.c_uint64), ("start", ctypes.c_uint64),
                ("end", ctypes.c_uint64), ("base_here", ctypes.c_int32), ("base_other", ctypes.c_int32)]


STUCK = np.dtype([("op", "<i8"), ("call_number", "<i8"), ("call", "<i4"), ("finished", "<i4"),
                  ("awaited_kind", "<i4"), ("awaited_peer", "<i4")])

_lib = None


class NativeMissing(MissingProgram):
    """The core is not installed (exit 2, naming the file and ./setup.sh)."""


def library():
    """The loaded core; NativeMissing when ./setup.sh has not built it."""
    global _lib
    if _lib is not None:
        return _lib
    path = prefix_path("lib", LIBRARY)
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as err:
        raise NativeMissing(f"the replay core {path} cannot be loaded ({err}): run ./setup.sh") from None
    p, i32, i64, u64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64
    lib.lr_new_ops.restype = p
    lib.lr_new_ops.argtypes = [i32, p, p, p]
    lib.lr_new_trace.restype = p
    lib.lr_new_trace.argtypes = [i32, ctypes.POINTER(ctypes.c_char_p), p, p, p, p, p, p, i64, i64, p, p, p]
    lib.lr_free.argtypes = [p]
    lib.lr_error.argtypes = [p, ctypes.POINTER(Err)]
    lib.lr_run.restype = ctypes.c_int
    lib.lr_run.argtypes = [p, p, p, p, p, p, p]
    lib.lr_messages.restype = i64
    lib.lr_messages.argtypes = [p]
    lib.lr_collectives.argtypes = [p, p]
    lib.lr_unmodelled.argtypes = [p, p]
    lib.lr_reader_stats.argtypes = [p, p, p]
    lib.lr_state_peak.argtypes = [p, p]
    lib.lr_schedule.restype = ctypes.c_int
    lib.lr_schedule.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, u64, ctypes.c_int, p, p, p, p,
                                ctypes.c_int]
    _lib = lib
    return lib


def _ptr(array):
    return array.ctypes.data_as(ctypes.c_void_p)


def params_array(params):
    return np.array([params.o_s, params.o_r, params.g, params.G, params.L,
                     params.S if math.isfinite(params.S) else np.inf], dtype=np.float64)


class _Sim:
    """One C replay state; run() times it under a parameter set."""

    def __init__(self, handle, nranks, keep=()):
        self.handle, self.nranks = handle, nranks
        self._keep = keep  # arrays the C side points into

    def __del__(self):
        self.close()

    def close(self):
        if getattr(self, "handle", None) and _lib is not None:
            _lib.lr_free(self.handle)
            self.handle = None

    def live(self):
        """The core's handle; ValueError once closed (the core must never see a null state)."""
        if not getattr(self, "handle", None):
            raise ValueError("the replay is closed")
        return self.handle

    def error(self):
        err = Err()
        library().lr_error(self.live(), ctypes.byref(err))
        return err

    def run(self, params):
        """(status, end, compute, overhead, waiting, stuck): status 0 done, 1 deadlock, -1 error."""
        n = self.nranks
        end, compute, overhead, waiting = (np.zeros(n) for _ in range(4))
        stuck = np.zeros(n, dtype=STUCK)
        status = library().lr_run(self.live(), _ptr(params_array(params)), _ptr(end), _ptr(compute),
                                  _ptr(overhead), _ptr(waiting), _ptr(stuck))
        return status, end, compute, overhead, waiting, stuck


def encode(programs):
    """Operation tuples (loggops' programs) as the core's arrays: (ops, rank_start, waits). Keys and
    requests may be any hashables: each is numbered (keys over all ranks, requests per rank)."""
    keys = {}
    rows, starts, waits = [], [0], []
    for program in programs:
        reqs = {}

        def number(req):
            return reqs.setdefault(req, len(reqs))

        for op in program:
            kind = op[0]
            if kind == "calc":
                rows.append((0, 0, 0, 0, float(op[1]), CALC, 0, 0, 0))
            elif kind in ("isend", "irecv"):
                _, peer, key, nbytes, req = op[:5]
                mode = SEND_MODES.get(op[5] if len(op) > 5 else "standard")
                if mode is None or (kind == "irecv" and len(op) > 5):
                    raise ValueError(f"unknown operation {op!r}")
                rows.append((number(req), keys.setdefault(key, len(keys)), 0, int(nbytes), 0.0,
                             ISEND if kind == "isend" else IRECV, int(peer), mode, 0))
            elif kind == "wait":
                rows.append((len(waits), 0, 0, 0, 0.0, WAIT, len(op[1]), 0, 0))
                waits.extend(number(r) for r in op[1])
            elif kind == "done":
                rows.append((number(op[1]), 0, 0, 0, 0.0, DONE, 0, 0, 0))
            else:
                raise ValueError(f"unknown operation {kind!r}")
        starts.append(len(rows))
    return (np.array(rows, dtype=OP), np.array(starts, dtype=np.int64),
            np.array(waits or [0], dtype=np.int64))


def ops_sim(programs):
    ops, starts, waits = encode(programs)
    messages = (ops["kind"] == ISEND) | (ops["kind"] == IRECV)
    outside = np.flatnonzero(messages & ((ops["peer"] < 0) | (ops["peer"] >= len(programs))))
    if len(outside):
        k = int(outside[0])
        rank = int(np.searchsorted(starts, k, side="right")) - 1
        raise ValueError(f"rank {rank}, operation {k - int(starts[rank])}: a message with rank "
                         f"{int(ops['peer'][k])}, not one of the {len(programs)} ranks")
    handle = library().lr_new_ops(len(programs), _ptr(ops), _ptr(starts), _ptr(waits))
    if not handle:
        raise MemoryError("the replay core is out of memory")
    return _Sim(handle, len(programs), keep=(ops, starts, waits))


def call_classes(names):
    """The core's class of each call name (replay.py's branches, in its order)."""
    out = np.zeros(len(names), dtype=np.int32)
    for k, name in enumerate(names):
        base = schedules.base_name(name)
        if name in replay.SENDS:
            c = C_SEND
        elif name in replay.ISENDS:
            c = C_ISEND
        elif name == "MPI_Irecv":
            c = C_IRECV
        elif name == "MPI_Recv":
            c = C_RECV
        elif name in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
            c = C_SENDRECV
        elif name in replay.WAITS:
            c = C_WAIT
        elif name in replay.SEND_INITS:
            c = C_SEND_INIT
        elif name == "MPI_Recv_init":
            c = C_RECV_INIT
        elif name in ("MPI_Start", "MPI_Startall"):
            c = C_START
        elif base is not None:
            c = C_COLL | (BASES.index(base) << 8)
        elif name in replay.IGNORED:
            c = C_IGNORED
        else:
            c = C_OTHER
        if name in trace.POSTING:
            c |= POSTING
        if name == "MPI_Request_free":
            c |= FREEING
        if name in replay.SYNC_SENDS:
            c |= SYNC
        elif name in replay.BUFFERED_SENDS:
            c |= BUFFERED
        out[k] = c
    return out


def schedule(base, rank, size, nbytes, root=0):
    """The C core's schedule of one collective, as schedules.schedule gives it (for tests)."""
    cap = 3 * size + 8
    rounds, ops, peers = (np.zeros(cap, dtype=np.int32) for _ in range(3))
    sizes = np.zeros(cap, dtype=np.uint64)
    n = library().lr_schedule(BASES.index(base), rank, size, int(nbytes), root, _ptr(rounds), _ptr(ops),
                              _ptr(peers), _ptr(sizes), cap)
    out = []
    for k in range(n):
        if k == 0 or rounds[k] != rounds[k - 1]:
            out.append([])
        out[-1].append(("recv" if ops[k] else "send", int(peers[k]), int(sizes[k])))
    return out


def comm_arrays(comms):
    """Memberships {comm id: world ranks} (trace.memberships) as the core takes them: comm_ids,
    comm_start (where each one's members start in comm_members, and the end) and comm_members."""
    ids = np.array(list(comms), dtype=np.uint32)
    start = np.cumsum([0] + [len(m) for m in comms.values()]).astype(np.int64)
    members = np.array([r for m in comms.values() for r in m] or [0], dtype=np.int32)
    return {"comm_ids": ids if len(ids) else np.zeros(1, np.uint32), "comm_start": start,
            "comm_members": members, "ncomms": len(ids)}


class TraceReplay:
    """A traced run replayed straight from its files (trace.open_folder), a chunk of records per
    rank at a time: what `loggp predict` replays. Opening it reads every file once (each
    collective's size over ranks, and a first replay that counts what is modelled), so a
    damaged file, a mix of runs or a deadlock is said before any prediction.

    ranks, traced_ns, messages, collectives (Counter), unmodelled (Counter): as replay.Programs."""

    def __init__(self, files, chunk=CHUNK_RECORDS):
        self.files = list(files)
        self.ranks = len(self.files)
        self.traced_ns = float(max(f.finalize_ns - f.init_ns for f in self.files))
        self.chunk = int(chunk)
        known = {}  # the ranks of one run share one name table (trace._NAME_TABLES): classed once
        classes = []
        for f in self.files:
            if id(f.names) not in known:
                known[id(f.names)] = call_classes(f.names)
            classes.append(known[id(f.names)])
        self._cls = np.concatenate(classes).astype(np.int32) if classes else np.zeros(1, np.int32)
        self._cls_start = np.cumsum([0] + [len(c) for c in classes]).astype(np.int32)
        paths = (ctypes.c_char_p * self.ranks)(*[os.fsencode(f.path) for f in self.files])
        arrays = dict(
            offsets=np.array([f.records_offset for f in self.files], dtype=np.uint64),
            counts=np.array([f.count for f in self.files], dtype=np.int64),
            init=np.array([f.init_ns for f in self.files], dtype=np.uint64),
            finalize=np.array([f.finalize_ns for f in self.files], dtype=np.uint64))
        arrays.update(comm_arrays(trace.memberships(self.files)))
        handle = library().lr_new_trace(self.ranks, paths, _ptr(arrays["offsets"]), _ptr(arrays["counts"]),
                                        _ptr(arrays["init"]), _ptr(arrays["finalize"]), _ptr(self._cls),
                                        _ptr(self._cls_start), self.chunk, arrays["ncomms"],
                                        _ptr(arrays["comm_ids"]), _ptr(arrays["comm_start"]),
                                        _ptr(arrays["comm_members"]))
        if not handle:
            raise MemoryError("the replay core is out of memory")
        self._sim = _Sim(handle, self.ranks, keep=(paths, arrays))
        self._raise_error()
        self.simulate(loggops.Params())  # counts what is modelled, and finds what cannot be replayed
        lib = library()
        self.messages = int(lib.lr_messages(handle))
        colls = np.zeros(32, dtype=np.int64)
        lib.lr_collectives(handle, _ptr(colls))
        self.collectives = Counter({BASES[b]: int(n) for b, n in enumerate(colls[:len(BASES)]) if n})
        unmodelled = np.zeros(int(self._cls_start[-1]) + 1, dtype=np.int64)
        lib.lr_unmodelled(handle, _ptr(unmodelled))
        self.unmodelled = Counter()
        for f, start in zip(self.files, self._cls_start):
            for k, name in enumerate(f.names):
                if unmodelled[start + k]:
                    self.unmodelled[name] += int(unmodelled[start + k])

    def simulate(self, params):
        """A loggops.Result under params; DeadlockError said in the traces' MPI calls,
        trace.TraceError for a record that cannot be replayed."""
        status, end, compute, overhead, waiting, stuck = self._sim.run(params)
        if status < 0:
            self._raise_error()
        if status == 1:
            named, plain = [], []
            for me, s in enumerate(stuck):
                if s["finished"]:
                    continue
                call = int(s["call"])
                name = self.files[me].names[call] if call >= 0 else "MPI_Finalize"
                kind = {ISEND: "isend", IRECV: "irecv"}.get(int(s["awaited_kind"]))
                awaited = None if kind is None else (kind, int(s["awaited_peer"]))
                named.append((me, (name, int(s["call_number"])), awaited))
                plain.append((me, int(s["op"]), awaited))
            finished = [me for me, s in enumerate(stuck) if s["finished"]]
            raise loggops.DeadlockError(replay.stuck_words(named, finished), plain, finished)
        return loggops.Result(end.tolist(), compute.tolist(), overhead.tolist(), waiting.tolist())

    def close(self):
        """Frees the core's state now, not when collected: the replay cannot run after."""
        self._sim.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def reader_stats(self):
        """Per rank: the most records its reader held at once, and how many reads it made."""
        peak, reads = np.zeros(self.ranks, dtype=np.int64), np.zeros(self.ranks, dtype=np.int64)
        library().lr_reader_stats(self._sim.live(), _ptr(peak), _ptr(reads))
        return peak, reads

    def state_peak(self):
        """The most entries the replay's state held at once since opening: {part: count}."""
        out = np.zeros(5, dtype=np.int64)
        library().lr_state_peak(self._sim.live(), _ptr(out))
        return dict(zip(("requests", "channels", "unmatched", "live_posts", "collectives"), out.tolist()))

    def _raise_error(self):
        err = self._sim.error()
        if not err.code:
            return
        f = self.files[err.rank] if 0 <= err.rank < self.ranks else None
        path = f.path if f else "trace"
        at = None if err.record < 0 or f is None else f.records_offset + err.record * trace.RECORD.itemsize
        if err.code == ERR_IO:
            raise trace.TraceError(path, None, f"cannot read: {os.strerror(err.value)}")
        if err.code == ERR_CORRUPT:
            raise trace.TraceError(path, at, f"record {err.record} is corrupt (call {err.value}, kind {err.value2}, "
                                       f"start {err.start}, end {err.end})")
        if err.code == ERR_COLLECTIVE:
            raise trace.TraceError(path, at, f"collective {err.value2} on communicator {err.value:#x} is "
                                       f"{BASES[err.base_here]} here but {BASES[err.base_other]} on another rank: "
                                       "the traces are not of one run")
        if err.code == ERR_PEER:
            peer = err.value - (1 << 32) if err.value >= 1 << 31 else err.value
            among = f"its communicator's {err.value2 - 1}" if err.value2 else f"the run's {self.ranks}"
            raise trace.TraceError(path, at, f"record {err.record}: a message with rank {peer}, not one of "
                                             f"{among} ranks")
        if err.code == ERR_NOT_MEMBER:
            raise trace.TraceError(path, at, f"record {err.record}: {BASES[err.value2]} on communicator "
                                             f"{err.value:#x}, whose members do not include this rank {err.rank}")
        if err.code == ERR_TRUNCATED:
            raise trace.TraceError(path, at, "truncated: the file changed while it was replayed")
        if err.code == ERR_MEMORY:
            raise MemoryError("the replay core is out of memory")
        raise RuntimeError(f"the replay core failed (code {err.code})")
