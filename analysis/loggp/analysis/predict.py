"""`loggp predict`: a traced run replayed under LogGOPS (loggp.analysis.loggops)
at the machine's own parameters and at each knob setting; the predicted
slowdown is the time the setting adds to the replay over the traced run's own
length, so what the model misses of the machine itself (time inside MPI it
does not explain) neither inflates nor hides the knob's share. Docs:
docs/predict.md."""
import json
import math
import sys
from pathlib import Path

from loggp.knobs import FLAGS, SETTINGS, KnobError, parse as parse_knobs
from loggp.knobs.command import EXIT_USAGE, Command, CommandError, UsageError, positive_int
from loggp.knobs.vocabulary import FLAG_NAMES, knobs_of
from loggp.knobs.files import write_text_atomic
from loggp.experiments.signature import find_probe_run
from loggp.shim import trace_record

from . import (loggops, machine_check, native, otf2_import, otf2_stream, predict_jobs, target_prediction, trace,
               trust)

KNOBS = SETTINGS
# The machine's own parameters when no probe result is given: MPICH over libfabric's
# shm provider on the machine loggp was developed on (loggp probe, 8 B; G from 64 KiB;
# docs/predict.md).
DEFAULT_MACHINE = loggops.Params(o_s=150.0, o_r=150.0, g=100.0, G=0.05, L=300.0, S=4096)


def machine_from_probe(path):
    """The machine's parameters from `loggp probe --json FILE` output: its summary's o_s, o_r,
    g, L (us), G (ns/B), and the eager limit: the largest size it measured before the protocol
    switch (the probe reports the first size past it)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise CommandError(f"--machine {path}: {err.strerror}", exit_code=EXIT_USAGE) from None
    except ValueError as err:
        raise CommandError(f"--machine {path}: not JSON ({err})", exit_code=EXIT_USAGE) from None
    run = find_probe_run(data)
    if run is None:
        raise CommandError(f"--machine {path}: no probe summary in it (expected `loggp probe --json` output)",
                           exit_code=EXIT_USAGE)
    summary = run["summary"]
    return loggops.Params(o_s=1e3 * summary["o_s_us"], o_r=1e3 * summary["o_r_us"], g=1e3 * summary["g_us"],
                          G=summary["G_ns_per_byte"], L=1e3 * summary["L_us"], S=eager_limit(run))


def eager_limit(run):
    """S, the largest eager message: the largest size measured below the first size past the
    switch (the limit lies between the two; shm's 4 KiB is a size the default sweep has).
    No switch seen: the default's."""
    switch = run["summary"].get("protocol_switch_bytes")
    if not switch:
        return DEFAULT_MACHINE.S
    below = [s.get("bytes") for s in run.get("sizes") or () if isinstance(s, dict)]
    below = [b for b in below if isinstance(b, (int, float)) and b < switch]
    return float(max(below)) if below else float(switch - 1)


def load(folder, notes=None, chunk=native.CHUNK_RECORDS):
    """The folder's traces, replayed from their files a chunk of records at a time
    (native.TraceReplay), or an OTF2 archive's, converted a chunk at a time into a temporary
    folder and replayed the same way (otf2_stream.ArchiveReplay: close it, or use a with block,
    to remove the folder at once); ValueError (trace.TraceError) naming what is wrong,
    loggops.DeadlockError when they cannot be replayed to the end. notes (a list) gets what an
    OTF2 archive had that is left out, and a folder's unfinished traces of a dead run."""
    if otf2_import.is_archive(folder):
        return otf2_stream.load(folder, notes, chunk=chunk)
    files = trace.open_folder(folder)
    unfinished = trace.unfinished_note(folder)
    if unfinished and notes is not None:
        notes.append(unfinished)  # a dead run's files beside these: said, not read
    return native.TraceReplay(files, chunk=chunk)


def simulate(programs, machine, **deltas):
    """The replay (native.TraceReplay or replay.Programs) at machine plus deltas; a deadlock
    is said in the traces' MPI calls."""
    return programs.simulate(machine.plus(**deltas))


def runtime(programs, machine, **deltas):
    return simulate(programs, machine, **deltas).runtime_ns


def slowdowns(programs, machine, knob, deltas):
    """[(delta, predicted slowdown as a fraction of the traced run)] for one knob."""
    base = runtime(programs, machine)
    return [(d, (runtime(programs, machine, **{knob: d}) - base) / programs.traced_ns) for d in deltas]


def slope(points):
    """Least-squares slope through the origin of slowdown against delta."""
    den = sum(d * d for d, _ in points)
    return sum(d * s for d, s in points) / den if den else 0.0


def tolerance(programs, machine, knob, target, high):
    """The smallest delta (ns, or ns/B for G) at which the predicted slowdown
    reaches target, searched up to high; None if it does not get there."""
    base = runtime(programs, machine)

    def over(d):
        return (runtime(programs, machine, **{knob: d}) - base) / programs.traced_ns >= target

    if not over(high):
        return None
    lo, hi = 0.0, high
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if over(mid) else (mid, hi)
        if hi - lo <= 1e-3 * hi:
            break
    return hi


def predict_slopes(trace_dir, knob_settings, machine=None):
    """For the study report: {knob: {"slope": %/us (%/(ns/B) for G), "points": [(delta, slowdown %)]}}
    from the trace in trace_dir; knob_settings {knob: [delta in ns (ns/B for G)]}."""
    programs = load(trace_dir)
    machine = machine or DEFAULT_MACHINE
    out = {}
    for knob, deltas in knob_settings.items():
        points = [(d, 100.0 * s) for d, s in slowdowns(programs, machine, knob, [float(x) for x in deltas])]
        per = 1.0 if knob == "G" else 1e-3  # slope per ns/B, or per us
        out[knob] = {"slope": slope([(d * per, s) for d, s in points]), "points": points}
    return out


def sweep_values(knob, text):
    """'10us' -> [10000.0]; 'A:B:S' -> A, A+S, ..., B (each parsed by the one knob parser)."""
    parts = text.split(":")
    if len(parts) not in (1, 3):
        raise UsageError(f"--{knob} {text}: expected a value or START:STOP:STEP")
    try:
        values = [parse_knobs({_flag_knob(knob): p})[_flag_knob(knob)] for p in parts]
    except KnobError as err:  # its message starts with the flag, named here already
        raise UsageError(f"--{knob} {text}: {str(err).split(': ', 1)[-1]}") from None
    if len(values) == 1:
        return values
    start, stop, step = values
    if step <= 0 or stop < start:
        raise UsageError(f"--{knob} {text}: expected STOP >= START and STEP > 0")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > 1000:
        raise UsageError(f"--{knob} {text}: {count} settings; at most 1000")
    return [start + k * step for k in range(count)]


def _flag_knob(flag):
    return FLAG_NAMES[flag]


class PredictCommand(Command):
    name = "predict"
    description = ("Predict from a trace (`loggp run --trace DIR`) how much slower the program runs with each "
                   "knob setting: the traced run replayed under LogGOPS, with MPICH's collective algorithms, at "
                   "the machine's own parameters and with each delta added.")
    example = "loggp predict cg-trace --machine probe.json --L 0:100us:10us --o 10us --G 1ns/B"

    def configure(self, p):
        p.add_argument("folder", help="the trace folder (trace.<rank>.bin), or an OTF2 archive (its folder or its "
                                      "traces.otf2; docs/trace-formats.md)")
        p.add_argument("--machine", metavar="PROBE_JSON",
                       help="the machine's own o_s, o_r, g, G, L and eager limit from `loggp probe --json` "
                            "(default: figures of MPICH over libfabric's shm provider, on one host, measured "
                            "on loggp's development machine; docs/predict.md)")
        for setting, flag in FLAGS.items():
            what = " and ".join(knobs_of(setting))
            p.add_argument(flag, metavar="V|A:B:S", once=True,
                           help=f"delta of {what}: one value or a sweep START:STOP:STEP (default: not predicted)")
        p.add_argument("--target", metavar="NAME|FILE", action="append",
                       help="also replay at a target network's parameters (`loggp targets`, or a probe or target "
                            "file; repeatable; docs/targets.md; default: none)")
        p.add_argument("--json", metavar="FILE", help="also write the predictions as JSON (default: none)")
        p.add_argument("--jobs", metavar="N", type=positive_int, default=1,
                       help="replays run in up to N processes, settings split among them (default: 1)")

    def check(self, args):
        args.sweeps = {}
        for flag in FLAG_NAMES:
            text = getattr(args, flag)
            if text is not None:
                args.sweeps[_flag_knob(flag)] = sweep_values(flag, text)
        if not args.sweeps and not args.target:
            raise UsageError("no knob given: say which deltas to predict, e.g. --L 10us or --o 0:10us:1us, "
                             "or a --target network")
        folder = Path(args.folder)
        if folder.is_file() and not otf2_import.is_archive(folder):
            raise UsageError(f"{args.folder}: a file, not a folder: give the trace folder "
                             f"({folder.parent}), which holds every rank's trace.<rank>.bin")
        if not folder.exists():
            raise UsageError(f"{args.folder}: no such folder")
        if args.json and not Path(args.json).resolve().parent.is_dir():
            raise UsageError(f"--json {args.json}: its folder does not exist")

    def run(self, args):
        notes = []
        try:
            programs = load(args.folder, notes)
        except ValueError as err:
            raise CommandError(str(err), exit_code=EXIT_USAGE) from None
        except loggops.DeadlockError as err:
            raise CommandError(f"{args.folder}: {err}") from None
        with programs:  # an archive's converted records go with it
            return self.predict(args, programs, notes)

    def predict(self, args, programs, notes):
        for note in notes:
            print(f"loggp predict: note: {note}", file=sys.stderr)
        machine = machine_from_probe(args.machine) if args.machine else DEFAULT_MACHINE
        recorded = trace_record.read(args.folder)
        transport = machine_check.trace_transport(getattr(programs, "files", ()), recorded)  # none: OTF2
        probe = json.loads(Path(args.machine).read_text()) if args.machine else None  # read and checked above
        if args.machine:
            machine_check.check(args.machine, probe, transport)
        header_says = machine_check.as_run_record(transport) or {}
        unlike = None if args.machine else trace_record.unlike_default(
            {**recorded, **header_says} if recorded else header_says or None)
        if unlike:
            print(f"loggp predict: note: this trace ran {unlike}; the default machine parameters are MPICH's "
                  "over libfabric's shm provider on one host: give the traced machine's own with --machine "
                  "(`loggp probe --json FILE` under the same MPI and provider)", file=sys.stderr)
        elif not args.machine:
            print(f"loggp predict: note: {machine_check.DEFAULTS_NOTE}", file=sys.stderr)
        try:
            base = simulate(programs, machine)
        except loggops.DeadlockError as err:
            raise CommandError(f"{args.folder}: {err}") from None
        result = {"folder": str(args.folder), "ranks": programs.ranks,
                  "traced_s": programs.traced_ns * 1e-9, "replayed_s": base.runtime_ns * 1e-9,
                  "explained_share": base.runtime_ns / programs.traced_ns if programs.traced_ns else None,
                  "machine": vars(machine) | {"S": machine.S if math.isfinite(machine.S) else None},
                  "messages": programs.messages, "collectives": dict(programs.collectives),
                  "unmodelled": dict(programs.unmodelled), "knobs": {}}
        print(f"{args.folder}: {programs.ranks} ranks, traced {programs.traced_ns * 1e-9:.4f} s, "
              f"replayed at the machine's parameters {base.runtime_ns * 1e-9:.4f} s "
              f"({base.runtime_ns / programs.traced_ns:.2f} of traced); {programs.messages} messages")
        # a program's own timer (NPB's timed section) may cover less: its percentages come out larger
        print("  slowdowns below are percentages of the whole traced run, MPI_Init to MPI_Finalize")
        print(f"  {trust.explained(base.runtime_ns, programs.traced_ns)}")
        machines = {"mid": machine}
        halves = trust.probe_halves(find_probe_run(probe)) if args.machine else {}
        if halves:
            machines["low"], machines["high"] = trust.corners(machine, halves)
            print(f"  intervals: the replay at both ends of the probe's 95 % intervals of {', '.join(halves)} "
                  "(L, G and the eager limit are fits without one)")
        else:
            print("  figures to two significant digits: " + ("the probe gives no interval" if args.machine else
                                                             "the default parameters are not this machine's"))
        if programs.unmodelled:
            kept = ", ".join(f"{n} x{c}" for n, c in programs.unmodelled.most_common(5))
            print(f"  kept at their traced time (not modelled): {kept}")
        result["targets"] = predict_targets(programs, machine, args.target or ())
        highs = {knob: max(max(deltas) * 10, 1000.0 if knob == "G" else 1e6) for knob, deltas in args.sweeps.items()}
        source = getattr(programs, "folder", args.folder)  # an archive's: its converted traces, read once
        evaluated = predict_jobs.evaluate(programs, source, machines, args.sweeps, highs, args.jobs)
        for knob, deltas in args.sweeps.items():
            unit, scale = ("ns/B", 1.0) if knob == "G" else ("us", 1e-3)
            curves, tolerances = evaluated[knob]
            points = curves["mid"]
            row = {"points": [{"delta": d * scale, "slowdown_percent": 100 * s} for d, s in points],
                   "slope_percent_per_unit": slope([(d * scale, 100 * s) for d, s in points]), "unit": unit,
                   "tolerance": {f"{int(t * 100)}%": _scaled(tolerances[t], scale) for t in predict_jobs.TARGETS}}
            if halves:
                for k, pt in enumerate(row["points"]):
                    ends = [100 * curves[m][k][1] for m in machines]
                    pt["slowdown_interval_percent"] = [min(ends), max(ends)]
            result["knobs"][knob] = row
            print(f"{knob}: slope {row['slope_percent_per_unit']:.3g} %/{unit}; reaches 1 % at "
                  f"{_show(row['tolerance']['1%'], unit)}, 5 % at {_show(row['tolerance']['5%'], unit)}")
            for pt in row["points"]:
                print(f"  {knob} +{pt['delta']:g} {unit}: "
                      f"{trust.show_percent(pt['slowdown_percent'], *pt.get('slowdown_interval_percent', ()))}")
        if args.json:
            write_text_atomic(args.json, json.dumps(result, indent=1))
        return 0


def predict_targets(programs, machine, specs):
    """Each --target replayed at its own parameters (analysis.target_prediction), printed."""
    rows = []
    for spec in specs:
        try:
            row = target_prediction.predict(programs, machine, spec, runtime)
        except target_prediction.TargetPredictionError as err:
            raise CommandError(str(err), exit_code=2) from None
        for line in target_prediction.lines(row):
            print(line)
        rows.append(row)
    return rows


def _scaled(value, scale):
    return None if value is None else value * scale


def _show(value, unit):
    return "never (in the range searched)" if value is None else f"{value:.3g} {unit}"
