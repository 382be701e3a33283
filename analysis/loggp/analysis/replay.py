"""Traces (loggp.analysis.trace) as LogGOPS programs (loggp.analysis.loggops):
the time between MPI calls becomes computation, point-to-point calls become
sends, receives and waits matched as MPI matches them, collectives become
MPICH's point-to-point schedules (loggp.analysis.schedules).

A record's ranks are its communicator's: they become world ranks through the
communicator's membership where the traces record it (version 4), else only on
a communicator as large as MPI_COMM_WORLD, taken in the world's order
(members_of). What cannot be modelled is kept as the time it took in the trace
and counted in Programs.unmodelled: point-to-point and collectives on other
communicators, probes, and calls of unknown meaning."""
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import loggops, schedules
from .trace import CALL, COMPLETE, TraceError, memberships

SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Rsend", "MPI_Ssend"}
ISENDS = {"MPI_Isend", "MPI_Ibsend", "MPI_Irsend", "MPI_Issend"}
WAITS = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
         "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"}
SEND_INITS = {"MPI_Send_init", "MPI_Bsend_init", "MPI_Rsend_init", "MPI_Ssend_init"}
IGNORED = {"MPI_Request_free"}
ANY_SOURCE, ANY_TAG = -2, -1   # MPICH's values, as the trace records them


# sends whose completion differs from a standard send's (loggops: the send's mode)
SYNC_SENDS = {"MPI_Ssend", "MPI_Issend", "MPI_Ssend_init"}
BUFFERED_SENDS = {"MPI_Bsend", "MPI_Ibsend", "MPI_Bsend_init"}


@dataclass
class Programs:
    programs: list                                   # one list of operations per rank
    traced_ns: float                                 # the traced run's length (slowest rank)
    messages: int = 0                                # point-to-point messages modelled, all ranks
    collectives: Counter = field(default_factory=Counter)   # modelled collectives by name
    unmodelled: Counter = field(default_factory=Counter)    # calls kept as their traced time
    # per rank, per operation: (MPI call, its number in the rank's trace from 1) it came from
    calls: list = field(default_factory=list)

    @property
    def ranks(self):
        return len(self.programs)

    def simulate(self, params):
        """A loggops.Result under params; DeadlockError said in the traces' MPI calls."""
        try:
            return loggops.simulate(self.programs, params)
        except loggops.DeadlockError as err:
            raise loggops.DeadlockError(stuck_message(self, err), err.stuck, err.finished) from None


def members_of(comms, comm, size, world):
    """The world ranks of communicator comm (of size ranks) in its rank order: its recorded
    membership (comms: trace.memberships), else, for one as large as the world, the world's
    own order; None when neither (its calls are not modelled)."""
    known = comms.get(comm)
    if known is not None and len(known) == size:
        return known
    return range(world) if size == world else None


def _collective_sizes(traces, world, comms):
    """(comm_id, n-th collective on it) -> (name, largest bytes over ranks, root), for
    collectives on communicators whose ranks map to world ranks (members_of)."""
    sizes = {}
    for t in traces:
        names = t.call_names()
        seen = Counter()
        for rec, name in zip(t.records, names):
            if rec["kind"] != CALL:
                continue
            base = schedules.base_name(name)
            if base is None or members_of(comms, int(rec["comm_id"]), int(rec["comm_size"]), world) is None:
                continue
            comm = int(rec["comm_id"])
            key = (comm, seen[comm])
            seen[comm] += 1
            old = sizes.get(key)
            nbytes = int(rec["bytes"])
            if old is not None and old[0] != base:
                raise ValueError(f"{t.path}: collective {seen[comm]} on communicator {comm:#x} is {base} here "
                                 f"but {old[0]} on another rank: the traces are not of one run")
            sizes[key] = (base, max(nbytes, old[1] if old else 0), int(rec["peer"]))
    return sizes


def build(traces):
    """Programs for a list of Trace (rank order, one run)."""
    if not traces:
        raise ValueError("no traces")
    world = traces[0].size
    if len(traces) != world or [t.rank for t in traces] != list(range(world)):
        raise ValueError(f"expected one trace per rank 0..{world - 1}, got ranks {[t.rank for t in traces]}")
    comms = memberships(traces)
    sizes = _collective_sizes(traces, world, comms)
    out = Programs([], 0.0)
    for t in traces:
        program, calls = _program(t, world, sizes, out, comms)
        out.programs.append(program)
        out.calls.append(calls)
        out.traced_ns = max(out.traced_ns, float(t.finalize_ns - t.init_ns))
    return out


class _RankProgram:
    """One rank's trace turned into a LogGOPS program, one MPI call at a time."""

    def __init__(self, t, world, sizes, out, comms):
        self.t, self.world, self.sizes, self.out, self.comms = t, world, sizes, out, comms
        self.my_rank = {}       # communicator id -> this rank's rank in it
        self.recs, self.posts = t.records, t.posts()
        self.completion_of = {int(self.posts[j]): j for j in range(len(self.recs)) if self.posts[j] >= 0}
        self.persistent = {}    # request handle -> the init record that made it
        self.coll_seen = Counter()
        self.prog = []

    def calc(self, ns):
        if ns > 0:
            self.prog.append(("calc", float(ns)))

    def done(self, i):
        self.prog.append(("done", i))

    def key(self, rec, tag=None):
        return (int(rec["comm_id"]), int(rec["tag"]) if tag is None else tag)

    def members(self, rec):
        """The world ranks of rec's communicator in its rank order, or None (not modelled)."""
        return members_of(self.comms, int(rec["comm_id"]), int(rec["comm_size"]), self.world)

    def local(self, rec):
        """Point-to-point on a communicator whose ranks map to world ranks."""
        return self.members(rec) is not None

    def world_rank(self, rec, peer):
        """peer, a rank of rec's communicator, as a world rank."""
        members = self.members(rec)
        if not 0 <= peer < len(members):
            raise TraceError(self.t.path, None, f"a message with rank {peer}, not one of its communicator's "
                                                f"{len(members)} ranks (communicator {int(rec['comm_id']):#x})")
        return members[peer]

    def add_recv(self, rec, completion, req):
        """A receive posted by rec (its communicator); the source, tag and size it
        matched come from its completion record where there is one."""
        got = self.recs[completion] if completion is not None else rec
        src, tag, nbytes = int(got["peer"]), int(got["tag"]), int(got["bytes"])
        if src < 0 or src == ANY_SOURCE or tag == ANY_TAG:
            return False  # never matched (cancelled or MPI_PROC_NULL): nothing to wait for
        self.prog.append(("irecv", self.world_rank(rec, src), self.key(rec, tag), nbytes, req))
        return True

    def add_send(self, rec, req):
        """A send as rec says (its call, or the init a Start made it from, gives the mode)."""
        if int(rec["peer"]) < 0:
            return False
        name = self.t.names[rec["call"]]
        mode = ("sync",) if name in SYNC_SENDS else ("buffered",) if name in BUFFERED_SENDS else ()
        self.prog.append(("isend", self.world_rank(rec, int(rec["peer"])), self.key(rec), int(rec["bytes"]),
                          req) + mode)
        self.out.messages += 1
        return True

    def completions_after(self, i):
        """The completion records that follow call i, and the index past them."""
        completions, j = [], i + 1
        while j < len(self.recs) and self.recs[j]["kind"] == COMPLETE:
            completions.append(j)
            j += 1
        return completions, j

    def call(self, name, rec, i, completions, took_ns):
        """Adds what call i does to the program; False when the replay does not model it."""
        if name in SENDS or name in ISENDS:
            return self.send(name, rec, i)
        if name == "MPI_Irecv":
            if not self.local(rec):
                return False
            if not self.add_recv(rec, self.completion_of.get(i), i):
                self.done(i)
        elif name == "MPI_Recv":
            if not self.local(rec):
                return False
            if completions and self.add_recv(rec, completions[0], i):
                self.prog.append(("wait", (i,)))
        elif name in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
            return self.sendrecv(rec, i, completions)
        elif name in WAITS:
            reqs = tuple(int(self.posts[c]) for c in completions if self.posts[c] >= 0)
            if reqs:
                self.prog.append(("wait", reqs))
            else:
                self.calc(took_ns)  # a test that found nothing: its own cost
        elif name in SEND_INITS or name == "MPI_Recv_init":
            self.persistent[int(rec["request"])] = rec
        elif name in ("MPI_Start", "MPI_Startall"):
            return self.start(rec, i)
        elif (base := schedules.base_name(name)) is not None:
            return self.collective(base, rec, i)
        elif name not in IGNORED:
            return False
        return True

    def send(self, name, rec, i):
        if not self.local(rec):
            return False
        if not self.add_send(rec, i):
            self.done(i)
        elif name in SENDS:
            self.prog.append(("wait", (i,)))
        return True

    def sendrecv(self, rec, i, completions):
        if not self.local(rec):
            return False
        reqs = []
        if self.add_send(rec, (i, "send")):
            reqs.append((i, "send"))
        if completions and self.add_recv(rec, completions[0], (i, "recv")):
            reqs.append((i, "recv"))
        if reqs:
            self.prog.append(("wait", tuple(reqs)))
        return True

    def start(self, rec, i):
        """MPI_Start(all) of a persistent request: the send or receive its init made."""
        made = self.persistent.get(int(rec["request"]))
        if made is None or not self.local(made):
            return False
        if not (self.add_send(made, i) if self.t.names[made["call"]] in SEND_INITS
                else self.add_recv(made, self.completion_of.get(i), i)):
            self.done(i)
        return True

    def collective(self, base, rec, i):
        """A collective as MPICH's schedule of messages over its communicator's ranks, round by
        round, each rank a world rank through the communicator's members."""
        comm = int(rec["comm_id"])
        members = self.members(rec)
        if members is None:
            return False
        if comm not in self.my_rank:
            if self.t.rank not in members:  # the reader checks a file's own; another's may share the id
                raise TraceError(self.t.path, None, f"{base} on communicator {comm:#x}, whose members "
                                                    f"{list(members)[:8]} do not include this rank {self.t.rank}")
            self.my_rank[comm] = members.index(self.t.rank)
        seq = self.coll_seen[comm]
        self.coll_seen[comm] += 1
        _, nbytes, root = self.sizes[(comm, seq)]
        if root >= len(members):
            raise TraceError(self.t.path, None, f"{base} on communicator {comm:#x} of {len(members)} ranks "
                                                f"with root {root}")
        for r, rnd in enumerate(schedules.schedule(base, self.my_rank[comm], len(members), nbytes, root)):
            reqs = []
            for k, (op, peer, size) in enumerate(rnd):
                req = ("coll", i, r, k)
                tag = ("coll", seq)
                self.prog.append(("isend" if op == "send" else "irecv", members[peer], (comm, tag), size, req))
                self.out.messages += op == "send"
                reqs.append(req)
            self.prog.append(("wait", tuple(reqs)))
        if int(rec["request"]):
            self.done(i)  # a nonblocking collective, modelled as done at its post
        self.out.collectives[base] += 1
        return True


def _program(t, world, sizes, out, comms):
    """One rank's program, and per operation the MPI call it came from (name, its number)."""
    rank = _RankProgram(t, world, sizes, out, comms)
    names, recs, prog = t.call_names(), t.records, rank.prog
    calls = []         # per operation of prog: (MPI call, its number)
    number = 0
    prev_end = int(t.init_ns)
    i = 0
    while i < len(recs):
        rec, name = recs[i], names[i]
        if rec["kind"] != CALL:
            i += 1
            continue
        number += 1
        start, end = int(rec["start_ns"]), int(rec["end_ns"])
        rank.calc(start - prev_end)
        prev_end = end
        completions, j = rank.completions_after(i)
        if not rank.call(name, rec, i, completions, end - start):
            rank.calc(end - start)
            out.unmodelled[name] += 1
            if int(rec["request"]):
                rank.done(i)  # its completion, when waited for, is in the time just kept
        calls += [(name, number)] * (len(prog) - len(calls))
        i = j
    rank.calc(int(t.finalize_ns) - prev_end)
    calls += [("MPI_Finalize", number + 1)] * (len(prog) - len(calls))
    return prog, calls


def stuck_message(programs, err):
    """A loggops.DeadlockError of these programs in the MPI calls of the traces."""
    return stuck_words([(rank, programs.calls[rank][pc], awaited) for rank, pc, awaited in err.stuck],
                       err.finished)


def stuck_words(stuck, finished):
    """What stuck ranks [(rank, (MPI call, its number in the trace), (kind, peer) awaited or None)]
    wait for, in words."""
    said = []
    for rank, (name, number), awaited in stuck[:4]:
        line = f"rank {rank} is stuck in {name} (call {number} of its trace)"
        if awaited:
            kind, peer = awaited
            line += f", waiting for a message from rank {peer}" if kind == "irecv" else \
                f", its message to rank {peer} never received"
        said.append(line)
    if len(stuck) > 4:
        said.append(f"{len(stuck) - 4} more ranks are stuck")
    if finished:
        said.append(f"rank{'s' if len(finished) > 1 else ''} {', '.join(map(str, finished))} "
                    "ran to the end")
    return ("the traces cannot be replayed to the end: " + "; ".join(said) + ". The ranks' traces are "
            "probably from different runs (a reused --trace folder, or one rank's file from another run): "
            "trace the program again into an empty folder. If they are of one run, the program talks on a "
            "communicator as large as MPI_COMM_WORLD in another rank order, whose membership the traces do "
            "not record (written before version 4, or made by MPI_Comm_spawn and the like), which the replay "
            "takes in the world's (docs/trace-format.md, Limits)")
