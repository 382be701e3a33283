"""Synthetic traces in loggp's format (docs/trace-format.md), for measuring the
replay at scale and checking it against critical paths known in closed form:

- halo: a halo exchange on a periodic 3-D grid (Irecv and Isend to each of up
  to six neighbours, then Waitall), phase after phase;
- ring: a ring allreduce by point-to-point messages (reduce-scatter then
  allgather around the ring: 2 (p - 1) steps of Isend right, Irecv left, Waitall);
- alltoall: MPI_Alltoall, replayed as MPICH's alltoall (Bruck's, every peer at once, or
  pairwise, by the bytes a peer).

Each phase starts with `compute_ns` of computation. Every rank does the same
work at the same time, so the replay's length is phases x (compute + one
phase's communication), which critical_path_ns computes from the pattern alone.

    Pattern("halo", 512, phases=1000, nbytes=4096, compute_ns=20000).write("DIR")
    python analysis/bench/gen_traces.py halo DIR --ranks 512 --phases 1000   # the same, from a shell
"""
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loggp.knobs.files import write_text_atomic

from . import schedules, trace, trace_write

# The call-name table of every synthetic trace (a record's call indexes it).
NAMES = ("MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Alltoall", "MPI_Send", "MPI_Recv", "MPI_Sendrecv",
         "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Request_free", "MPI_Iprobe", "MPI_Wait",
         "MPI_Comm_rank")
CALL = {name: k for k, name in enumerate(NAMES)}
WORLD = trace_write.WORLD
CALL_NS = 100       # each MPI call's own traced length (the replay models it instead)
REQUEST = 0x98000000  # request handles, k-th post of an exchange: come back each phase, as MPI's do
INIT_NS = 1_000_000_000


def write_rank(path, rank, size, records, init_ns, finalize_ns, run_id=0, names=NAMES, comms=None):
    """One rank's trace file (loggp.analysis.trace_write's encoding), written atomically; comms:
    {communicator id: its members' world ranks} of the communicators the rank belongs to."""
    t = trace.Trace(path=Path(path), rank=rank, size=size, init_ns=int(init_ns), finalize_ns=int(finalize_ns),
                    clock_offset_ns=0, names=list(names), records=np.asarray(records, dtype=trace.RECORD),
                    records_offset=0, run_id=run_id, comms=comms)
    write_text_atomic(path, trace_write.encode(t))


def records(n):
    out = np.zeros(n, dtype=trace.RECORD)
    out["peer"], out["tag"], out["index"] = -1, -1, -1
    return out


def grid(size):
    """Three factors of size, as even as they come (largest first)."""
    best = None
    for a in range(1, size + 1):
        if size % a:
            continue
        for b in range(1, size // a + 1):
            if (size // a) % b:
                continue
            dims = sorted((a, b, size // a // b), reverse=True)
            if best is None or dims[0] - dims[2] < best[0] - best[2]:
                best = dims
    return tuple(best)


def neighbours(rank, dims):
    """(neighbour, direction) for each direction of a periodic grid that has one: +x, -x, +y, ..."""
    x, y, z = rank % dims[0], rank // dims[0] % dims[1], rank // (dims[0] * dims[1])
    out = []
    for axis, n in enumerate(dims):
        if n == 1:
            continue
        for sign, direction in ((1, 2 * axis), (-1, 2 * axis + 1)):
            c = [x, y, z]
            c[axis] = (c[axis] + sign) % n
            out.append((c[0] + dims[0] * (c[1] + dims[1] * c[2]), direction))
    return out


@dataclass
class Pattern:
    name: str
    size: int
    phases: int
    nbytes: int
    compute_ns: int

    def phase_records(self, rank):
        """One phase's records of rank, times relative to the phase's start (before its computation)."""
        if self.name == "halo":
            hood = neighbours(rank, grid(self.size))
            ops = [("MPI_Irecv", peer, direction ^ 1) for peer, direction in hood]
            ops += [("MPI_Isend", peer, direction) for peer, direction in hood]
            return _exchange(ops, self.nbytes, self.compute_ns, self.size)
        if self.name == "ring":
            step = [("MPI_Irecv", (rank - 1) % self.size, 0), ("MPI_Isend", (rank + 1) % self.size, 0)]
            chunk = max(self.nbytes // self.size, 1)
            parts = [_exchange(step, chunk, self.compute_ns if k == 0 else 0, self.size)
                     for k in range(2 * (self.size - 1))]
            return _concatenate(parts)
        if self.name == "alltoall":
            recs = records(1)
            recs["start_ns"] = self.compute_ns
            recs["end_ns"] = self.compute_ns + CALL_NS
            recs["call"] = CALL["MPI_Alltoall"]
            recs["comm_id"], recs["comm_size"] = WORLD, self.size
            recs["bytes"] = self.nbytes * self.size
            return recs
        raise ValueError(f"unknown pattern {self.name!r}: expected halo, ring or alltoall")

    def write(self, folder):
        """Every rank's trace into folder (made if missing); returns the records per rank."""
        if self.size < 2:
            raise ValueError(f"{self.size} ranks: a pattern needs at least 2")
        if self.name not in ("halo", "ring", "alltoall"):
            raise ValueError(f"unknown pattern {self.name!r}: expected halo, ring or alltoall")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        run_id = int.from_bytes(os.urandom(8), "little") or 1
        count = 0
        for rank in range(self.size):
            one = self.phase_records(rank)
            length = int(one["end_ns"].max()) if len(one) else 0
            recs = np.tile(one, self.phases)
            shift = np.repeat(np.arange(self.phases, dtype=np.uint64) * np.uint64(length), len(one))
            recs["start_ns"] += shift + np.uint64(INIT_NS)
            recs["end_ns"] += shift + np.uint64(INIT_NS)
            write_rank(folder / f"trace.{rank}.bin", rank, self.size, recs, INIT_NS,
                       INIT_NS + self.phases * length, run_id)
            count = len(recs)
        return count

    def critical_path_ns(self, params):
        """The replay's length under loggops.Params params, from the pattern alone: every rank
        is alike, so it is phases x (computation + one phase's messages). For eager messages
        (bytes <= params.S) and g no larger than L + o_r (a phase's first injection and
        reception then wait for nothing of the phase before)."""
        if self.name == "halo":
            hood = neighbours(0, grid(self.size))
            return self.phases * (self.compute_ns + _exchange_path(len(hood), self.nbytes, params,
                                                                    [d ^ 1 for _, d in hood], [d for _, d in hood]))
        if self.name == "ring":
            chunk = max(self.nbytes // self.size, 1)
            step = _exchange_path(1, chunk, params, [0], [0])
            return self.phases * (self.compute_ns + 2 * (self.size - 1) * step)
        if self.name == "alltoall":
            return self.phases * (self.compute_ns + _alltoall_path(self.size, self.nbytes, params))
        raise ValueError(self.name)


def _alltoall_path(size, each, params):
    """MPICH's alltoall of `each` bytes a peer (schedules.py): Bruck's log2 rounds of the
    blocks whose index has bit k, every peer at once (receives from rank + k listed in
    order of k, sends to rank - k likewise: a peer's message to me is its k-th send), or
    pairwise, p - 1 exchanges."""
    if size >= schedules.ALLTOALL_MIN_BRUCK_RANKS and each <= schedules.ALLTOALL_SHORT:
        return sum(_exchange_path(1, each * sum(1 for b in range(1, size) if b & (1 << k)), params, [0], [0])
                   for k in range((size - 1).bit_length()))
    if each <= schedules.ALLTOALL_MEDIUM:
        if size > schedules.ALLTOALL_THROTTLE:
            raise ValueError(f"{size} ranks: more than one round of the scattered alltoall, not in closed form here")
        peers = list(range(size - 1))
        return _exchange_path(size - 1, each, params, peers, peers)
    return (size - 1) * _exchange_path(1, each, params, [0], [0])


def _exchange(ops, nbytes, compute_ns, size):
    """Irecvs and Isends (call, peer, tag) after compute_ns, then a Waitall completing all of
    them in that order; times from 0."""
    n = len(ops)
    recs = records(2 * n + 1)
    t = compute_ns
    for k, (call, peer, tag) in enumerate(ops):
        r = recs[k:k + 1]
        r["start_ns"], r["end_ns"] = t, t + CALL_NS
        r["call"], r["peer"], r["tag"], r["bytes"] = CALL[call], peer, tag, nbytes
        r["comm_id"], r["comm_size"] = WORLD, size
        r["request"] = REQUEST + k
        t += CALL_NS
    recs[n:]["start_ns"], recs[n:]["end_ns"] = t, t + CALL_NS
    recs[n:]["call"] = CALL["MPI_Waitall"]
    for k, (call, peer, tag) in enumerate(ops):
        c = recs[n + 1 + k:n + 2 + k]
        c["kind"], c["index"], c["request"] = trace.COMPLETE, k, REQUEST + k
        if call == "MPI_Irecv":
            c["peer"], c["tag"], c["bytes"] = peer, tag, nbytes
    return recs


def _concatenate(parts):
    out = np.concatenate(parts)
    shift = 0
    start = 0
    for p in parts:
        length = int(p["end_ns"].max())
        out[start:start + len(p)]["start_ns"] += np.uint64(shift)
        out[start:start + len(p)]["end_ns"] += np.uint64(shift)
        shift += length
        start += len(p)
    return out


def _exchange_path(n, nbytes, params, recv_tags, send_tags):
    """One exchange's length at every rank: n Isends, each injected max(o_s, g + (k-1)G) after
    the one before (o_s after the start for the first), then the Waitall takes the n messages
    in the order they arrive, each (k-1)G + L after its sender injected it (a neighbour's send
    with a given tag is its j-th, as it is here: every rank is alike), each taking o_r,
    receptions at least g apart."""
    if nbytes > params.S:
        raise ValueError(f"{nbytes} B is past the eager limit {params.S:g} B: not in closed form here")
    per_byte = max(nbytes - 1, 0) * params.G
    flight = per_byte + params.L
    spacing = max(params.o_s, params.g + per_byte)
    injected = [params.o_s + j * spacing for j in range(n)]
    position = {tag: j for j, tag in enumerate(send_tags)}
    t, rx = injected[-1], float("-inf")
    for arrival in sorted(injected[position[tag]] + flight for tag in recv_tags):
        take = max(t, arrival, rx)
        rx = take + params.g
        t = take + params.o_r
    return t
