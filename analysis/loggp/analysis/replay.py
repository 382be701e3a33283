"""Traces (loggp.analysis.trace) as LogGOPS programs (loggp.analysis.loggops):
the time between MPI calls becomes computation, point-to-point calls become
sends, receives and waits matched as MPI matches them, collectives become
MPICH's point-to-point schedules (loggp.analysis.schedules).

What cannot be modelled is kept as the time it took in the trace and counted
in Programs.unmodelled: point-to-point and collectives on communicators
smaller than MPI_COMM_WORLD (the trace has no membership to map their ranks),
probes, and calls of unknown meaning."""
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import loggops, schedules
from .trace import CALL, COMPLETE

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


def _collective_sizes(traces, world):
    """(comm_id, n-th collective on it) -> (name, largest bytes over ranks, root), for
    collectives on communicators as large as MPI_COMM_WORLD."""
    sizes = {}
    for t in traces:
        names = t.call_names()
        seen = Counter()
        for rec, name in zip(t.records, names):
            if rec["kind"] != CALL:
                continue
            base = schedules.base_name(name)
            if base is None or rec["comm_size"] != world:
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
    sizes = _collective_sizes(traces, world)
    out = Programs([], 0.0)
    for t in traces:
        program, calls = _program(t, world, sizes, out)
        out.programs.append(program)
        out.calls.append(calls)
        out.traced_ns = max(out.traced_ns, float(t.finalize_ns - t.init_ns))
    return out


class _RankProgram:
    """One rank's trace turned into a LogGOPS program, one MPI call at a time."""

    def __init__(self, t, world, sizes, out):
        self.t, self.world, self.sizes, self.out = t, world, sizes, out
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

    def local(self, rec):
        """Point-to-point on a communicator whose ranks are world ranks."""
        return rec["comm_size"] == self.world

    def add_recv(self, rec, completion, req):
        """A receive posted by rec (its communicator); the source, tag and size it
        matched come from its completion record where there is one."""
        got = self.recs[completion] if completion is not None else rec
        src, tag, nbytes = int(got["peer"]), int(got["tag"]), int(got["bytes"])
        if src < 0 or src == ANY_SOURCE or tag == ANY_TAG:
            return False  # never matched (cancelled or MPI_PROC_NULL): nothing to wait for
        self.prog.append(("irecv", src, self.key(rec, tag), nbytes, req))
        return True

    def add_send(self, rec, req):
        """A send as rec says (its call, or the init a Start made it from, gives the mode)."""
        if int(rec["peer"]) < 0:
            return False
        name = self.t.names[rec["call"]]
        mode = ("sync",) if name in SYNC_SENDS else ("buffered",) if name in BUFFERED_SENDS else ()
        self.prog.append(("isend", int(rec["peer"]), self.key(rec), int(rec["bytes"]), req) + mode)
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
        """A collective on MPI_COMM_WORLD's ranks as MPICH's schedule of messages, round by round."""
        comm = int(rec["comm_id"])
        if rec["comm_size"] != self.world:
            return False
        seq = self.coll_seen[comm]
        self.coll_seen[comm] += 1
        _, nbytes, root = self.sizes[(comm, seq)]
        for r, rnd in enumerate(schedules.schedule(base, self.t.rank, self.world, nbytes, root)):
            reqs = []
            for k, (op, peer, size) in enumerate(rnd):
                req = ("coll", i, r, k)
                tag = ("coll", seq)
                self.prog.append(("isend" if op == "send" else "irecv", peer, (comm, tag), size, req))
                self.out.messages += op == "send"
                reqs.append(req)
            self.prog.append(("wait", tuple(reqs)))
        if int(rec["request"]):
            self.done(i)  # a nonblocking collective, modelled as done at its post
        self.out.collectives[base] += 1
        return True


def _program(t, world, sizes, out):
    """One rank's program, and per operation the MPI call it came from (name, its number)."""
    rank = _RankProgram(t, world, sizes, out)
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
            "communicator as large as MPI_COMM_WORLD in another rank order, which the replay takes in the "
            "world's (docs/trace-format.md, Limits)")
