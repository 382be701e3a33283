"""Where a prediction and an emulation part ways: the time a knob setting added to each
MPI call, emulated (two traces of one program, at the baseline and at the setting) and
predicted (the replay of the baseline trace at the machine's parameters and with the
setting's delta added), summed per class of call and listed call by call.

Each call's interval runs from the previous call's end to its own end, so it holds the
computation before the call and the call; added time is the setting's interval minus
the baseline's. The replay keeps computation as traced, so the emulated added time is
also split per rank into time inside calls and time outside them. Docs: docs/predict.md."""
from dataclasses import dataclass, field

import numpy as np

from . import loggops, replay, schedules
from .trace import CALL, COMPLETE

COLLECTIVE = "collective"
NO_PEER = "-"          # a call without a peer or a message of its own (a probe, a test that found nothing)
MIXED = "mixed"        # a completion call that completed messages of several kinds
COMPLETIONS = replay.WAITS
PERSISTENT_INITS = replay.SEND_INITS | {"MPI_Recv_init"}


class ExplainError(ValueError):
    """Two traces that cannot be compared call by call; the message names the rank."""


def call_times(t):
    """(start, end) of each CALL record of Trace t, ns after its init_ns (float arrays)."""
    calls = t.records[t.records["kind"] == CALL]
    init = float(t.init_ns)
    return calls["start_ns"].astype("f8") - init, calls["end_ns"].astype("f8") - init


def check_alike(base, knob):
    """ExplainError unless the two lists of Trace have the same ranks and, per rank, the same
    calls in the same order."""
    if len(base) != len(knob):
        raise ExplainError(f"the baseline trace has {len(base)} ranks, the setting's {len(knob)}")
    for a, k in zip(base, knob):
        names_a = a.call_names()[a.records["kind"] == CALL]
        names_k = k.call_names()[k.records["kind"] == CALL]
        if len(names_a) != len(names_k):
            raise ExplainError(f"rank {a.rank}: the baseline trace has {len(names_a)} calls, the setting's "
                               f"{len(names_k)}: not the same program, or one whose calls depend on timing")
        differ = np.flatnonzero(names_a != names_k)
        if len(differ):
            i = int(differ[0])
            raise ExplainError(f"rank {a.rank}: call {i + 1} is {names_a[i]} in the baseline trace, "
                               f"{names_k[i]} in the setting's")


def message_kind(peer, nbytes, me, members, S):
    """'self', 'rendezvous' (bytes > S) or 'eager' for a message with peer, a rank of a communicator
    whose world ranks are members (None: not known, never 'self'); NO_PEER without one."""
    if peer < 0:
        return NO_PEER
    if members is not None and 0 <= peer < len(members) and members[peer] == me:
        return "self"
    return "rendezvous" if nbytes > S else "eager"


def _members(t, rec):
    """The world ranks of rec's communicator as the replay maps them (replay.members_of)."""
    return replay.members_of(t.comms or {}, int(rec["comm_id"]), int(rec["comm_size"]), t.size)


def classify(t, S):
    """Per CALL record of Trace t: (class (name, kind), bytes). kind: COLLECTIVE for a collective;
    for a completion call the kind of the messages it completed (their posts', a receive's as
    received), MIXED for several kinds; for MPI_Recv and MPI_Start(all) the message received or
    started; else the record's own peer and bytes against the eager limit S."""
    recs, names = t.records, t.call_names()
    posts = t.posts()
    persistent = {}
    out = []
    for i in range(len(recs)):
        rec, name = recs[i], names[i]
        if rec["kind"] != CALL:
            continue
        members = _members(t, rec)
        if schedules.base_name(name) is not None:
            out.append(((name, COLLECTIVE), int(rec["bytes"])))
            continue
        if name in PERSISTENT_INITS:
            persistent[int(rec["request"])] = rec
        completions = []
        j = i + 1
        while j < len(recs) and recs[j]["kind"] == COMPLETE:
            completions.append(j)
            j += 1
        if name in COMPLETIONS:
            kinds, nbytes = set(), 0
            for c in completions:
                post = int(posts[c])
                if post < 0:
                    continue
                posted = recs[post]
                started = persistent.get(int(posted["request"])) if names[post] in ("MPI_Start", "MPI_Startall") \
                    else None
                source = started if started is not None else posted
                if schedules.base_name(t.names[source["call"]]) is not None:
                    kinds.add(COLLECTIVE)  # a nonblocking collective's
                    continue
                receive = t.names[source["call"]] in ("MPI_Irecv", "MPI_Recv_init")
                got = recs[c] if receive else source
                size = int(got["bytes"])
                kinds.add(message_kind(int(got["peer"]), size, t.rank, _members(t, source), S))
                nbytes = max(nbytes, size)
            kind = kinds.pop() if len(kinds) == 1 else (MIXED if kinds else NO_PEER)
            out.append(((name, kind), nbytes))
            continue
        got = rec
        if name == "MPI_Recv" and completions:
            got = recs[completions[0]]
        elif name in ("MPI_Start", "MPI_Startall") and int(rec["request"]) in persistent:
            got = persistent[int(rec["request"])]
            members = _members(t, got)
        nbytes = int(got["bytes"])
        out.append(((name, message_kind(int(got["peer"]), nbytes, t.rank, members, S)), nbytes))
    return out


def predicted_ends(calls, stamps, count):
    """Each of a rank's count calls' predicted end: the replay's clock after the last operation
    mapped to it or to an earlier call (calls: per operation (name, call number from 1), as
    replay.Programs.calls; stamps: the clock after each operation). A call with no operation of
    its own ends where the one before it did; before any, at 0 (the rank's init)."""
    ends = np.zeros(count)
    last = {}
    for (_, number), at in zip(calls, stamps):
        last[number] = at
    clock = 0.0
    for number in range(1, count + 1):
        clock = last.get(number, clock)
        ends[number - 1] = clock
    return ends


def intervals(ends):
    """Each call's interval (from the previous call's end, the first from 0) given the ends."""
    return np.diff(np.asarray(ends, dtype="f8"), prepend=0.0)


def timeline(programs, params):
    """The Python reference replay's clock after each operation, per rank, of replay.Programs;
    a deadlock is said in the traces' MPI calls."""
    stamps = []
    try:
        loggops.simulate_reference(programs.programs, params, timeline=stamps)
    except loggops.DeadlockError as err:
        raise loggops.DeadlockError(replay.stuck_message(programs, err), err.stuck, err.finished) from None
    return stamps


@dataclass
class ClassRow:
    name: str
    kind: str
    calls: int = 0
    emulated_ns: float = 0.0
    in_call_ns: float = 0.0    # of the emulated: inside the calls (the rest is computation before them)
    predicted_ns: float = 0.0

    @property
    def gap_ns(self):
        return self.emulated_ns - self.predicted_ns


@dataclass
class CallRow:
    rank: int
    number: int          # in the rank's trace, from 1
    name: str
    kind: str
    bytes: int
    emulated_base_ns: float
    emulated_ns: float   # the interval at the setting
    predicted_base_ns: float
    predicted_ns: float

    @property
    def gap_ns(self):
        return (self.emulated_ns - self.emulated_base_ns) - (self.predicted_ns - self.predicted_base_ns)


@dataclass
class RankRow:
    rank: int
    emulated_ns: float      # init to finalize, setting minus baseline
    in_calls_ns: float      # of which inside MPI calls
    computation_ns: float   # of which outside them
    predicted_ns: float     # the replay's end, setting minus baseline


@dataclass
class Explanation:
    classes: list                         # ClassRow, largest |emulated - predicted| first
    worst: list                           # CallRow, largest |gap| first
    ranks: list                           # RankRow
    totals: ClassRow = field(default_factory=lambda: ClassRow("all calls", ""))


@dataclass
class RankCalls:
    """One rank's calls as aggregate() takes them: per call its class (name, kind) and bytes, its
    interval in the emulation at the baseline and at the setting, its own length (inside the call)
    in both, and its interval in the replay at both."""
    rank: int
    classes: list
    bytes: list
    emulated_base: np.ndarray
    emulated: np.ndarray
    in_call_base: np.ndarray
    in_call: np.ndarray
    predicted_base: np.ndarray
    predicted: np.ndarray


def aggregate(per_rank, top):
    """per_rank: a RankCalls per rank. The ClassRows summed over ranks, largest
    |emulated - predicted| first, their totals, and the top calls with the largest |gap|."""
    rows = {}
    totals = ClassRow("all calls", "")
    worst = []
    for r in per_rank:
        emulated = r.emulated - r.emulated_base
        in_call = r.in_call - r.in_call_base
        predicted = r.predicted - r.predicted_base
        for i, cls in enumerate(r.classes):
            row = rows.get(cls)
            if row is None:
                row = rows[cls] = ClassRow(*cls)
            row.calls += 1
            row.emulated_ns += float(emulated[i])
            row.in_call_ns += float(in_call[i])
            row.predicted_ns += float(predicted[i])
        totals.calls += len(r.classes)
        totals.emulated_ns += float(emulated.sum())
        totals.in_call_ns += float(in_call.sum())
        totals.predicted_ns += float(predicted.sum())
        # a rank's own top calls: the top of all ranks is among them
        for i in np.argsort(-np.abs(emulated - predicted), kind="stable")[:top]:
            i = int(i)
            worst.append(CallRow(r.rank, i + 1, r.classes[i][0], r.classes[i][1], int(r.bytes[i]),
                                 float(r.emulated_base[i]), float(r.emulated[i]), float(r.predicted_base[i]),
                                 float(r.predicted[i])))
    worst.sort(key=lambda c: -abs(c.gap_ns))
    ordered = sorted(rows.values(), key=lambda c: (-abs(c.gap_ns), c.name, c.kind))
    return ordered, totals, worst[:top]


def rank_row(rank, base_trace, knob_trace, predicted_ns):
    """What the setting added to one rank, init to finalize, inside and outside its calls."""
    start_a, end_a = call_times(base_trace)
    start_k, end_k = call_times(knob_trace)
    whole = float(knob_trace.finalize_ns - knob_trace.init_ns) - float(base_trace.finalize_ns - base_trace.init_ns)
    inside = float((end_k - start_k).sum() - (end_a - start_a).sum())
    return RankRow(rank, whole, inside, whole - inside, predicted_ns)


def explain(base_traces, knob_traces, machine, deltas, top=10):
    """The Explanation of two traced runs of one program (lists of Trace in rank order), the
    baseline's and the setting's, the setting being machine plus deltas ({knob: ns})."""
    check_alike(base_traces, knob_traces)
    programs = replay.build(base_traces)
    at_base = timeline(programs, machine)
    at_setting = timeline(programs, machine.plus(**deltas))
    per_rank, ranks = [], []
    for me, (a, k) in enumerate(zip(base_traces, knob_traces)):
        count = int((a.records["kind"] == CALL).sum())
        labelled = classify(a, machine.S)
        classes = [c for c, _ in labelled]
        nbytes = [b for _, b in labelled]
        pred_a = predicted_ends(programs.calls[me], at_base[me], count)
        pred_k = predicted_ends(programs.calls[me], at_setting[me], count)
        start_a, end_a = call_times(a)
        start_k, end_k = call_times(k)
        per_rank.append(RankCalls(me, classes, nbytes, intervals(end_a), intervals(end_k), end_a - start_a,
                                  end_k - start_k, intervals(pred_a), intervals(pred_k)))
        replay_a = at_base[me][-1] if at_base[me] else 0.0
        replay_k = at_setting[me][-1] if at_setting[me] else 0.0
        ranks.append(rank_row(me, a, k, replay_k - replay_a))
    classes, totals, worst = aggregate(per_rank, top)
    return Explanation(classes, worst, ranks, totals)


def _us(ns, sign="+"):
    """ns in us to 0.1, never "-0.0"."""
    us = round(ns * 1e-3, 1)
    return f"{us if us else 0.0:{sign}.1f}"


def report(ex, setting):
    """The Markdown text `loggp explain` prints."""
    lines = [f"Added by {setting}, per class of call, summed over ranks (each call's interval: the computation "
             "before it and the call; largest |emulated - predicted| first)", "",
             "| call | kind | calls | emulated added (us) | of which in the calls (us) | predicted added (us) "
             "| emulated - predicted (us) |",
             "|---|---|---|---|---|---|---|"]
    for r in ex.classes:
        lines.append(f"| {r.name} | {r.kind} | {r.calls} | {_us(r.emulated_ns)} | {_us(r.in_call_ns)} "
                     f"| {_us(r.predicted_ns)} | {_us(r.gap_ns)} |")
    t = ex.totals
    lines.append(f"| all calls | | {t.calls} | {_us(t.emulated_ns)} | {_us(t.in_call_ns)} | {_us(t.predicted_ns)} "
                 f"| {_us(t.gap_ns)} |")
    lines += ["", "Per rank, init to finalize: the emulated added time inside MPI calls and outside them (the "
                  "program's computation, which the replay keeps as traced)", "",
              "| rank | emulated added (us) | in calls (us) | computation (us) | predicted added (us) |",
              "|---|---|---|---|---|"]
    for r in ex.ranks:
        lines.append(f"| {r.rank} | {_us(r.emulated_ns)} | {_us(r.in_calls_ns)} | {_us(r.computation_ns)} "
                     f"| {_us(r.predicted_ns)} |")
    lines += ["", f"The {len(ex.worst)} calls whose emulated and predicted added times differ most (intervals in us, "
                  "at the baseline and at the setting)", "",
              "| rank | call | name | kind | bytes | emulated | predicted | emulated - predicted added (us) |",
              "|---|---|---|---|---|---|---|---|"]
    for r in ex.worst:
        lines.append(f"| {r.rank} | {r.number} | {r.name} | {r.kind} | {r.bytes} "
                     f"| {_us(r.emulated_base_ns, '')} -> {_us(r.emulated_ns, '')} "
                     f"| {_us(r.predicted_base_ns, '')} -> {_us(r.predicted_ns, '')} | {_us(r.gap_ns)} |")
    return "\n".join(lines) + "\n"
