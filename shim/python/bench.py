"""`loggp bench`: figures about the apparatus itself, measured side by side
with loggp-patterns (np=2), rounds interleaved, medians.

  transparency  the windowed Isend/Irecv stream (8 B, 1 KiB), the ping-pong's
                half round trip (8 B) and the bidirectional exchange (8 B):
                ns per message for plain MPICH, libloggp.so at zero knobs and
                armed (each knob alone at its smallest step, and all four
                together), against the goals of issue 12
  knobs         each knob at 1, 10, 100 us (G as (k-1)G at 4 KiB and 64 KiB)
                with each of the four patterns: the measured increase beside
                what LogGP predicts for that pattern (pattern_model.py)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import loggp.knobs as knob_values
from loggp.knobs.command import Command, UsageError, number_in, positive_int
from loggp.knobs.programs import MissingProgram, find_program
from loggp.shim import jitter_check

from . import pattern_model as model
from . import run as runmod

NP = 2
PROGRAM = "loggp-patterns"
# The same patterns built for each MPI (`--mpi`), and the provider each takes by default.
PROGRAMS = {"mpich": PROGRAM, "openmpi": "loggp-patterns-ompi"}
DEFAULT_PROVIDER = {"mpich": "shm", "openmpi": "tcp"}
# Default per-repetition time; counts follow from the expected ns per unit.
TARGET_NS = 25e6


def patterns_program(mpi="mpich"):
    return find_program(PROGRAMS[mpi])


def parse_lines(text, specs, reps):
    """{(pattern, bytes): [ns per repetition]} from loggp-patterns' JSON lines;
    every spec must have all its repetitions."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
            out.setdefault((rec["pattern"], int(rec["bytes"])), []).append(float(rec["ns"]))
        except (ValueError, KeyError, TypeError) as err:
            raise RuntimeError(f"{PROGRAM}: unreadable line {line!r} ({err})") from None
    for pattern, size, _ in specs:
        got = len(out.get((pattern, size), []))
        if got != reps:
            raise RuntimeError(f"{PROGRAM}: {pattern} at {size} B gave {got} repetitions, expected {reps}")
    return out


def measure(specs, knobs=(), preload=True, provider=None, reps=5, compute_ns=5000, timeout=600, mpi="mpich"):
    """One loggp-patterns run at np=2. specs: (pattern, bytes, count) triples;
    knobs: `loggp run` knob flags. Returns {(pattern, bytes): median ns}.
    The user's knob file and knob variables never reach the run."""
    argv = ["-n", str(NP), "--quiet", "--engine", "libfabric"]
    if provider:
        argv += ["--provider", provider]
    program = [patterns_program(mpi), "--reps", str(reps), "--compute-ns", str(int(compute_ns)),
               "--wait-ns", str(LATE_WAIT_NS)]
    program += [f"{p}:{b}:{c}" for p, b, c in specs]
    parsed = runmod.parser().parse_args(argv + list(knobs) + ["--", *program])
    additions, cmd = runmod.build(parsed, os.environ)
    env = {name: value for name, value in os.environ.items() if not name.startswith("LOGGP_")}
    if preload:
        env.update(additions)
    else:
        env.update({name: value for name, value in additions.items()
                    if name != "LD_PRELOAD" and not name.startswith("LOGGP_")})
    with tempfile.TemporaryDirectory(prefix="loggp-bench-") as private:
        env["LOGGP_KNOB_FILE"] = os.path.join(private, "knobs")  # absent: no knob but the flags
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return {key: statistics.median(values) for key, values in parse_lines(proc.stdout, specs, reps).items()}


DETOURS_SECONDS = 0.5


def host_detours(seconds=DETOURS_SECONDS):
    """loggp-detours' figures for this machine now (how often the host takes a CPU
    away, and for how long), or None if it could not run: the noise under a reading."""
    try:
        proc = subprocess.run([find_program("loggp-detours"), "--json", "--seconds", str(seconds)],
                              capture_output=True, text=True, timeout=60 + 2 * seconds)
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except (MissingProgram, OSError, ValueError, subprocess.SubprocessError):
        return None


def detours_text(detours):
    if not detours:
        return "host detours: not measured (loggp-detours did not run)"
    return (f"host detours: {detours['per_second']:.0f} a second, median {detours['median_us']:.1f} us, "
            f"{100 * detours['lost_fraction']:.1f} % of a CPU (loggp-detours): spins and waits of 10 us and longer "
            "collect some of them (docs/benchmarks.md)")


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def interleaved(rounds, names):
    """Order of the runs in each round: forward, then backward, alternately."""
    return [list(names) if r % 2 == 0 else list(reversed(names)) for r in range(rounds)]


# ---- transparency ----------------------------------------------------------------------------

# Each knob alone at its smallest step (o, g, L: 1 ns; G: 0.001 ns/B) and all four together:
# the delay paths run while the delays add ~nothing, so what shows is the layer's own cost.
ARMED = {
    "armed o": ("--o", "1ns"),
    "armed g": ("--g", "1ns"),
    "armed G": ("--G", "0.001ns/B"),
    "armed L": ("--L", "1ns"),
}
ARMED["armed all"] = tuple(flag for pair in ARMED.values() for flag in pair)
LATE_WAIT_NS = 200000  # the late pattern's idle spell before each timed receive
TRANSPARENCY_SPECS = (("window", 8, 2000), ("window", 1024, 1000), ("pingpong", 8, 20000), ("exchange", 8, 20000),
                      ("late", 8, 200))
TERMS = (
    ("plain", "the MPI alone, no loggp library; same routing (through the libfabric provider)"),
    ("zero", "libloggp.so preloaded, no knob set"),
    ("armed X", "libloggp.so with knob X alone at its smallest step (o, g, L 1 ns; G 0.001 ns/B): "
                "X's delay path runs, the delay adds ~0"),
    ("armed all", "all four knobs at their smallest steps together"),
    ("ns", "window: ns per message; pingpong: ns per half round trip; exchange: ns per iteration "
           f"(each rank sends one message and receives one); late: the median receive call after a "
           f"{LATE_WAIT_NS // 1000} us idle spell, the message long arrived (Martin's o_r)"),
    ("rate", "plain ns / mode ns: the mode's message rate as a fraction of plain MPICH's"),
    ("time", "mode ns / plain ns - 1: time added to plain MPICH's half round trip"),
    ("verdict", "met / missed: the goal of issue 12 on this line; no goal: measured for information"),
)


def transparency_modes(armed):
    names = [name for name in ARMED if name != "armed all"]
    chosen = {"each": names, "all": ["armed all"], "both": names + ["armed all"]}[armed]
    return ["plain", "zero"] + chosen


def transparency_goal(pattern, size, mode):
    """(comparison, threshold) the goals set for one line, or None.
    'rate': plain ns / mode ns >= threshold; 'time': mode ns / plain ns - 1 <= threshold."""
    if pattern == "window" and size in (8, 1024):
        if mode == "zero":
            return ("rate", 0.98)
        if mode.startswith("armed") and mode != "armed all":
            return ("rate", 0.85)
    if pattern == "pingpong" and size == 8 and mode == "zero":
        return ("time", 0.01)
    return None


def transparency_verdict(pattern, size, mode, plain_ns, mode_ns):
    """(rate, time, verdict) for one line."""
    rate, time = plain_ns / mode_ns, mode_ns / plain_ns - 1
    goal = transparency_goal(pattern, size, mode)
    if mode == "plain":
        return rate, time, ""
    if goal is None:
        return rate, time, "no goal"
    kind, threshold = goal
    ok = rate >= threshold if kind == "rate" else time <= threshold
    return rate, time, "met" if ok else "missed"


def transparency(rounds, provider, reps, scale, armed, mpi="mpich"):
    modes = transparency_modes(armed)
    specs = [(p, b, max(1, round(c * scale))) for p, b, c in TRANSPARENCY_SPECS]
    samples = {mode: {(p, b): [] for p, b, _ in specs} for mode in modes}
    load_start, detours = load_average(), host_detours()
    for r, order in enumerate(interleaved(rounds, modes)):
        for mode in order:
            knobs = ARMED.get(mode, ())
            figures = measure(specs, knobs=knobs, preload=mode != "plain", provider=provider, reps=reps, mpi=mpi)
            for key, value in figures.items():
                samples[mode][key].append(value)
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    lines = []
    for p, b, _ in specs:
        plain = statistics.median(samples["plain"][(p, b)])
        for mode in modes:
            ns = statistics.median(samples[mode][(p, b)])
            rate, time, verdict = transparency_verdict(p, b, mode, plain, ns)
            goal = transparency_goal(p, b, mode)
            lines.append({"pattern": p, "bytes": b, "mode": mode, "ns": ns, "rate": rate, "time": time,
                          "goal": list(goal) if goal else None, "verdict": verdict,
                          "samples": samples[mode][(p, b)]})
    return {"np": NP, "mpi": mpi, "provider": provider or DEFAULT_PROVIDER[mpi], "rounds": rounds, "reps": reps,
            "armed": {mode: list(ARMED[mode]) for mode in modes if mode in ARMED},
            "load_average": [load_start, load_average()], "detours": detours, "lines": lines}


def goal_text(goal):
    if goal is None:
        return ""
    kind, threshold = goal
    return f"rate >= {threshold:.2f}" if kind == "rate" else f"time <= +{100 * threshold:.0f} %"


def print_transparency(result):
    print(f"transparency: np={result['np']}, {result.get('mpi', 'mpich')}, libfabric provider {result['provider']}; "
          f"{result['rounds']} rounds, "
          f"modes interleaved; each run's figure the median of {result['reps']} repetitions, medians of rounds")
    print(f"load average (1 min) {result['load_average'][0]:.1f} at the start, {result['load_average'][1]:.1f} at the "
          "end: figures measured on a loaded machine are not results")
    print(detours_text(result.get("detours")))
    print(f"  {'pattern':14s} {'mode':10s} {'ns':>9s} {'rate':>6s} {'time':>8s}  {'goal':15s} verdict")
    for line in result["lines"]:
        label = f"{line['pattern']} {line['bytes']} B"
        if line["mode"] == "plain":
            print(f"  {label:14s} {'plain':10s} {line['ns']:9.1f}")
            continue
        print(f"  {label:14s} {line['mode']:10s} {line['ns']:9.1f} {line['rate']:6.3f} {100 * line['time']:+7.1f}%  "
              f"{goal_text(line['goal']):15s} {line['verdict']}")
    print("terms:")
    for term, text in TERMS:
        print(f"  {term:10s} {text}")


# ---- knobs -----------------------------------------------------------------------------------

PATTERNS = ("pingpong", "window", "exchange", "compute")
UNITS_PER_COUNT = {"pingpong": 2, "window": model.WINDOW, "exchange": 1, "compute": model.WINDOW}
MIN_COUNT = {"pingpong": 20, "window": 2, "exchange": 20, "compute": 2}


def count_for(pattern, ns_per_unit, scale):
    """Count that makes one repetition last about TARGET_NS * scale."""
    count = int(TARGET_NS * scale / (max(ns_per_unit, 1.0) * UNITS_PER_COUNT[pattern]))
    return max(count, MIN_COUNT[pattern])


def guess_ns(pattern, size, compute_ns):
    """A generous first guess of a zero-knob figure, only to size the first counts."""
    stream = 300 + 0.15 * size
    return {"pingpong": 700 + 0.3 * size, "window": stream, "exchange": 800 + 0.3 * size,
            "compute": max(stream, compute_ns) + 300}[pattern]


def knob_settings(knobs, values_us, g_sizes):
    """(name, knob, size, flags, Knobs increments) for each setting measured."""
    out = []
    for knob in knobs:
        for value in values_us:
            ns = value * 1000.0
            if knob == "G":  # the knobs hold G in whole ps per byte: predict with the value set
                for size in g_sizes:
                    per_byte = max(round(ns / (size - 1), 3), 0.001)
                    out.append((f"G={per_byte:g}ns/B", "G", size, ("--G", f"{per_byte:.3f}ns/B"),
                                model.Knobs(G=per_byte)))
                continue
            flag = f"{value:g}us"
            increments = {"o": model.Knobs(os=ns, or_=ns), "g": model.Knobs(g=ns), "L": model.Knobs(L=ns)}[knob]
            out.append((f"{knob}={flag}", knob, 8, (f"--{knob}", flag), increments))
    return out


def base_from(figures, size, compute_ns, g_machine=None):
    return model.Base(bytes=size, pingpong=figures[("pingpong", size)], window=figures[("window", size)],
                      exchange=figures[("exchange", size)], compute=figures[("compute", size)],
                      compute_ns=compute_ns, ack_halfrtt=figures[("pingpong", model.ACK_BYTES)],
                      g_machine=g_machine)


def knob_accuracy(knobs, values_us, g_sizes, rounds, provider, reps, scale, compute_ns, g_machine=None, mpi="mpich"):
    settings = knob_settings(knobs, values_us, g_sizes)
    sizes = sorted({model.ACK_BYTES} | {s[2] for s in settings})
    base_specs = [(p, size, count_for(p, guess_ns(p, size, compute_ns), scale)) for size in sizes for p in PATTERNS]
    names = ["zero"] + [s[0] for s in settings]
    runs = {name: [] for name in names}
    first_base = None  # round 1 runs zero knobs first; knob runs size their counts by its predictions
    load_start, detours = load_average(), host_detours()
    for r, order in enumerate(interleaved(rounds, names)):
        for name in order:
            if name == "zero":
                runs["zero"].append(measure(base_specs, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi))
                first_base = first_base or runs["zero"][0]
                continue
            _, knob, size, flags, increments = next(s for s in settings if s[0] == name)
            base = base_from(first_base, size, compute_ns)
            specs = [(p, size, count_for(p, model.PREDICT[p](base, increments), scale)) for p in PATTERNS]
            runs[name].append(measure(specs, knobs=flags, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi))
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    zero = {key: statistics.median(run[key] for run in runs["zero"]) for key in runs["zero"][0]}
    rows = []
    for name, knob, size, flags, increments in settings:
        base = base_from(zero, size, compute_ns, g_machine)
        for p in PATTERNS:
            increases = [run[(p, size)] - z[(p, size)] for run, z in zip(runs[name], runs["zero"])]
            measured = statistics.median(increases)
            predicted = model.predicted_increase(p, base, increments)
            verdict, tol = model.verdict(knob, predicted, measured, size)
            spread = model.baseline_spread([z[(p, size)] for z in runs["zero"]])
            rows.append({"setting": name, "knob": knob, "bytes": size, "pattern": p, "base_ns": zero[(p, size)],
                         "predicted_increase_ns": predicted, "measured_increase_ns": measured,
                         "error_ns": measured - predicted, "tolerance_ns": tol, "verdict": verdict,
                         "zero_spread_ns": spread, "unsteady": model.unsteady(spread, tol),
                         "increases": increases})
    gaps = {size: model.machine_gap(base_from(zero, size, compute_ns, g_machine))
            for size in sorted({s[2] for s in settings})}
    return {"np": NP, "mpi": mpi, "provider": provider or DEFAULT_PROVIDER[mpi], "rounds": rounds, "reps": reps,
            "compute_ns": compute_ns,
            "window": model.WINDOW, "ack_bytes": model.ACK_BYTES, "g_machine_ns": gaps,
            "g_machine_from": "given" if g_machine is not None else "plain window",
            "load_average": [load_start, load_average()], "detours": detours, "rows": rows}


KNOB_TERMS = (
    ("base", "the pattern's figure at zero knobs (ns per half round trip / message / iteration), same run"),
    ("predicted", "LogGP's increase for this pattern: pingpong 2o, L, (k-1)G a half round trip or g_total/2 if "
                  "that is longer; exchange the same one-way sum or g_total per iteration; window (W+3)/W o, 2L/W, "
                  "(k-1)G per message or g_total; compute the same, with g below the computation hidden"),
    ("g_total", "g_machine + g + (k-1)G: LogP's minimum spacing of injections at a process; g_machine from the "
                "plain window (W x ns/msg = (W-1) g_machine + one-way + ack) unless --g-machine-ns gives it"),
    ("measured", "median over rounds of (run with the knob - zero-knob run of the same round)"),
    ("error", "measured - predicted"),
    ("tolerance", "o, L: max(2 %, 100 ns) of the prediction; g, G (k >= 4 KiB): 2 %; a prediction under 100 ns "
                  "(a pattern the knob should not move): 100 ns"),
    ("spread", "max - min of this line's zero-knob runs over the rounds"),
    ("verdict", "met / missed against the tolerance; * the spread is wider than the tolerance: the baseline "
                "itself moved more between rounds than the line may err, so on this machine it cannot be judged"),
)


def print_knobs(result):
    print(f"knob accuracy: np={result['np']}, {result.get('mpi', 'mpich')}, libfabric provider {result['provider']}; "
          f"{result['rounds']} rounds "
          f"interleaved with a zero-knob run each; medians of {result['reps']} repetitions per run; window "
          f"W={result['window']}, ack {result['ack_bytes']} B; compute {result['compute_ns']:g} ns before each send")
    print(f"load average (1 min) {result['load_average'][0]:.1f} at the start, {result['load_average'][1]:.1f} at the "
          "end: figures measured on a loaded machine are not results")
    print(detours_text(result.get("detours")))
    gaps = ", ".join(f"{size} B {gap:.0f} ns" for size, gap in sorted(result["g_machine_ns"].items()))
    print(f"g_machine ({result['g_machine_from']}): {gaps}")
    print(f"  {'setting':16s} {'bytes':>6s} {'pattern':9s} {'base':>9s} {'predicted':>10s} {'measured':>10s} "
          f"{'error':>8s} {'tolerance':>9s} {'spread':>8s}  verdict")
    for row in result["rows"]:
        tol = f"{row['tolerance_ns']:9.0f}" if row["tolerance_ns"] is not None else f"{'-':>9s}"
        spread = row.get("zero_spread_ns")
        spread = f"{spread:8.0f}" if spread is not None else f"{'-':>8s}"
        print(f"  {row['setting']:16s} {row['bytes']:6d} {row['pattern']:9s} {row['base_ns']:9.1f} "
              f"{row['predicted_increase_ns']:+10.1f} {row['measured_increase_ns']:+10.1f} {row['error_ns']:+8.1f} "
              f"{tol} {spread}  {row['verdict']}{'*' if row.get('unsteady') else ''}")
    judged = [row for row in result["rows"] if row["verdict"] != "no goal"]
    met = sum(row["verdict"] == "met" for row in judged)
    unsteady = sum(bool(row.get("unsteady")) for row in judged)
    print(f"{met} of {len(judged)} lines met; {unsteady} had a baseline that moved more than their tolerance (*)")
    print("terms (ns):")
    for term, text in KNOB_TERMS:
        print(f"  {term:10s} {text}")


# ---- command line ----------------------------------------------------------------------------

def number_list(kind, low):
    def parse(text):
        try:
            values = [kind(item) for item in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of numbers") from None
        bad = [v for v in values if not v >= low]
        if bad:
            raise argparse.ArgumentTypeError(f"'{text}': {bad[0]} is below {low}")
        return values
    return parse


positive_float = number_in(float, 0, 1000, low_open=True)
nonnegative_float = number_in(float, 0, 1e9)


def time_list(text):
    """An argparse type: comma-separated times with units ("1us,10us"), through the one
    knob parser, as us; each at least 1ns."""
    values = []
    for item in text.split(","):
        try:
            ns = knob_values.parse({"L": item.strip()})["L"]
        except knob_values.KnobError as err:
            raise argparse.ArgumentTypeError(str(err).removeprefix("--L: ")) from None
        if ns < 1:
            raise argparse.ArgumentTypeError(f"'{item}': values must be at least 1ns")
        values.append(ns / 1000.0)
    return values


def knob_list(text):
    knobs = text.split(",")
    bad = [k for k in knobs if k not in ("o", "g", "G", "L")]
    if bad or not text:
        raise argparse.ArgumentTypeError(f"'{text}': knobs are o, g, G, L (comma-separated)")
    return knobs


class BenchCommand(Command):
    name = "bench"
    description = __doc__
    example = "loggp bench transparency --scale 0.2"
    formatter_class = argparse.RawDescriptionHelpFormatter
    errors = ((runmod.RunError, 1), (MissingProgram, 1), (RuntimeError, 1), (subprocess.TimeoutExpired, 1))

    def configure(self, p):
        sub = p.add_subparsers(dest="what", required=True)
        t = sub.add_parser("transparency", help="cost of libloggp.so at zero knobs and armed, per pattern",
                           example="loggp bench transparency --scale 0.2")
        t.add_argument("--rounds", type=positive_int, default=7, help="interleaved rounds (default 7)")
        t.add_argument("--armed", choices=("each", "all", "both"), default="both",
                       help="armed modes: each knob alone, all together, or both (default)")
        k = sub.add_parser("knobs", help="set each knob, read it back with four patterns against LogGP's prediction",
                           example="loggp bench knobs --knobs o,L --values 1us,10us")
        k.add_argument("--knobs", type=knob_list, default=["o", "g", "L", "G"],
                       help="knobs to measure (default o,g,L,G)")
        values = k.add_mutually_exclusive_group()
        values.add_argument("--values", type=time_list, dest="values_us", default=[1.0, 10.0, 100.0],
                            metavar="T1,T2,...",
                            help="times to set, with units as for `loggp run` (default 1us,10us,100us); "
                                 "for G the (k-1)G of one message")
        values.add_argument("--values-us", type=number_list(float, 0.001), dest="values_us", metavar="V1,V2,...",
                            help="the old spelling of --values: bare numbers in us (default: as --values)")
        k.add_argument("--G-sizes", type=number_list(int, 2), default=[4096, 65536], dest="g_sizes",
                       help="message sizes for G, in bytes (default 4096,65536)")
        k.add_argument("--compute-ns", type=positive_int, default=5000,
                       help="computation before each send of the compute pattern (default 5000)")
        k.add_argument("--g-machine-ns", type=nonnegative_float, metavar="NS",
                       help="the machine's own gap in g_total = g_machine + g (default: from the plain window, "
                            "LogP's saturation measure; 0 takes g_total = g)")
        k.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds (default 5)")
        k.add_argument("--L-jitter", dest="L_jitter", metavar="DIST:S",
                       help="instead: check L's distribution (mean, sd, percentiles of round trips) for this "
                            "jitter, e.g. normal:2us (docs/jitter.md; default: none)")
        k.add_argument("--jitter-L", dest="jitter_L", default="10us", metavar="T",
                       help="the L the jitter is drawn around (default 10us)")
        k.add_argument("--seed", type=int, default=1, help="seed of the draws (default 1)")
        k.add_argument("--samples", type=positive_int, default=3000, help="round trips per run (default 3000)")
        for s in (t, k):
            s.add_argument("--reps", type=positive_int, default=5, help="repetitions per run (default 5)")
            s.add_argument("--scale", type=positive_float, default=1.0,
                           help="multiplies every message count (default 1; small values for a quick check)")
            s.add_argument("--provider", choices=runmod.PROVIDERS,
                           help="libfabric provider (default shm; tcp with --mpi openmpi)")
            s.add_argument("--mpi", choices=sorted(PROGRAMS), default="mpich",
                           help="the MPI the patterns run on: the venv's MPICH (default), or Open MPI through its "
                                "ofi MTL with libloggp-ompi.so (loggp-patterns-ompi, built where Open MPI's "
                                "headers are)")
            s.add_argument("--json", metavar="FILE", help="also write the figures as JSON (default: none)")

    def check(self, args):
        if getattr(args, "L_jitter", None):
            try:
                jitter_check.split_jitter(args.L_jitter)
            except ValueError as err:
                raise UsageError(f"--L-jitter {err}") from None
        if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
            raise UsageError(f"--json {args.json}: no such directory")
        if args.what == "knobs":
            if max(args.g_sizes) > 1 << 20:
                raise UsageError(f"--G-sizes {max(args.g_sizes)}: loggp-patterns takes messages up to {1 << 20} bytes")
            if max(args.values_us) > 1e6:
                raise UsageError(f"--values {max(args.values_us):g}us: expected values up to 1s")

    def run(self, args):
        if args.what == "transparency":
            result = transparency(args.rounds, args.provider, args.reps, args.scale, args.armed, args.mpi)
            print_transparency(result)
        elif args.L_jitter:
            result = jitter_check.check(args.jitter_L, args.L_jitter, args.seed, args.samples, rounds=args.rounds)
            jitter_check.print_check(result)
        else:
            result = knob_accuracy(args.knobs, args.values_us, args.g_sizes, args.rounds, args.provider, args.reps,
                                   args.scale, args.compute_ns, args.g_machine_ns, args.mpi)
            print_knobs(result)
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(result, f, indent=1, default=str)
            os.replace(tmp, args.json)
        return 0
