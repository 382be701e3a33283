"""Prediction against emulation: trace each program at zero knobs, predict the time
each knob setting adds (the replay `loggp predict` runs; the prediction then becomes the
median over that trace and each round's traced armed baseline), then emulate the same settings
under libloggp.so in paired, interleaved rounds (each round an armed baseline, every knob
at its smallest step, and each setting with the other knobs armed, in an order rotated
from round to round) until every added time's 95 % interval settles against the
prediction (loggp.experiments.precision) or the budget is spent. Added times are traced
init-to-finalize lengths, the same span the replay covers.

Settings are chosen per program unless given: the smallest step of a 1-2-5 series whose
predicted added time is as long as the traced run. A pair's spread is a share of the
baseline run whatever the setting, so a setting that doubles the run resolves in a few
pairs what a quarter of it needs dozens for, and the host's slower computation after each
wait is a smaller share of longer waits. A knob that adds under a quarter of the run even at
its largest step is not checked on that program (its effect is below what paired runs
resolve in minutes). Rounds go to the program with the least time spent so far, so a
long program does not starve the others and a settled one stops.

The table says, per case, the predicted and emulated added time, whether the emulated
one is resolved (its interval excludes zero), the precision it reached and
|predicted - emulated| / emulated; the summary takes the median of that over the
resolved cases against the goal (median within 5 %, no case off by more than 15 %).

Its rounds are kept in a state file after each one (--state, by default beside --out), so a
killed check goes on where it was when the same command runs again."""
import argparse
import dataclasses
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loggp.experiments import precision
from loggp.harness.runner import loggp_command
from loggp.harness.units import ARMED
from loggp.knobs import FLAGS, KNOBS, parse
from loggp.knobs.files import write_text_atomic
from loggp.knobs.programs import which
from loggp.shim import machine_load
from loggp.shim.patterns_run import detours_text, host_detours

from . import host_response, predict, trace
from .emulation_state import FAILED, StateError, check_arguments, load_state, state_path, write_state
from .emulation_table import (Case, _ms, armed_cost_line, decided_against_worst, goal_deciding, noise_lines,
                               prediction_lines, summary, table)

KERNELS = ("cg", "mg", "ft", "is", "lu", "ep")
# knob -> the steps a setting is chosen from (smallest first); o moves o_s and o_r together
STEPS = {"o": ("10us", "20us", "50us", "100us", "200us", "500us", "1ms", "2ms", "5ms"),
         "L": ("50us", "100us", "200us", "500us", "1ms", "2ms", "5ms", "10ms", "20ms"),
         "G": ("1ns/B", "2ns/B", "5ns/B", "10ns/B", "20ns/B", "50ns/B", "100ns/B")}
KNOBS_CHECKED = tuple(STEPS)
AUTO = "auto"
MOVES = {"o": ("o_s", "o_r"), "L": ("L",), "G": ("G",)}
TARGET_SHARE = 1.0      # a chosen setting's predicted added time, as a share of the traced run
CHECKABLE_SHARE = 0.25  # below this share at the largest step, a knob is not checked on a program


# A round whose runs keep failing stops its program; one failure only repeats the round.
ROUND_ATTEMPTS = 3


class CheckError(Exception):
    pass


@dataclass
class Program:
    name: str
    argv: list


def knob_values(knob, setting):
    """{knob: text} of all five for one setting: the knob at `setting`, the others armed."""
    values = dict(ARMED)
    for real in MOVES[knob]:
        values[real] = setting
    return values


def run_command(np_, program, knobs, trace_dir):
    """`loggp run` of a program with all five knobs given (none: zero knobs), traced."""
    cmd = loggp_command() + ["run", "-n", str(np_), "--quiet"]
    for k in KNOBS:
        cmd += [FLAGS[k], knobs[k] if knobs else ("0ns/B" if k == "G" else "0ns")]
    return cmd + ["--trace", str(trace_dir), "--", *program.argv]


def added_delta_ns(knob, setting):
    """What the setting adds over the armed baseline, in ns (ns/B for G), as the replay takes it."""
    real = MOVES[knob][0]
    return parse({real: setting})[real] - parse({real: ARMED[real]})[real]


def round_order(r, knobs):
    """Round r's runs: the armed baseline ('') and the settings, rotated by one each round."""
    order = [""] + list(knobs)
    shift = r % len(order)
    return order[shift:] + order[:shift]


def skipped_lines(skipped):
    """The knobs not checked, one line, or nothing."""
    if not skipped:
        return ""
    each = "; ".join(f"{s.program} {s.knob} ({_ms(s.predicted_s)} ms at {s.setting}, "
                     f"{100 * s.predicted_s / s.traced_s:.2g} % of a {s.traced_s:.2f} s run)" for s in skipped)
    return (f"\nNot checked, adding under {CHECKABLE_SHARE:.0%} of the run even at the largest step (below what "
            f"paired runs resolve): {each}.\n")


def _programs(names, commands, klass):
    out = []
    for name in names:
        if name in KERNELS:
            out.append(Program(name, [f"loggp-npb-{name}", klass]))
        elif os.path.isfile(name) and os.access(name, os.X_OK):
            out.append(Program(os.path.basename(name), [os.path.abspath(name)]))
        else:
            raise CheckError(f"'{name}' is neither one of our kernels ({', '.join(KERNELS)}) nor an executable file")
    for text in commands:
        argv = shlex.split(text)
        if not argv or not which(argv[0]) and not os.access(argv[0], os.X_OK):
            raise CheckError(f"--program '{text}': '{argv[0] if argv else ''}' is not a program found on PATH")
        out.append(Program(os.path.basename(argv[0]), argv))
    return out


def traced_s(traces):
    """The run's length as the replay takes it: the slowest rank, init to finalize (seconds)."""
    return max(float(t.finalize_ns - t.init_ns) for t in traces) * 1e-9


def computation_s(traces):
    """The ranks' mean time outside MPI calls, init to finalize (seconds)."""
    total = 0.0
    for t in traces:
        calls = t.records[t.records["kind"] == trace.CALL]
        inside = float((calls["end_ns"].astype("f8") - calls["start_ns"].astype("f8")).sum())
        total += float(t.finalize_ns - t.init_ns) - inside
    return total / len(traces) * 1e-9 if traces else 0.0


def _run_figures(folder):
    """(length, computation) of one emulated run, in seconds, from one read of its traces."""
    traces = trace.read_folder(folder)
    return traced_s(traces), computation_s(traces)


def _run(cmd, what):
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        raise CheckError(f"{what} failed (exit {proc.returncode}): {tail[0]}; command: {shlex.join(cmd)}")


def case_settled(reading, predicted_s):
    """A setting's rounds can stop: it has the pairs an interval needs and its interval is
    met against the prediction, or as narrow as the precision asks, or missed with the
    error's range wholly on one side of the goal's worst-case limit (a miss of 12 % [9, 30]
    may yet be under 15 %: it goes on), or missed with no effect resolved."""
    if len(reading.differences) < precision.MIN_SAMPLES:
        return False
    interval = reading.interval()
    verdict = precision.verdict(interval, reading.goal)
    if verdict == precision.MET or interval.half_width <= reading.goal.tolerance:
        return True
    # a miss with no effect resolved has no error to take: it is settled as missed
    return verdict == precision.MISSED and (precision.sign(interval) == 0
                                            or decided_against_worst(predicted_s, interval))


def choose_setting(steps, added_s, traced_s):
    """(the setting, its predicted added seconds) for one knob on one program: the first of
    steps whose predicted added time (added_s: step -> seconds) reaches TARGET_SHARE of the
    traced run, else the largest step if it adds at least CHECKABLE_SHARE; (None, the largest
    step's added seconds) when not even that."""
    for step in steps:
        if added_s[step] >= TARGET_SHARE * traced_s:
            return step, added_s[step]
    last = steps[-1]
    return (last if added_s[last] >= CHECKABLE_SHARE * traced_s else None), added_s[last]


ZERO = "zero"   # a run at zero knobs, beside the armed baseline, for the layer's own cost


@dataclass
class Skipped:
    """A knob not checked on a program: even its largest step adds too little to resolve."""
    program: str
    knob: str
    setting: str
    predicted_s: float
    traced_s: float


def predicted_added(programs, machine):
    """added_s(knob, text): what the replay of one traced run (replay.Programs) says a setting
    adds, in seconds; the run is replayed at the baseline once."""
    base_ns = predict.runtime(programs, machine)

    def added_s(knob, text):
        return (predict.runtime(programs, machine, **{knob: added_delta_ns(knob, text)}) - base_ns) * 1e-9
    return added_s


class ProgramCheck:
    """One program's check: traced, its settings chosen and predicted, then measured a
    round at a time (the armed baseline and each setting not yet settled). Each round's armed
    baseline run is traced too, and a setting's prediction is the median over those traces and
    the first: one traced run's imbalance between ranks moves its replay (FT's L = 5 ms: +120
    to +153 ms over eight traces)."""

    def __init__(self, program, np_, settings, machine, goal, scratch, stream=None):
        self._start(program, np_, machine, goal, scratch, stream)
        stream = self.stream
        base_dir = scratch / f"{program.name}-trace"
        _run(run_command(np_, program, None, base_dir), f"{program.name}: the traced zero-knob run")
        programs = predict.load(base_dir)
        traced_s = programs.traced_ns * 1e-9
        added_s = predicted_added(programs, machine)
        self.settings, self.predicted, self.skipped = {}, {}, []
        for knob, given in settings.items():
            if given == AUTO:
                step, added = choose_setting(STEPS[knob], {t: added_s(knob, t) for t in STEPS[knob]}, traced_s)
                if step is None:
                    self.skipped.append(Skipped(program.name, knob, STEPS[knob][-1], added, traced_s))
                    continue
            else:
                step, added = given, added_s(knob, given)
            self.settings[knob], self.predicted[knob] = step, added
        self.predictions = {k: [p] for k, p in self.predicted.items()}  # per traced run
        self.readings = {k: precision.Reading(precision.Goal.around(p, goal)) for k, p in self.predicted.items()}
        print(f"{program.name}: traced {traced_s:.2f} s; " + ", ".join(self.settings_said()), file=stream, flush=True)
        self.computation = {k: [] for k in self.predicted}
        self.rounds = 0
        self.spent_s = 0.0
        self.baseline_s = []   # the armed run's length, per round
        self.armed_cost = []   # armed minus zero knobs, in the first rounds

    def settings_said(self):
        """Each setting with its prediction, then each knob not checked with its effect."""
        said = [f"{k} = {self.settings[k]} ({_ms(p)} ms predicted)" for k, p in self.predicted.items()]
        return said + [f"{s.knob} not checked ({_ms(s.predicted_s)} ms at {s.setting})" for s in self.skipped]

    def _start(self, program, np_, machine, goal, scratch, stream):
        self.program, self.np, self.scratch, self.stream = program, np_, scratch, stream or sys.stderr
        self.machine, self.goal = machine, goal
        self.deciding = set()  # settled settings kept on because they can decide the goal

    def state(self):
        """What the check has measured so far, as JSON-ready values (resumed())."""
        return {"settings": self.settings, "predictions": self.predictions,
                "skipped": [dataclasses.asdict(s) for s in self.skipped],
                "differences": {k: r.differences for k, r in self.readings.items()},
                "computation": self.computation, "rounds": self.rounds, "spent_s": self.spent_s,
                "baseline_s": self.baseline_s, "armed_cost": self.armed_cost}

    @classmethod
    def resumed(cls, saved, program, np_, machine, goal, scratch, stream=None):
        """The check as state() left it, without tracing again; KeyError, TypeError or
        ValueError when saved is not such a state."""
        self = cls.__new__(cls)
        self._start(program, np_, machine, goal, scratch, stream)
        self.settings = {str(k): str(v) for k, v in saved["settings"].items()}
        knobs = set(self.settings)
        parts = ("predictions", "differences", "computation")
        if not knobs <= set(KNOBS_CHECKED) or any(set(saved[p]) != knobs for p in parts):
            raise ValueError("its settings and figures name different knobs")
        self.predictions = {k: [float(x) for x in saved["predictions"][k]] for k in knobs}
        if not all(self.predictions.values()):
            raise ValueError("a setting without a prediction")
        self.predicted = {k: statistics.median(v) for k, v in self.predictions.items()}
        self.readings = {k: precision.Reading(precision.Goal.around(self.predicted[k], goal),
                                              [float(x) for x in saved["differences"][k]]) for k in knobs}
        self.computation = {k: [float(x) for x in saved["computation"][k]] for k in knobs}
        if any(len(self.computation[k]) != len(self.readings[k].differences) for k in knobs):
            raise ValueError("a setting's pairs and computation changes differ in number")
        self.skipped = [Skipped(**s) for s in saved["skipped"]]
        self.rounds, self.spent_s = int(saved["rounds"]), float(saved["spent_s"])
        self.baseline_s = [float(x) for x in saved["baseline_s"]]
        self.armed_cost = [float(x) for x in saved["armed_cost"]]
        return self

    def unsettled(self):
        """The settings not settled yet, or with too few pairs."""
        return [k for k, r in self.readings.items() if not case_settled(r, self.predicted[k])]

    def active(self):
        """The settings still worth a round: not settled, or kept on to decide the goal."""
        unsettled = self.unsettled()
        return [k for k in self.readings if k in self.deciding or k in unsettled]

    def _one_round(self, r, knobs):
        lengths, computations = {}, {}
        for knob in round_order(r, knobs):
            folder = self.scratch / f"{self.program.name}-r{r}-{knob or 'armed'}"
            values = None if knob == ZERO else knob_values(knob, self.settings[knob]) if knob else dict(ARMED)
            _run(run_command(self.np, self.program, values, folder),
                 f"{self.program.name} round {r + 1} {knob or 'armed'}")
            lengths[knob], computations[knob] = _run_figures(folder)
            if knob == "":
                self._predict_from(folder)
            shutil.rmtree(folder, ignore_errors=True)
        return lengths, computations

    def _predict_from(self, folder):
        """Each setting's prediction from one more traced armed baseline run: the median over
        the traced runs becomes the prediction, and its goal moves with it."""
        added_s = predicted_added(predict.load(folder), self.machine)
        for knob, text in self.settings.items():
            self.predictions[knob].append(added_s(knob, text))
            self.predicted[knob] = statistics.median(self.predictions[knob])
            self.readings[knob].goal = precision.Goal.around(self.predicted[knob], self.goal)

    def prediction_spread(self):
        """{knob: (least, most, traced runs)} of the predictions so far."""
        return {k: (min(v), max(v), len(v)) for k, v in self.predictions.items()}

    def measure_round(self):
        """One round of the active settings; a failed run repeats the round (a round is a set of
        pairs: a failed run leaves none of it), ROUND_ATTEMPTS failures raise CheckError."""
        started = time.monotonic()
        r, knobs = self.rounds, self.active()
        with_zero = knobs + ([ZERO] if len(self.armed_cost) < precision.MIN_SAMPLES else [])
        self.rounds += 1
        try:
            for attempt in range(1, ROUND_ATTEMPTS + 1):
                try:
                    lengths, computations = self._one_round(r, with_zero)
                    break
                except CheckError as e:
                    if attempt == ROUND_ATTEMPTS:
                        raise CheckError(f"{e} ({ROUND_ATTEMPTS} attempts at this round failed)") from None
                    print(f"predict_vs_emulation: {e}; round {r + 1} run again", file=self.stream, flush=True)
        finally:
            self.spent_s += time.monotonic() - started
        self.baseline_s.append(lengths[""])
        if ZERO in lengths:
            self.armed_cost.append(lengths[""] - lengths[ZERO])
        for k in knobs:
            self.readings[k].differences.append(lengths[k] - lengths[""])
            self.computation[k].append(computations[k] - computations[""])
        print(f"{self.program.name}: round {r + 1}: " + ", ".join(
            f"{k} {_ms(lengths[k] - lengths[''])} ms" for k in knobs), file=self.stream, flush=True)

    def cases(self, budget_ran_out):
        out = []
        for k, reading in self.readings.items():
            interval = reading.interval()
            out.append(Case(self.program.name, k, self.settings[k], self.predicted[k], interval,
                            precision.verdict(interval, reading.goal),
                            budget_ran_out and not case_settled(reading, self.predicted[k]),
                            precision.median_interval(self.computation[k]) if self.computation[k] else None,
                            precision.median_interval([d - c for d, c in zip(reading.differences,
                                                                              self.computation[k])])
                            if self.computation[k] else None,
                            host_response.response(self.computation, self.predicted, k)))
        return out


def next_check(checks, max_rounds=None):
    """The program the next round goes to: of those with a setting not settled (and rounds
    left), the one with the least time spent so far; None when there is none."""
    open_ = [c for c in checks if c.active() and (max_rounds is None or c.rounds < max_rounds)]
    return min(open_, key=lambda c: c.spent_s) if open_ else None


def keep_deciding(checks):
    """Once every setting has settled by itself, the goal may still be unresolved, on the
    replay's predictions or on those with the host's response: the settings whose error's
    range holds one of its limits then go on (ProgramCheck.deciding), the others stay settled;
    while any setting is unsettled, none is kept on."""
    settled = not any(c.unsettled() for c in checks)
    cases = [case for c in checks for case in c.cases(False)] if settled else []
    judged = [cases] + ([[c.with_response() for c in cases]] if any(c.response is not None for c in cases) else [])
    deciding = set()
    for each in judged:
        if each and summary(each)[3] == precision.UNRESOLVED:
            deciding |= {(c.program, c.knob) for c in goal_deciding(each)}
    for c in checks:
        c.deciding = {k for p, k in deciding if p == c.program.name}


def run_checks(checks, budget_s, max_rounds=None, stream=None, clock=time.monotonic, after_round=None):
    """Rounds to the programs (next_check) until each is settled, and the goal is decided or
    no more pairs can decide it (keep_deciding), or the budget is spent; a program whose round
    keeps failing stops, named. after_round(checks still running) is called after each round,
    to keep what was measured. Returns ([Case], [failed program name])."""
    stream = stream or sys.stderr
    started = clock()
    failed = []
    live = list(checks)
    while clock() - started < budget_s:
        keep_deciding(live)
        check = next_check(live, max_rounds)
        if check is None:
            break
        try:
            check.measure_round()
        except CheckError as e:  # the other programs go on, and the table keeps what they gave
            print(f"predict_vs_emulation: {e}", file=stream, flush=True)
            failed.append(check.program.name)
            live.remove(check)
        if after_round:
            after_round(live)
    ran_out = clock() - started >= budget_s
    return [case for c in live for case in c.cases(ran_out)], failed


def check_out(out, option="--out"):
    """--out (or --state) names a file whose folder exists or can be made: said before the
    minutes of runs, not after them."""
    if out.is_dir():
        example = out / ("predict.md" if option == "--out" else "predict.state.json")
        raise CheckError(f"{option} {out}: a folder; name the file to write, e.g. {example}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CheckError(f"{option} {out}: its folder cannot be made ({e.strerror})") from None



def resumed_checks(saved, path, programs, np_, machine, goal, stream):
    """{program index: ProgramCheck} from a kept state (none without one), its scratch folder
    still to be given; CheckError naming the program whose entry is damaged, before any run."""
    out = {}
    for i, (program, entry) in enumerate(zip(programs, saved["checks"] if saved else [])):
        if entry is None or entry == FAILED:
            continue
        try:
            out[i] = ProgramCheck.resumed(entry, program, np_, machine, goal, None, stream)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise CheckError(f"--state {path}: damaged at {program.name} ({type(e).__name__}: {e}); delete it "
                             "or name another file") from None
    return out


def _parser():
    p = argparse.ArgumentParser(
        prog="predict_vs_emulation.py",
        description="Predicted against emulated added time, per program and knob, to a stated precision. "
                    "Exit status: 3 when a case is missed (its interval wholly outside the prediction +- the "
                    "precision), 0 otherwise (unresolved is not a failure), 1 a failed run, 2 bad usage.",
        epilog="example: python analysis/bench/predict_vs_emulation.py --out results/predict.md "
               "(our six kernels at class A, np = 2; o, L and G chosen per program)")
    p.add_argument("programs", nargs="*", help=f"our kernels ({', '.join(KERNELS)}; default: all six) or "
                   "executable files (e.g. NPB's cg.A.x)")
    p.add_argument("--program", action="append", default=[], metavar="COMMAND",
                   help="any other program, with its arguments, as one shell-quoted string (repeatable)")
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--class", dest="klass", default="A", help="our kernels' class (default A)")
    for knob, steps in STEPS.items():
        p.add_argument(f"--{knob}", default=AUTO, help=f"the {knob} setting for every program, or 'auto' (the "
                       f"default: per program, the smallest of {', '.join(steps)} that adds as much as the run), "
                       f"or 'none' to leave it out")
    p.add_argument("--machine", help="probe JSON for the replay's machine parameters (default: loggp predict's)")
    p.add_argument("--precision", default="5%",
                   help="how narrow each emulated added time's 95 %% interval must get around the prediction "
                        "(default 5%%)")
    p.add_argument("--budget", default="20min", help="time for the emulated rounds, shared evenly by the programs "
                   "(default 20min)")
    p.add_argument("--max-rounds", type=int, help="at most this many rounds per program (default: the budget's)")
    p.add_argument("--out", help="write the Markdown table here too")
    p.add_argument("--state", help="keep the rounds here after each one, and go on from them when the same "
                   "command runs again, after a kill (default: beside --out, its name with .state.json; "
                   "without either, nothing is kept)")
    return p


def main(argv=None, stream=None):
    stream = stream or sys.stderr
    args = _parser().parse_args(argv)
    try:
        if args.np < 1:
            raise CheckError(f"--np {args.np}: expected 1 or more ranks")
        if args.max_rounds is not None and args.max_rounds < 1:
            raise CheckError(f"--max-rounds {args.max_rounds}: expected 1 or more")
        try:
            goal = precision.parse_precision(args.precision)
            budget_s = precision.parse_budget(args.budget)
        except ValueError as e:
            raise CheckError(str(e)) from None
        settings = {k: getattr(args, k) for k in KNOBS_CHECKED if getattr(args, k) != "none"}
        if not settings:
            raise CheckError("every setting is 'none': nothing to compare")
        for k, v in settings.items():
            if v == AUTO:
                continue
            try:
                if added_delta_ns(k, v) <= 0:
                    raise CheckError(f"--{k} {v}: a setting must exceed the armed baseline's {ARMED[MOVES[k][0]]}")
            except ValueError as e:
                raise CheckError(f"--{k} {v}: {e}") from None
        if args.out:
            check_out(Path(args.out))
        kept_at = state_path(args.state, args.out)
        if kept_at:
            check_out(kept_at, "--state")
            if args.out and kept_at.resolve() == Path(args.out).resolve():
                raise CheckError(f"--state {args.state}: the file --out writes the table to; name another")
        programs = _programs(args.programs or ([] if args.program else list(KERNELS)), args.program, args.klass)
        machine = predict.machine_from_probe(args.machine) if args.machine else predict.DEFAULT_MACHINE
        arguments = check_arguments(programs, args.np, args.klass, settings, goal, args.machine)
        try:
            saved = load_state(kept_at, arguments)
        except StateError as e:
            raise CheckError(str(e)) from None
        resumed = resumed_checks(saved, kept_at, programs, args.np, machine, goal, stream)
    except CheckError as e:
        print(f"predict_vs_emulation: {e}", file=sys.stderr)
        return 2
    stopped_by = [signal.SIGINT]

    def stop(signum, frame):  # a kill stops the check as Ctrl-C does: the scratch folder goes, the state stays
        stopped_by[0] = signum
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return _check(args, programs, settings, machine, goal, budget_s, arguments, kept_at, saved, resumed, stream)
    except KeyboardInterrupt:
        where = (f"the rounds so far are kept in {kept_at}: run the same command again to go on" if kept_at
                 else "nothing was kept (give --out or --state to keep the rounds)")
        print(f"predict_vs_emulation: stopped by {signal.Signals(stopped_by[0]).name}; {where}", file=sys.stderr)
        return 128 + stopped_by[0]
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check(args, programs, settings, machine, goal, budget_s, arguments, kept_at, saved, resumed, stream):
    """The check itself, from main(): traced, measured in rounds (resumed from saved when
    there is one, and kept at kept_at after each round), then the table."""
    watch = machine_load.LoadWatch().start()
    host = host_detours()
    print(detours_text(host), file=stream, flush=True)
    started = time.monotonic()
    spent_before = float(saved["elapsed_s"]) if saved else 0.0
    entries = list(saved["checks"]) if saved else [None] * len(programs)
    checks, failed, by_index = [], [], {}

    def keep(live=None):
        """The state after a round: each program's figures, or that it failed."""
        if kept_at is None:
            return
        for i, check in by_index.items():
            entries[i] = FAILED if live is not None and check not in live else check.state()
        write_state(kept_at, arguments, spent_before + time.monotonic() - started, entries)
    if saved:
        print(f"predict_vs_emulation: going on from {kept_at} ({spent_before:.0f} s spent before)",
              file=stream, flush=True)
    with tempfile.TemporaryDirectory(prefix="loggp-predict-check-") as tmp:
        for i, program in enumerate(programs):
            try:
                if entries[i] == FAILED:
                    print(f"predict_vs_emulation: {program.name} failed in the earlier part of this check",
                          file=sys.stderr)
                    failed.append(program.name)
                    continue
                if i in resumed:
                    check = resumed[i]
                    check.scratch = Path(tmp)
                    print(f"{program.name}: {check.rounds} rounds kept; " + ", ".join(check.settings_said()),
                          file=stream, flush=True)
                else:
                    check = ProgramCheck(program, args.np, settings, machine, goal, Path(tmp), stream)
            except CheckError as e:  # the other programs still run
                print(f"predict_vs_emulation: {e}", file=sys.stderr)
                failed.append(program.name)
                entries[i] = FAILED
                continue
            checks.append(check)
            by_index[i] = check
            keep()
        budget_left = budget_s - spent_before - (time.monotonic() - started)
        cases, failed_rounds = run_checks(checks, budget_left, args.max_rounds, stream, after_round=keep)
        failed += failed_rounds
    skipped = [s for c in checks for s in c.skipped]
    if not cases and not skipped:
        return 1
    chosen = ", ".join(f"{k} = {v}" for k, v in settings.items() if v != AUTO)
    auto = [k for k, v in settings.items() if v == AUTO]
    if auto:
        chosen = ", ".join(filter(None, [chosen, f"{', '.join(auto)} chosen per program (the smallest step adding "
                                                 f"{TARGET_SHARE:.0%} of the run)"]))
    header = (f"np = {args.np}, class {args.klass} for our kernels; settings {chosen}, against an armed "
              f"baseline; precision {goal.text()}, budget {args.budget}; "
              f"{spent_before + time.monotonic() - started:.0f} s")
    watch.end()
    shared = watch.line()
    text = (f"{detours_text(host)}\n" + (f"{shared}\n" if shared else "") + "\n" + table(cases, header)
            + prediction_lines(checks) + noise_lines(checks) + armed_cost_line(checks)
            + skipped_lines(skipped))
    if failed:
        text += f"\nNot measured, a run failed (above): {', '.join(failed)}.\n"
    print(text, end="")
    if args.out:
        try:
            write_text_atomic(args.out, text)
        except OSError as e:  # the table is printed above: nothing measured is lost
            print(f"predict_vs_emulation: --out {args.out}: not written ({e.strerror}); the table is above",
                  file=sys.stderr)
            return 1
    return 1 if failed else precision.exit_status([c.outcome for c in cases] + [summary(cases)[3]])
