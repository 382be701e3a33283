"""A LogGOPS replay engine: each rank's program of computation, sends, receives
and waits, timed under o_s, o_r, g, G, L and a rendezvous threshold S
(Hoefler, Schneider, Lumsdaine, LogGOPSim, HPDC 2010, as facts), with the
apparatus's own readings of the knobs (docs/knobs.md):

- a send costs its CPU o_s, and returns when its message is injected, which is
  no earlier than g + (k-1)G after the previous injection (LogP's gap as a
  minimum spacing: computation and o overlap it);
- an eager message (k <= S) arrives (k-1)G + L after its injection, and its
  receiver pays o_r when it takes it, no earlier than g after its previous
  reception;
- a rendezvous message (k > S) sends its request L ahead, the receiver's
  go-ahead leaves when both the request is there and the receive is posted and
  takes L back, then the data flows ((k-1)G + L): three flights when the
  receive was posted in time, two after a late post;
- a message a rank sends itself never reaches the network (MPI copies it): its
  sender pays o_s + o_r at the send, as the apparatus charges it, and it is
  there at once, with no g, G, L or rendezvous;
- a synchronous send (MPI_Ssend, Issend, Ssend_init) to another rank completes
  when the receiver's acknowledgement arrives: MPICH's ch4:ofi netmod answers
  every synchronous message, at every size, with a zero-byte message the
  receiver injects when it takes the message, and the apparatus charges that
  message as any other (o_s at the receiver, L in flight, o_r at the sender).
  The receiver takes it at max(arrival, its post) (eager; the rendezvous's
  data end + L above S), answers after o_r + o_s, and the answer arrives L
  later; the sender pays o_r when it waits for it, the receiver o_s after the
  o_r of its wait;
- a buffered send (MPI_Bsend, Ibsend, Bsend_init) is done at its injection at
  every size (MPI copied it into the attached buffer); above S the data still
  takes the rendezvous, which only its receiver waits for.

Programs are lists of operations (tuples):
    ("calc", ns)                           local work
    ("isend", peer, key, bytes, req)       key: (communicator, tag) of the match
    ("isend", peer, key, bytes, req, mode) mode: "sync" or "buffered" (absent: a standard send)
    ("irecv", peer, key, bytes, req)
    ("wait", (req, ...))                   blocks until each request is complete
    ("done", req)                          marks req complete now (a request whose work was modelled inline)
Requests are any hashable names, unique per rank. Times are ns."""
from collections import deque
from dataclasses import dataclass

from loggp.knobs.params import LogGP

from . import native


@dataclass(frozen=True)
class Params(LogGP):
    """The LogGP set (loggp.knobs.params) with LogGOPS's rendezvous threshold S;
    plus() and the rest are LogGP's and keep S."""
    S: float = float("inf")  # largest eager message, bytes


class DeadlockError(RuntimeError):
    """The programs cannot all finish: some wait for a message nobody sends.
    stuck: [(rank, operation index, (op kind, peer) it waits on, or None)];
    finished: the ranks that ran to their end."""

    def __init__(self, message, stuck=(), finished=()):
        super().__init__(message)
        self.stuck, self.finished = list(stuck), list(finished)


def _awaited(st):
    """(kind, peer) of the first isend or irecv the rank's current wait still needs, or None."""
    op = st.program[st.pc]
    if op[0] != "wait":
        return None
    missing = {req for req in op[1] if req not in st.done}
    for earlier in reversed(st.program[:st.pc]):
        if earlier[0] in ("isend", "irecv") and earlier[4] in missing:
            return earlier[0], earlier[1]
    return None


@dataclass
class Result:
    end_ns: list          # each rank's finish time
    compute_ns: list      # time each rank spent in "calc"
    overhead_ns: list     # o_s and o_r each rank paid
    waiting_ns: list      # time each rank stood in waits and gaps

    @property
    def runtime_ns(self):
        return max(self.end_ns) if self.end_ns else 0.0


SEND_MODES = ("standard", "sync", "buffered")


class _Send:
    __slots__ = ("rank", "req", "bytes", "inj", "mode")

    def __init__(self, rank, req, nbytes, inj, mode):
        self.rank, self.req, self.bytes, self.inj, self.mode = rank, req, nbytes, inj, mode


class _Recv:
    __slots__ = ("rank", "req", "post")

    def __init__(self, rank, req, post):
        self.rank, self.req, self.post = rank, req, post


class _Rank:
    __slots__ = ("program", "pc", "t", "nic_tx", "nic_rx", "done", "receives", "acks", "compute", "overhead",
                 "waiting")

    def __init__(self, program):
        self.program, self.pc, self.t = program, 0, 0.0
        self.nic_tx = self.nic_rx = float("-inf")
        self.done = {}        # req -> completion time
        self.receives = set()  # reqs that are receives (or a synchronous send's answer): o_r is paid when taken
        self.acks = set()      # receives of synchronous messages: o_s is paid for the answer when taken
        self.compute = self.overhead = self.waiting = 0.0


def simulate(programs, params):
    """Times the programs (one per rank) under params with the C core (loggp.analysis.native);
    returns a Result, or raises DeadlockError."""
    status, end, compute, overhead, waiting, stuck = native.ops_sim(programs).run(params)
    if status < 0:
        raise ValueError("the replay core failed on these programs")
    if status == 1:
        raise deadlock([(me, int(s["op"]), _kind_peer(s)) for me, s in enumerate(stuck) if not s["finished"]],
                       [me for me, s in enumerate(stuck) if s["finished"]])
    return Result(end.tolist(), compute.tolist(), overhead.tolist(), waiting.tolist())


def _kind_peer(stuck):
    kind = {native.ISEND: "isend", native.IRECV: "irecv"}.get(int(stuck["awaited_kind"]))
    return None if kind is None else (kind, int(stuck["awaited_peer"]))


def deadlock(stuck, finished):
    """The DeadlockError of stuck [(rank, operation index, (kind, peer) or None)] ranks."""
    said = "; ".join(f"rank {me} at operation {pc}" + (f" waits on its {w[0]} with rank {w[1]}" if w else "")
                     for me, pc, w in stuck[:4])
    return DeadlockError(f"the programs cannot finish: {said}", stuck, finished)


def simulate_reference(programs, params, timeline=None):
    """The same replay in Python: the C core's test oracle. timeline (a list), when given,
    is filled with one list per rank of its clock after each of its operations."""
    ranks = [_Rank(p) for p in programs]
    if timeline is not None:
        timeline[:] = [[] for _ in ranks]
    channels = {}   # (src, dst, key) -> (deque of _Send, deque of _Recv)
    p = params

    def match(s, r):
        sender, receiver = ranks[s.rank], ranks[r.rank]
        if s.rank == r.rank:
            receiver.done[r.req] = s.inj
            return
        flight = max(s.bytes - 1, 0) * p.G
        if s.bytes <= p.S:
            arrival = s.inj + flight + p.L
            receiver.done[r.req] = arrival
            taken = max(arrival, r.post)
        else:
            go_ahead = max(s.inj + p.L, r.post) + p.L
            data_end = go_ahead + flight
            if s.mode == "standard":
                sender.done[s.req] = data_end
            receiver.done[r.req] = taken = data_end + p.L
        if s.mode == "sync":  # the receiver's answer, after its o_r and the o_s of the answer
            sender.done[s.req] = taken + p.o_r + p.o_s + p.L
            receiver.acks.add(r.req)

    def inject(st, nbytes):
        """Pays o_s, waits for the gap; returns the injection time."""
        ready = st.t + p.o_s
        inj = max(ready, st.nic_tx)
        st.overhead += p.o_s
        st.waiting += inj - ready
        st.t = inj
        st.nic_tx = inj + p.g + max(nbytes - 1, 0) * p.G
        return inj

    def copy_to_self(st):
        """A message to oneself: both overheads at the send, no network."""
        st.t += p.o_s + p.o_r
        st.overhead += p.o_s + p.o_r
        return st.t

    def run(me, st):
        """Advances one rank until it ends or waits on what is not known yet;
        True if it moved."""
        moved = False
        prog = st.program
        stamps = timeline[me] if timeline is not None else None
        while st.pc < len(prog):
            op = prog[st.pc]
            kind = op[0]
            if kind == "calc":
                st.t += op[1]
                st.compute += op[1]
            elif kind == "isend":
                _, peer, key, nbytes, req = op[:5]
                mode = op[5] if len(op) > 5 else "standard"
                if mode not in SEND_MODES:
                    raise ValueError(f"unknown send mode {mode!r}")
                if peer == me:
                    mode = "standard"  # MPI copies it: nothing to wait for
                inj = copy_to_self(st) if peer == me else inject(st, nbytes)
                send = _Send(me, req, nbytes, inj, mode)
                if mode == "sync":
                    st.receives.add(req)  # done when its answer is taken
                elif nbytes <= p.S or peer == me or mode == "buffered":
                    st.done[req] = inj
                sends, recvs = channels.setdefault((me, peer, key), (deque(), deque()))
                if recvs:
                    match(send, recvs.popleft())
                else:
                    sends.append(send)
            elif kind == "irecv":
                _, peer, key, nbytes, req = op
                if peer != me:  # a receive from oneself had its o_r paid at the send
                    st.receives.add(req)
                recv = _Recv(me, req, st.t)
                sends, recvs = channels.setdefault((peer, me, key), (deque(), deque()))
                if sends:
                    match(sends.popleft(), recv)
                else:
                    recvs.append(recv)
            elif kind == "wait":
                if any(req not in st.done for req in op[1]):
                    return moved
                # taken as they completed, not in the list's order: MPI's Waitall does not
                # depend on the order of its arguments (ties keep that order)
                for req in sorted(op[1], key=st.done.__getitem__):
                    at = st.done.pop(req)
                    if req in st.receives:
                        st.receives.discard(req)
                        take = max(st.t, at, st.nic_rx)
                        st.nic_rx = take + p.g
                        st.waiting += take - st.t
                        st.t = take + p.o_r
                        st.overhead += p.o_r
                        if req in st.acks:  # it answers a synchronous message
                            st.acks.discard(req)
                            st.t += p.o_s
                            st.overhead += p.o_s
                    elif at > st.t:
                        st.waiting += at - st.t
                        st.t = at
            elif kind == "done":
                st.done[op[1]] = st.t
            else:
                raise ValueError(f"unknown operation {kind!r}")
            st.pc += 1
            moved = True
            if stamps is not None:
                stamps.append(st.t)
        return moved

    pending = list(range(len(ranks)))
    while pending:
        progress = False
        for me in pending:
            progress |= run(me, ranks[me])
        pending = [me for me in pending if ranks[me].pc < len(ranks[me].program)]
        if pending and not progress:
            raise deadlock([(me, ranks[me].pc, _awaited(ranks[me])) for me in pending],
                           [me for me in range(len(ranks)) if me not in pending])
    return Result([st.t for st in ranks], [st.compute for st in ranks], [st.overhead for st in ranks],
                  [st.waiting for st in ranks])
