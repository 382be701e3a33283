"""`loggp bench`: figures about the apparatus itself, measured side by side
with loggp-patterns (np=2), rounds interleaved, medians.

  transparency  the windowed Isend/Irecv stream (8 B, 1 KiB), the ping-pong's
                half round trip (8 B) and the bidirectional exchange (8 B):
                ns per message for plain MPICH, libloggp.so at zero knobs and
                armed (each knob alone at its smallest step, and all four
                together), against its goals: at zero knobs at least 98 % of
                plain MPICH's message rate on the window and at most 1 % added
                to the ping-pong; each knob armed alone at least 85 % of the
                rate on the window (docs/benchmarks.md)
  knobs         each knob at 1, 10, 100 us (G as (k-1)G at 4 KiB and 64 KiB)
                with each of the four patterns: the measured increase over
                the armed baseline (every knob at its smallest step) beside
                what LogGP predicts for that pattern, after the armed layer's
                own cost per pattern (armed minus zero knobs, same run)

Both repeat rounds until every goal's 95 % interval is settled (--precision)
or --budget is spent, and give each line a verdict: met (the interval within
the goal), missed (wholly beyond it), unresolved (neither). Exit status: 3 when
a line is missed, 0 otherwise (unresolved is not a failure), 1 a failed run.
"""
# This module: transparency and the command line (its docstring is the --help text);
# bench_knobs.py measures the knobs, patterns_run.py runs the patterns.
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import loggp.knobs as knob_values
from loggp.knobs import grammar
from loggp.knobs.command import EXIT_FAILED, Command, UsageError, number_in, positive_int
from loggp.knobs.grammar import Deprecated
from loggp.knobs.files import write_text_atomic
from loggp.knobs.programs import MissingProgram
from loggp.shim import jitter_check

from . import machine_load
from . import pattern_model as model
from . import run as runmod
from .bench_knobs import ALL_ARMED, ARMED_FLAGS, PAIRINGS, knob_accuracy, print_knobs
from .patterns_run import (DEFAULT_PROVIDER, LATE_WAIT_NS, NP, PROGRAMS, detours_text,  # noqa: F401
                           host_detours, load_average, measure, print_conditions)

# ---- transparency ----------------------------------------------------------------------------

# Each knob alone at its smallest step (o, g, L: 1 ns; G: 0.001 ns/B) and all four together:
# the delay paths run while the delays add ~nothing, so what shows is the layer's own cost.
ARMED = {f"armed {knob}": flags for knob, flags in ARMED_FLAGS.items()}
ARMED["armed all"] = ALL_ARMED
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
           f"{LATE_WAIT_NS // 1000} us idle spell, the message long arrived (Martin's o_r); medians of rounds, "
           "[low, high] beside it the median's 95 % interval over the rounds"),
    ("rate", "plain ns / mode ns: the mode's message rate as a fraction of plain MPICH's"),
    ("time", "mode ns / plain ns - 1: time added to plain MPICH's figure; [low, high] its 95 % interval over "
             "the rounds (each round's mode run against the plain run of the same round)"),
    ("verdict", "from that interval against the line's goal (`loggp bench --help`; a rate r is a time of at most "
                "1/r - 1): met, wholly within it; missed, wholly beyond it; unresolved, across it when the budget "
                "ran out or too few rounds; no goal: measured for information"),
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


def time_ceiling(goal):
    """A line's goal as the most time it may add (mode ns / plain ns - 1), or None."""
    if goal is None:
        return None
    kind, threshold = goal
    return 1.0 / threshold - 1.0 if kind == "rate" else threshold


TRANSPARENCY_WIDTH = 0.005  # how narrow a line's interval of added time must get, by default
TRANSPARENCY_PRECISION = f"{100 * TRANSPARENCY_WIDTH:g}%"


def transparency(rounds, provider, reps, scale, armed, mpi="mpich", judge_at_most=None, precision=None,
                 budget_s=None, clock=time.monotonic):
    """Each mode's figures per pattern against plain MPICH's in interleaved rounds. `rounds`
    rounds always run; with budget_s, more rounds follow (plain and the modes whose lines are
    not settled) until every line with a goal is settled or the budget is spent. A line's
    verdict comes from judge_at_most over its rounds' added times; precision.allowed(plain
    ns) is how narrow their interval must get, in ns."""
    if judge_at_most is None:
        raise ValueError("transparency needs a judge of one-sided goals (loggp.experiments.precision)")
    modes = transparency_modes(armed)
    specs = [(p, b, max(1, round(c * scale))) for p, b, c in TRANSPARENCY_SPECS]
    samples = {mode: {(p, b): [] for p, b, _ in specs} for mode in modes}
    added = {mode: {(p, b): [] for p, b, _ in specs} for mode in modes if mode != "plain"}  # per round
    load_start, detours = load_average(), host_detours()
    watch = machine_load.LoadWatch().start()
    start = clock()
    pending, done, out_of_budget = list(modes), 0, False
    while True:
        figures = {}
        for mode in pending if done % 2 == 0 else reversed(pending):
            figures[mode] = measure(specs, knobs=ARMED.get(mode, ()), preload=mode != "plain", provider=provider,
                                    reps=reps, mpi=mpi)
        for mode, values in figures.items():
            for key, value in values.items():
                samples[mode][key].append(value)
                if mode != "plain":
                    added[mode][key].append(value / figures["plain"][key] - 1.0)
        done += 1
        print(f"  round {done} done", file=sys.stderr)
        if done < rounds:
            continue
        if budget_s is None:
            break
        unsettled = [mode for mode in modes if mode != "plain"
                     and not all(judged["settled"] for judged in judge_mode(mode, specs, samples, added,
                                                                            judge_at_most, precision).values())]
        if not unsettled:
            break
        if clock() - start >= budget_s:
            out_of_budget = True
            break
        pending = ["plain"] + unsettled
    lines = []
    for mode in modes:
        judged = judge_mode(mode, specs, samples, added, judge_at_most, precision,
                            budget_ran_out=out_of_budget if budget_s is not None else None) if mode != "plain" else {}
        for p, b, _ in specs:
            plain = statistics.median(samples["plain"][(p, b)])
            ns = statistics.median(samples[mode][(p, b)])
            goal = transparency_goal(p, b, mode)
            line = judged.get((p, b))
            verdict = "" if mode == "plain" else line["verdict"] if line else "no goal"
            interval = (judge_at_most(added[mode][(p, b)], 0.0, 1.0)["interval"] if mode != "plain" else None)
            # the judge's interval of a median, whatever the values: here the ns of the rounds
            ns_interval = judge_at_most(samples[mode][(p, b)], 0.0, 1.0)["interval"]
            lines.append({"pattern": p, "bytes": b, "mode": mode, "ns": ns, "ns_interval": ns_interval,
                          "rate": plain / ns, "time": ns / plain - 1,
                          "time_interval": interval, "goal": list(goal) if goal else None,
                          "ceiling": time_ceiling(goal), "verdict": verdict,
                          "reason": line["reason"] if line else "", "samples": samples[mode][(p, b)]})
    order = {(p, b): i for i, (p, b, _) in enumerate(specs)}
    lines.sort(key=lambda line: order[(line["pattern"], line["bytes"])])  # stable: modes stay in order
    return {"np": NP, "mpi": mpi, "provider": provider or DEFAULT_PROVIDER[mpi], "rounds": done, "min_rounds": rounds,
            "reps": reps, "armed": {mode: list(ARMED[mode]) for mode in modes if mode in ARMED},
            "precision": precision.text() if precision is not None else None, "budget_s": budget_s,
            "budget_ran_out": out_of_budget, "elapsed_s": round(clock() - start, 1),
            "load_average": [load_start, load_average()], "detours": detours, "lines": lines,
            "shared_cores": watch.end().line()}


def judge_mode(mode, specs, samples, added, judge_at_most, precision, budget_ran_out=None):
    """{(pattern, bytes): judge_at_most's dict} for the lines of one mode that have a goal."""
    out = {}
    for p, b, _ in specs:
        ceiling = time_ceiling(transparency_goal(p, b, mode))
        if ceiling is None:
            continue
        plain = statistics.median(samples["plain"][(p, b)])
        width = precision.allowed(plain) / plain if precision is not None else TRANSPARENCY_WIDTH
        out[(p, b)] = judge_at_most(added[mode][(p, b)], ceiling, width, "", places=4, budget_ran_out=budget_ran_out)
    return out


def goal_text(goal):
    if goal is None:
        return ""
    kind, threshold = goal
    return f"rate >= {threshold:.2f}" if kind == "rate" else f"time <= +{100 * threshold:.0f} %"


def ns_interval_text(interval):
    """A median's 95 % interval in ns, or 'no interval' (too few rounds)."""
    if interval["low"] is None or interval["high"] is None:
        return "no interval"
    return f"[{interval['low']:.1f}, {interval['high']:.1f}]"


def print_transparency(result):
    print(f"transparency: np={result['np']}, {result.get('mpi', 'mpich')}, libfabric provider {result['provider']}; "
          f"{result['rounds']} round{'s' if result['rounds'] != 1 else ''}, "
          f"modes interleaved; each run's figure the median of {result['reps']} repetitions, medians of rounds")
    print_conditions(result, f"--precision {result['precision'] or TRANSPARENCY_PRECISION} of plain's figure",
                     "every goal's")
    print(f"  {'pattern':14s} {'mode':10s} {'ns':>9s} {'ns [low, high]':>20s} {'rate':>6s} {'time':>8s} "
          f"{'[low, high]':>17s}  {'goal':15s} verdict")
    for line in result["lines"]:
        label = f"{line['pattern']} {line['bytes']} B"
        spread = ns_interval_text(line["ns_interval"])
        if line["mode"] == "plain":
            print(f"  {label:14s} {'plain':10s} {line['ns']:9.1f} {spread:>20s}")
            continue
        iv = line.get("time_interval") or {}
        bounds = (f"[{100 * iv['low']:+.1f}, {100 * iv['high']:+.1f}]%" if iv.get("low") is not None
                  else "no interval")
        print(f"  {label:14s} {line['mode']:10s} {line['ns']:9.1f} {spread:>20s} {line['rate']:6.3f} "
              f"{100 * line['time']:+7.1f}% "
              f"{bounds:>17s}  {goal_text(line['goal']):15s} {line['verdict']}")
    judged = [line for line in result["lines"] if line["verdict"] in ("met", "missed", "unresolved")]
    count = {v: sum(line["verdict"] == v for line in judged) for v in ("met", "missed", "unresolved")}
    print(f"{count['met']} of {len(judged)} goals met, {count['missed']} missed, {count['unresolved']} unresolved")
    print("terms:")
    for term, text in TERMS:
        print(f"  {term:10s} {text}")


# ---- command line ----------------------------------------------------------------------------

DEFAULT_BUDGET = "10min"

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


def verdicts(result):
    """Every verdict a transparency, knobs or jitter result gives, one per line."""
    return [line["verdict"] for line in result["lines" if "lines" in result else "rows"]]


class BenchCommand(Command):
    name = "bench"
    description = __doc__
    example = "loggp bench transparency --scale 0.2"
    formatter_class = argparse.RawDescriptionHelpFormatter
    errors = tuple((kind, EXIT_FAILED) for kind in (runmod.RunError, MissingProgram, RuntimeError,
                                                    subprocess.TimeoutExpired))

    def __init__(self, judge, judge_at_most, parse_precision, parse_budget, judge_bounds, exit_status):
        # Handed down by the root from loggp.experiments.precision, above this layer:
        # judge(differences, expected, tolerance, unit, budget_ran_out=..) and judge_at_most(
        # differences, limit, tolerance, ..) -> {"verdict", "reason", "interval", "settled", ..}:
        # met, missed or unresolved from the readings' interval; parse_precision('1%,20ns') and
        # parse_budget('10min'), the parsers of calibrate's --precision and --budget;
        # judge_bounds(low, high, expected, tolerance), the verdict of an interval found
        # otherwise (the jitter check's bootstrap); exit_status(verdicts), the status every
        # command with verdicts exits with.
        self.judge, self.judge_at_most, self.exit_status = judge, judge_at_most, exit_status
        self.judge_bounds = judge_bounds
        self.parse_precision, self.parse_budget = parse_precision, parse_budget

    def configure(self, p):
        sub = p.add_subparsers(dest="what", required=True)
        t = sub.add_parser("transparency", help="cost of libloggp.so at zero knobs and armed, per pattern",
                           example="loggp bench transparency --scale 0.2")
        t.add_argument("--rounds", type=positive_int, default=8,
                       help="interleaved rounds that always run (default 8; a 95 %% interval needs 6)")
        t.add_argument("--precision", default=TRANSPARENCY_PRECISION, metavar="P",
                       help="how narrow each goal's 95 %% interval of added time must get: a percentage of plain "
                            "MPI's figure, a time, or both (the larger applies), e.g. 0.5%% or 20ns (default "
                            f"{TRANSPARENCY_PRECISION.replace('%', '%%')})")
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
                            action=Deprecated, instead="--values",
                            help="the old spelling of --values: bare numbers in us; it will go (default: as --values)")
        k.add_argument("--G-sizes", type=grammar.sizes(2, 1 << 20), default="4K,64K", dest="g_sizes", metavar="SIZES",
                       help="message sizes for G, e.g. 4K,64K")
        k.add_argument("--compute", type=grammar.duration_ns(1e-9, 1.0), default="5us", dest="compute_ns",
                       metavar="T", help="computation before each send of the compute pattern, e.g. 5us")
        k.add_argument("--compute-ns", type=positive_int, dest="compute_ns", metavar="NS", action=Deprecated,
                       instead="--compute", help="the old spelling of --compute: bare ns; it will go (default: as "
                                                 "--compute)")
        k.add_argument("--g-machine", type=grammar.duration_ns(0.0, 1.0), dest="g_machine_ns", metavar="T",
                       help="the machine's own gap in g_total = g_machine + g, e.g. 200ns (default: from the plain "
                            "window, LogP's saturation measure; 0 takes g_total = g)")
        k.add_argument("--g-machine-ns", type=nonnegative_float, dest="g_machine_ns", metavar="NS", action=Deprecated,
                       instead="--g-machine", help="the old spelling of --g-machine: bare ns; it will go (default: "
                                                   "as --g-machine)")
        k.add_argument("--rounds", type=positive_int, default=5,
                       help="interleaved rounds that always run (default 5); more follow for the settings not "
                            "settled, within --budget")
        k.add_argument("--precision", metavar="P",
                       help="each line's goal around LogGP's prediction, and how narrow its 95 %% interval must "
                            "get: a percentage, a time, or both (the larger applies), e.g. 1%%,20ns (default: the "
                            "model's goals, o and L max(2%%, 100ns), g and G 2%%)")
        k.add_argument("--pairing", choices=PAIRINGS, default="in-run",
                       help="what a knob's run is set against: in-run, each repetition beside one with every knob "
                            "armed in the same run (milliseconds apart; the default), or runs, the armed run of its "
                            "round (seconds apart)")
        k.add_argument("--L-jitter", dest="L_jitter", metavar="DIST:S",
                       help="instead: check L's distribution (mean, sd, percentiles of round trips) for this "
                            "jitter, e.g. normal:2us (docs/jitter.md; default: none)")
        k.add_argument("--jitter-L", dest="jitter_L", default="10us", metavar="T",
                       help="the L the jitter is drawn around (default 10us)")
        k.add_argument("--seed", type=int, default=1, help="seed of the draws (default 1)")
        k.add_argument("--samples", type=positive_int, default=3000, help="round trips per run (default 3000)")
        for s in (t, k):
            s.add_argument("--budget", metavar="T",
                           help="time to repeat rounds in, with its unit (s, min, h), e.g. 90s or 5min; --rounds "
                                "run whatever the budget, and lines not settled by its end are unresolved "
                                f"(default {DEFAULT_BUDGET})")
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
        if getattr(args, "L_jitter", None) and (args.precision or args.budget):
            raise UsageError(f"--{'precision' if args.precision else 'budget'} applies to the knob readings; "
                             "--L-jitter checks a distribution over --rounds")
        try:
            args.goal = self.parse_precision(args.precision) if args.precision else None
            args.budget_s = self.parse_budget(args.budget or DEFAULT_BUDGET)
        except ValueError as err:
            raise UsageError(f"--{err}") from None
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
            result = transparency(args.rounds, args.provider, args.reps, args.scale, args.armed, args.mpi,
                                  judge_at_most=self.judge_at_most, precision=args.goal, budget_s=args.budget_s)
            print_transparency(result)
        elif args.L_jitter:
            result = jitter_check.check(args.jitter_L, args.L_jitter, args.seed, args.samples, rounds=args.rounds,
                                        judge_bounds=self.judge_bounds)
            jitter_check.print_check(result)
        else:
            result = knob_accuracy(args.knobs, args.values_us, args.g_sizes, args.rounds, args.provider, args.reps,
                                   args.scale, args.compute_ns, args.g_machine_ns, args.mpi, args.pairing,
                                   judge=self.judge, precision=args.goal, budget_s=args.budget_s)
            print_knobs(result)
        if args.json:
            write_text_atomic(args.json, json.dumps(result, indent=1, default=str))
        return self.exit_status(verdicts(result))
