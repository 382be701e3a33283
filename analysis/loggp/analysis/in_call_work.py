"""How much of a prediction hangs on the calls' own time the replay leaves out
(docs/prediction-against-emulation.md, "IS at L = 1 ms: the copies the replay leaves out"). A traced call can take far longer than the
replay gives it at the machine's parameters: shm copies a large message on the receiving rank's CPU, MPI copies a message to the
rank itself, a buffer is touched for the first time. LogGOPS has no such per-byte CPU cost (its O),
so the replay leaves that time out, and with it whatever the added flights would overlap. Put back
as CPU work in each chosen call, before the call's posts (in series with its flights) or before its
first wait (overlapping them), it brackets the added time an emulation on this machine can read.

    python analysis/bench/in_call_work.py is-base-1 is-base-2 --calls MPI_Alltoallv --L 1ms
"""
import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

from loggp.knobs import FLAGS, KnobError, parse as parse_knobs
from loggp.knobs.vocabulary import FLAG_NAMES

from . import loggops, predict, replay, trace
from .explain import call_times, intervals, predicted_ends, timeline
from .trace import CALL

LEFT_OUT, BEFORE_POSTS, BEFORE_WAIT = "left out", "before the posts", "before the first wait"
PLACES = (LEFT_OUT, BEFORE_POSTS, BEFORE_WAIT)


class InCallWorkError(ValueError):
    pass


def unexplained_ns(traced_start, traced_end, predicted_end):
    """Per call: its traced length less the replay's (each from the end of the call before; the
    computation before it is the traced one in both), never below 0 (ns, float arrays)."""
    traced_end = np.asarray(traced_end, dtype="f8")
    computation = np.asarray(traced_start, dtype="f8") - np.concatenate(([0.0], traced_end[:-1]))
    traced = traced_end - np.asarray(traced_start, dtype="f8")
    replayed = intervals(predicted_end) - computation
    return np.maximum(traced - replayed, 0.0)


def with_work(program, calls, work_ns, place):
    """A rank's program with ("calc", work_ns[number]) put into each call numbered in work_ns:
    at its start (BEFORE_POSTS) or before its first wait (BEFORE_WAIT; at its end if it has none),
    and the per-operation call list to match. LEFT_OUT: the program as it is."""
    if place not in PLACES:
        raise InCallWorkError(f"place '{place}': one of {', '.join(PLACES)}")
    if place == LEFT_OUT or not work_ns:
        return list(program), list(calls)
    out, out_calls = [], []
    i = 0
    while i < len(program):
        j = i
        while j < len(program) and calls[j] == calls[i]:
            j += 1
        block, owner = list(program[i:j]), calls[i]
        work = work_ns.get(owner[1], 0.0)
        if work > 0:
            at = 0 if place == BEFORE_POSTS else next(
                (k for k, op in enumerate(block) if op[0] == "wait"), len(block))
            block.insert(at, ("calc", work))
        out += block
        out_calls += [owner] * len(block)
        i = j
    return out, out_calls


def replay_length_ns(programs, params):
    """The slowest rank's end in the Python reference replay."""
    stamps = []
    loggops.simulate_reference(programs, params, timeline=stamps)
    return max((s[-1] for s in stamps if s), default=0.0)


def bracket(traces, machine, deltas, names):
    """{place: (replayed length, added by deltas)} in ns for one traced run (Trace per rank),
    with the unexplained time of the calls named in `names` put at each place."""
    programs = replay.build(traces)
    stamps = timeline(programs, machine)
    work = []
    for me, t in enumerate(traces):
        count = int((t.records["kind"] == CALL).sum())
        start, end = call_times(t)
        extra = unexplained_ns(start, end, predicted_ends(programs.calls[me], stamps[me], count))
        call_names = t.call_names()[t.records["kind"] == CALL]
        work.append({n + 1: float(extra[n]) for n in range(count) if call_names[n] in names})
    if not any(work):
        raise InCallWorkError(f"no call named {', '.join(sorted(names))} in the trace")
    out = {}
    for place in PLACES:
        built = [with_work(p, c, w, place)[0] for p, c, w in zip(programs.programs, programs.calls, work)]
        base = replay_length_ns(built, machine)
        out[place] = (base, replay_length_ns(built, machine.plus(**deltas)) - base)
    return out


def _parser():
    p = argparse.ArgumentParser(prog="in_call_work.py", description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR", help="traced runs of one program at the baseline")
    p.add_argument("--calls", required=True, metavar="NAME[,NAME]",
                   help="the MPI calls whose own time to put back, e.g. MPI_Alltoallv")
    for dest, knob in FLAG_NAMES.items():
        p.add_argument(FLAGS[knob], dest=dest, metavar="V", help=f"the setting's delta of {knob} (at least one)")
    p.add_argument("--machine", metavar="PROBE_JSON", help="as for `loggp predict` (default: its own)")
    return p


def main(argv=None, stream=None):
    stream = stream or sys.stdout
    args = _parser().parse_args(argv)
    texts = {knob: getattr(args, dest) for dest, knob in FLAG_NAMES.items() if getattr(args, dest) is not None}
    try:
        if not texts:
            raise InCallWorkError("no setting: give a delta, e.g. --L 1ms")
        deltas = {k: parse_knobs({k: v})[k] for k, v in texts.items()}
        names = {n.strip() for n in args.calls.split(",") if n.strip()}
        if not names or any(not n.startswith("MPI_") for n in names):
            raise InCallWorkError(f"--calls '{args.calls}': MPI call names, e.g. MPI_Alltoallv")
        for d in args.traces:
            if not Path(d).is_dir():
                raise InCallWorkError(f"{d}: no such folder")
        machine = predict.machine_from_probe(args.machine) if args.machine else predict.DEFAULT_MACHINE
        rows = []
        for d in args.traces:
            traces = trace.read_folder(d)
            traced = max(float(t.finalize_ns - t.init_ns) for t in traces)
            rows.append((d, traced, bracket(traces, machine, deltas, names)))
    except (InCallWorkError, KnobError, ValueError) as err:
        print(f"in_call_work.py: {err}", file=sys.stderr)
        return 2
    setting = ", ".join(f"{FLAGS[k]} {v}" for k, v in texts.items())
    print(f"The replay's added time under {setting}, with the own time of {', '.join(sorted(names))} that it "
          f"leaves out put back as CPU work (ms)\n", file=stream)
    print("| trace | traced | " + " | ".join(f"replayed, {p} | added, {p}" for p in PLACES) + " |", file=stream)
    print("|---|---|" + "---|---|" * len(PLACES), file=stream)
    for d, traced, b in rows:
        cells = " | ".join(f"{b[p][0] * 1e-6:.1f} | {b[p][1] * 1e-6:+.2f}" for p in PLACES)
        print(f"| {d} | {traced * 1e-6:.1f} | {cells} |", file=stream)
    medians = ", ".join(f"{p} {statistics.median(b[p][1] for _, _, b in rows) * 1e-6:+.2f}" for p in PLACES)
    print(f"\nMedian added: {medians}.", file=stream)
    return 0
