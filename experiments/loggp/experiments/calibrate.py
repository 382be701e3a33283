"""`loggp calibrate`: proves each knob does what it says, to a stated precision.

First the machine's noise: one probe run measures zero knobs against zero knobs. Then, for
every knob, probe runs under `loggp run` measure its sweep side by side: the probe switches
libloggp's knobs between sets in interleaved rounds, and each round's reading of a setting
is its difference to the ARMED baseline of the same round (every knob at its smallest step),
so the machine's drifts fall on both sides and the armed layer's own cost per message
cancels; that cost itself is read as armed minus zero knobs. Runs repeat until every
reading's 95 % interval (order statistics of the per-round differences) is settled or the
time budget is spent, and each reading gets a verdict: met (its interval inside the goal),
missed (outside it) or unresolved (neither). Orchestration (`calibrate`, here) and judging
(`judge`) are separate so that they can be tested on synthetic probe results.

This module runs the command; what it measures is in calibration_plan, what it reads from
the probe in calibration_readings, how it judges in calibration_verdict, what it writes in
calibration_output.
"""
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from loggp.experiments import fit as fitmod
from loggp.experiments import precision as pr
from loggp.experiments import probe as probemod
from loggp.experiments import target_calibration
# Besides what this module uses, the names importers and tests read through the command's module.
from loggp.experiments.calibration_output import (advice, closing_sentence, panel_contents,  # noqa: F401
                                                   plot_calibration, probe_rows, report_text, rows_to_csv,
                                                   verdicts_text, write_outputs)
from loggp.experiments.calibration_plan import (ARMED, BULK_MIN_BYTES, CAL_SIZES, CROSSTALK,  # noqa: F401
                                                DEFAULT_SWEEPS, KNOBS, MAX_SWEEP_VALUES, PARAMS, PER_BYTE,
                                                PRIMARY, QUANTITIES, QUICK_SWEEPS, UNITS, ZERO, CalibrationError,
                                                armed_settings, armed_step, sweep_points, sweep_sets)
from loggp.experiments.calibration_readings import (Collected, increases, median_run,  # noqa: F401
                                                    noise_readings, per_size, point_parameters, run_readings,
                                                    spacing_residual, split_rounds)
from loggp.experiments.calibration_verdict import (PLACES, expectation_curve, expected_increase,  # noqa: F401
                                                   judge, knob_slope, machine_gap, spread_summary, tolerance,
                                                   worst)
import loggp.knobs as knob_values
from loggp.knobs import progress
from loggp.shim import machine_load
from loggp.shim.patterns_run import detours_text, host_detours
from loggp.knobs import grammar
from loggp.knobs.command import EXIT_FAILED, EXIT_MISSED, Command, CommandError, Parser
from loggp.knobs.programs import MissingProgram

# The exit status `loggp main` shares: the run completed, but a reading missed its goal.
MISSED_GOAL = EXIT_MISSED


# ------------------------------------------------------------------ orchestration

def calibrate(sweeps, runner, probe_args, baseline_args=None, goal=pr.KNOB_PRECISION, budget_s=600.0,
              clock=time.monotonic, log=print):
    """Measures the machine's noise (zero knobs against zero knobs), then each knob's sweep
    against the armed baseline in interleaved rounds, run after run, until every reading is
    settled (met or missed, or its interval as narrow as its tolerance) or the budget
    (seconds of `clock`) is spent; every knob runs once, and no repeat starts after that. runner(knob_sets, probe_args)
    -> one probe result per set, measured side by side in one run. Returns (summary, rows,
    label_runs), label_runs listing every raw probe result."""
    start = clock()
    collected = Collected(sweeps)
    label_runs = []
    log("machine noise: zero knobs against zero knobs, side by side in one run")
    noise = runner([dict(ZERO), dict(ZERO)], probe_args)
    collected.add_noise(noise)
    log(noise_line(collected.noise))
    label_runs += [("noise-zero", 0.0, noise[0]), ("noise-zero", 0.0, noise[1])]
    baseline = None
    if baseline_args is not None:
        log("baseline run over the full size range (all knobs 0), for T0 + m/B")
        baseline = runner([dict(ZERO)], baseline_args)[0]
        label_runs.append(("baseline", 0.0, baseline))
    pending, out_of_budget, first_pass = list(sweeps), False, True
    while pending and not out_of_budget:
        for knob in pending:
            # every knob runs once; the budget governs the repeats
            if not first_pass and clock() - start >= budget_s:
                out_of_budget = True
                break
            values = sweep_points(sweeps[knob])
            log(f"  {knob}: armed, zero, {', '.join(f'{v:g}' for v in values)} {UNITS[knob]}, side by side "
                f"(run {collected.runs[knob] + 1})")
            results = runner(sweep_sets(knob, sweeps[knob]), probe_args)
            collected.add_run(knob, results)
            label_runs += [(f"{knob}-armed", 0.0, results[0]), (f"{knob}-zero", 0.0, results[1])]
            label_runs += [(knob, v, r) for v, r in zip(values, results[2:])]
        first_pass = False
        _, _, pending = judge(collected, goal, _bulk_bytes(probe_args))
        out_of_budget = out_of_budget or (bool(pending) and clock() - start >= budget_s)
    summary, rows, unsettled = judge(collected, goal, _bulk_bytes(probe_args), budget_ran_out=out_of_budget)
    summary["budget_s"] = budget_s
    summary["unsettled"] = unsettled
    if baseline is not None:
        bm, bt = fitmod.series(baseline)
        summary["baseline"] = {"regimes": [r.summary() for r in fitmod.segment_fit(bm, bt)]}
    summary["method"] = ("side by side: each knob's sweep in one probe run, its knob sets interleaved in rounds; "
                         "each round's reading is the setting minus the armed baseline of the same round; runs "
                         "repeat until every reading's 95 % interval is settled or the budget is spent")
    return summary, rows, label_runs


def noise_line(noise):
    """The zero-knob run-to-run differences, one line."""
    parts = []
    for p in ("o_s", "o_r", "g", "L", "G"):
        if noise[p]:
            typical = float(np.median(np.abs(noise[p])))
            parts.append(f"{p} {typical:.3g} ns/B" if p in PER_BYTE else f"{p} {1000 * typical:.0f} ns")
    return ("machine noise: two zero-knob sets of one round differ by a median of " + ", ".join(parts)
            + f" ({len(noise['L'])} rounds)")


def _bulk_bytes(probe_args):
    args = list(probe_args)
    if "--sizes" in args:
        return max(int(s) for s in args[args.index("--sizes") + 1].split(","))
    return max(CAL_SIZES)


# ------------------------------------------------------------------ command line

QUICK_BUDGET = "2min"
DEFAULT_BUDGET = "10min"


def parser():
    p = Parser(prog="loggp calibrate", example="loggp calibrate --quick --knobs L --sweep L=0,1us,10us",
               description="Measure this machine's noise, then sweep each knob, running loggp-probe under "
                            "`loggp run`, and compare each reading (against the armed baseline: every knob at "
                            "its smallest step) with what it should be, repeating until every reading's 95 % "
                            "interval reaches --precision or --budget is spent. Each reading is met, missed or "
                            "unresolved. Exit status (as `loggp main`'s): 0 nothing missed its goal, 3 the run "
                            "completed but a reading missed its accuracy goal (verdicts.txt says which and why), "
                            "1 a failed run, 2 bad usage.")
    p.add_argument("--quick", action="store_true",
                   help=f"short sweep: o, g, L in {{0, 1, 10}} us, G in {{0, 0.5, 2}} ns/B; budget {QUICK_BUDGET}")
    p.add_argument("--knobs", default=",".join(KNOBS), help="comma-separated subset of o,g,L,G (default all)")
    p.add_argument("--sweep", action="append", default=[], metavar="KNOB=V1,V2,...",
                   help="values of one knob with units, e.g. L=0,1us,10us or G=0,0.5ns/B, overriding the "
                        "default or --quick sweep (repeatable; default: none)")
    p.add_argument("--precision", default=pr.KNOB_PRECISION.text().removeprefix("max(").removesuffix(")")
                   .replace(" ", ""), metavar="P",
                   help="how close each reading must be to its expectation, and how narrow its 95 %% interval "
                        "must get: a percentage of the set value, a time, or both (the larger applies), e.g. "
                        "1%%, 20ns or 1%%,20ns (default 1%%,20ns)")
    p.add_argument("--budget", metavar="T",
                   help=f"time to repeat runs in, with its unit (s, min, h), e.g. 90s or 5min; every knob runs "
                        f"once whatever the budget, and readings not settled by its end are unresolved (default "
                        f"{DEFAULT_BUDGET}; {QUICK_BUDGET} with --quick)")
    p.add_argument("--out", default="results/calibrate", metavar="DIR", help="results folder")
    p.add_argument("--sizes", default=",".join(grammar.format_size(s) for s in CAL_SIZES), metavar="SIZES",
                   help="probe sizes, e.g. 8,64K; at least two >= 8K for G")
    p.add_argument("--time-limit", type=grammar.duration(0.0, 3600.0, low_open=True), default="1.5s",
                   metavar="T", help="probe time budget per knob set and run, e.g. 1.5s")
    p.add_argument("--rounds", type=int, default=8,
                   help="interleaved rounds over a sweep's knob sets within one run; each round is one paired "
                        "reading (default 8)")
    p.add_argument("--no-baseline", action="store_true", help="skip the full-range baseline run for T0 + m/B")
    p.add_argument("--engine", choices=("auto", "libfabric", "pmpi"), help="passed to `loggp run` (default: its own, auto)")
    p.add_argument("--target", metavar="NAME|FILE",
                   help="instead of the sweeps: emulate a target network (`loggp targets`) and show target vs this "
                        "host vs measured under emulation, met / missed / unresolved per parameter (docs/targets.md; "
                        "default: none)")
    p.add_argument("--host-signature", metavar="FILE",
                   help="with --target: this host's own `loggp probe --json` file (default: measured at once)")
    p.add_argument("--clip", action="store_true",
                   help="with --target: run a parameter the target has faster than this host at the host's value")
    return p


def sweep_value(knob, text, item):
    """One --sweep value in the sweep's own unit (us; ns/B for G), read by the one knob
    parser: a unit is required ("10us", "0.5ns/B"), only 0 goes without."""
    text = text.strip()
    try:
        ns = knob_values.parse({knob: text})[knob]
    except knob_values.KnobError as err:
        raise CalibrationError(f"--sweep '{item}': {err}") from None
    return ns if knob in PER_BYTE else ns / 1000.0


def parse_sweeps(args):
    knobs = [k.strip() for k in args.knobs.split(",") if k.strip()]
    for k in knobs:
        if k not in KNOBS:
            raise CalibrationError(f"--knobs: unknown knob '{k}' (expected some of {','.join(KNOBS)})")
    if not knobs:
        raise CalibrationError("--knobs: no knob given")
    base = QUICK_SWEEPS if args.quick else DEFAULT_SWEEPS
    sweeps = {k: list(base[k]) for k in knobs}
    for item in args.sweep:
        knob, sep, values = item.partition("=")
        if not sep or knob not in KNOBS:
            raise CalibrationError(f"--sweep '{item}': expected KNOB=V1,V2,... with KNOB one of {','.join(KNOBS)}")
        if knob not in sweeps:
            raise CalibrationError(f"--sweep '{item}': knob '{knob}' is not in --knobs {args.knobs}")
        vals = [sweep_value(knob, v, item) for v in values.split(",")]
        if not vals or any(not math.isfinite(v) or v < 0 for v in vals):
            raise CalibrationError(f"--sweep '{item}': values must be finite and >= 0")
        if len(set(vals)) < 2:
            raise CalibrationError(f"--sweep '{item}': need at least two distinct values for a slope")
        if len(vals) > MAX_SWEEP_VALUES or len(sweep_points(vals)) > MAX_SWEEP_VALUES - 1:
            raise CalibrationError(f"--sweep '{item}': at most {MAX_SWEEP_VALUES} values, {MAX_SWEEP_VALUES - 1} "
                                   f"of them nonzero (one probe run measures them all, beside the armed and the "
                                   f"zero-knob sets)")
        sweeps[knob] = vals
    return sweeps


def parse_sizes(text):
    try:
        sizes = grammar.parse_sizes(text)
    except grammar.GrammarError as err:
        raise CalibrationError(f"--sizes {err}") from None
    if any(s < 1 for s in sizes) or len(set(sizes)) != len(sizes):
        raise CalibrationError(f"--sizes '{text}': sizes must be distinct and >= 1")
    if sum(s >= BULK_MIN_BYTES for s in sizes) < 2:
        raise CalibrationError(f"--sizes '{text}': need at least two sizes >= {BULK_MIN_BYTES} to measure G")
    return sorted(sizes)


def default_runner(run_args, rounds=8, time_limit=1.5):
    """Several knob sets: one probe run switching between them; one set: an ordinary run.
    A run may take several times its measurement budget (minimum sample counts, waits
    for long gaps and latencies) before it counts as hung."""
    def runner(knob_sets, probe_args):
        timeout = 180 + 5 * time_limit * len(knob_sets)
        if len(knob_sets) == 1:
            return [probemod.run_probe(probe_args, knob_sets[0], run_args=run_args, timeout=timeout)]
        return probemod.run_probe_sets(probe_args, knob_sets, run_args=run_args, rounds=rounds, timeout=timeout)
    return runner


class CalibrateCommand(Command):
    name = "calibrate"
    # A failed run exits 1 (a bad argument, found before any run, exits 2).
    errors = tuple((kind, EXIT_FAILED) for kind in (CalibrationError, probemod.ProbeError, fitmod.FitError,
                                                    MissingProgram))

    def __init__(self, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
        # the apparatus, the clock and the machine's load and detours, replaceable in tests
        self.runner, self.clock, self.load_watch, self.detours = runner, clock, load_watch, detours

    def parser(self):
        return parser()

    def check(self, args):
        if args.target is None and (args.host_signature or args.clip):
            raise CalibrationError("--host-signature and --clip go with --target")
        if args.target is not None:
            sweeping = [flag for flag, given in (("--quick", args.quick), ("--sweep", args.sweep),
                                                 ("--knobs", args.knobs != ",".join(KNOBS)),
                                                 ("--no-baseline", args.no_baseline), ("--budget", args.budget),
                                                 ("--precision", args.precision != parser().get_default("precision")))
                        if given]
            if sweeping:
                raise CalibrationError(f"--target checks a target network instead of the sweeps: drop {sweeping[0]}")
        args.sweeps = parse_sweeps(args)
        args.size_list = parse_sizes(args.sizes)
        if not 1 <= args.rounds <= 100:
            raise CalibrationError(f"--rounds {args.rounds}: must be in 1..100")
        try:
            args.goal = pr.parse_precision(args.precision)
            args.budget_s = pr.parse_budget(args.budget or (QUICK_BUDGET if args.quick else DEFAULT_BUDGET))
        except ValueError as err:
            raise CalibrationError(f"--{err}") from None
        out_dir = Path(args.out)
        if out_dir.exists() and not out_dir.is_dir():
            raise CalibrationError(f"--out '{out_dir}' exists and is not a directory")

    def run(self, args):
        if args.target is not None:
            runner = self.runner or default_runner(["--engine", args.engine] if args.engine else [], args.rounds,
                                                   args.time_limit)
            return target_calibration.execute(args, runner)
        return execute(args, args.sweeps, args.size_list, Path(args.out), self.runner, self.clock, self.load_watch,
                       self.detours)


def main(argv=None, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
    return CalibrateCommand(runner, clock, load_watch, detours).main(argv)


def execute(args, sweeps, sizes, out_dir, runner=None, clock=time.monotonic, load_watch=None, detours=host_detours):
    run_args = ["--engine", args.engine] if args.engine else []
    runner = runner or default_runner(run_args, args.rounds, args.time_limit)
    # Each round's medians need not be tight: the interval over rounds decides.
    probe_args = ["--sizes", ",".join(map(str, sizes)), "--time-limit", f"{args.time_limit:g}",
                  "--rel-ci", "0.005", "--abs-ci-ns", "10"]
    baseline_args = None if args.no_baseline else ["--time-limit", "3"]
    watch = (load_watch or machine_load.LoadWatch()).start()
    host = detours()
    print(detours_text(host), flush=True)
    started = clock()
    # on a terminal one live line: a step per probe run (the noise run, the baseline, a run per
    # knob; repeats add steps)
    live = progress.LiveLine(1 + (baseline_args is not None) + len(sweeps))
    try:
        summary, rows, label_runs = calibrate(sweeps, progress.counting(runner, live), probe_args, baseline_args,
                                              args.goal, args.budget_s, clock=clock, log=progress.log_to(live))
    finally:
        live.close()
    summary["elapsed_s"] = round(clock() - started, 1)
    summary["probe_args"] = probe_args
    summary["rounds_per_run"] = args.rounds
    watch.end()
    summary["load"] = watch.as_dict()
    summary["load"]["line"] = watch.line()
    summary["detours"] = host
    summary["sentence"] = closing_sentence(summary)
    try:
        write_outputs(out_dir, summary, rows, label_runs)
    except OSError as err:
        raise CommandError(f"cannot write to '{out_dir}': {err}") from None
    print(report_text(summary))
    print(f"wrote {os.path.abspath(out_dir)}/verdicts.txt, calibration.json, calibration.csv, probe_points.csv, "
          f"calibration.png/.svg, probes/ ({summary['elapsed_s']} s)")
    return pr.exit_status([summary["verdict"]])


if __name__ == "__main__":
    sys.exit(main())
