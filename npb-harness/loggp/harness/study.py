"""`loggp study`: run, resume, inspect and report knob-sweep studies.

  loggp study run STUDY.toml [--out DIR] [--no-report] [--precision P] [--budget T]
  loggp study status DIR
  loggp study submit STUDY.toml --nodes N --time T [--parallel K] [--dry-run]
  loggp study report DIR [--calibration FILE]
"""
import contextlib
import fcntl
import importlib.metadata
import os
import signal
import socket
import sys
import time

from loggp.experiments.calibration_file import CalibrationError, load as load_calibration
from loggp.experiments.probe import ProbeError
from loggp.experiments.signature import SignatureError
from loggp.knobs.command import EXIT_USAGE, Command, CommandError, Parser
from loggp.knobs.grammar import Deprecated

from loggp.experiments import precision as precision_rules

from . import precision_rounds, runner, steps, store, studyfile, submit, target_sweep

# npb-harness/studies/default.toml, from npb-harness/loggp/harness/study.py
DEFAULT_STUDY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "studies", "default.toml")
DEFAULT_STUDY = os.path.normpath(DEFAULT_STUDY)


class UsageError(Exception):
    pass


def add_out_option(parser, help_text):
    """--out DIR (dest `results`), and --results, its old spelling, with a note."""
    parser.add_argument("--out", dest="results", metavar="DIR", help=help_text)
    parser.add_argument("--results", dest="results", metavar="DIR", action=Deprecated, instead="--out",
                        help="the old spelling of --out; it will go (default: as --out)")


def _parser():
    p = Parser(prog="loggp study", description="Run knob-sweep studies and report on them.",
               example="loggp study run npb-harness/studies/default.toml")
    sub = p.add_subparsers(dest="action", required=True)
    r = sub.add_parser("run", help="run a study, or resume an interrupted one",
                       example="loggp study run my-study.toml --out results/study/my-study")
    r.add_argument("study", help="study file (TOML)")
    add_out_option(r, "results folder (default: the file's 'results' key, else results/study/NAME)")
    r.add_argument("--no-report", action="store_true", help="do not write the report at the end")
    r.add_argument("--precision", help="how narrow each slope's 95 %% interval must get, e.g. 5%% (within 5 %% of "
                   "itself; default: the file's 'precision', else 5%%)")
    r.add_argument("--budget", help="how long rounds past 'repetitions' may take while a slope is not yet that "
                   "precise, e.g. 90s, 10min (default: the file's 'budget', else 5min)")
    r.add_argument("--parallel", type=int, metavar="K", help="runs at once, each a Slurm job step on nodes "
                   "of its own (needs kind = \"srun\" inside an allocation; default: [launcher] parallel, else 1)")
    r.add_argument("--calibration", help="calibration.json for the report's T0/B axes "
                   "(default: RESULTS/calibration.json when present)")
    s = sub.add_parser("status", help="how far a study is, and which runs failed",
                       example="loggp study status results/my-study")
    s.add_argument("results", help="results folder")
    submit.add_arguments(sub)
    rep = sub.add_parser("report", help="write the HTML report, plots and CSV; print its path",
                         example="loggp study report results/my-study")
    rep.add_argument("results", help="results folder")
    rep.add_argument("--calibration", help="calibration.json written by `loggp calibrate` "
                     "(default: RESULTS/calibration.json when present)")
    return p


class StudyCommand(Command):
    name = "study"
    errors = tuple((kind, EXIT_USAGE) for kind in (studyfile.StudyError, store.StoreError, UsageError,
                                                   CalibrationError, steps.StepError, submit.SubmitError))
    interrupted = "interrupted; run the same command again to resume"

    def __init__(self, write_report):
        # The report is analysis's, a layer above this one: the root hands its writer in.
        self.write_report = write_report

    def parser(self):
        return _parser()

    def run(self, args):
        if args.action == "run":
            return cmd_run(args.study, self.write_report, args.results, not args.no_report, args.calibration,
                           parallel=args.parallel, precision=args.precision, budget=args.budget)[0]
        if args.action == "submit":
            return submit.submit(args, results_dir_for)
        if args.action == "status":
            return cmd_status(args.results)
        return cmd_report(args.results, self.write_report, args.calibration)


def results_dir_for(study, override):
    if override:
        return os.path.abspath(override)
    if study.results:
        return os.path.join(os.path.dirname(study.path), os.path.expanduser(study.results))
    return os.path.abspath(os.path.join("results", "study", study.name))


@contextlib.contextmanager
def _exclusive(results_dir):
    """One runner per results folder at a time."""
    fd = os.open(os.path.join(results_dir, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another `loggp study run` is working on {results_dir}") from None
        yield
    finally:
        os.close(fd)


def measure_host_signature(results_dir, stream):
    """The host signature every target run is set against, measured before the first run
    (target_sweep.py); a probe that fails stops the study here, naming why."""
    if not os.path.isfile(os.path.join(results_dir, target_sweep.HOST_SIGNATURE)):
        print("loggp study: measuring this host's signature for the targets (loggp probe, zero knobs)", file=stream)
    try:
        target_sweep.host_signature(results_dir, runner.measure_host)
    except (ProbeError, SignatureError) as err:
        raise CommandError(f"targets: no host signature: {err}") from None


def _loggp_version():
    try:
        return importlib.metadata.version("loggp")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _on_term(signum, frame):
    raise KeyboardInterrupt


def cmd_run(study_path, write_report, results_override=None, report=True, calibration=None, stream=sys.stderr,
            print_path=True, parallel=None, precision=None, budget=None):
    """Returns (exit status, report path or None). write_report(results_dir,
    calibration) writes the report and returns its path. precision, budget: the
    command line's, over the file's."""
    if parallel is not None and parallel < 1:
        raise UsageError(f"--parallel {parallel}: expected 1 or more runs at once")
    study = studyfile.load(study_path)
    for flag, value, check in (("--precision", precision, precision_rules.parse_precision),
                               ("--budget", budget, precision_rules.parse_budget)):
        if value is not None:
            try:
                check(value)
            except ValueError as e:
                raise UsageError(f"{flag}: {e}") from None
    study.precision = precision or study.precision
    study.budget = budget or study.budget
    parallel = study.parallel if parallel is None else parallel
    nodes_per_step = steps.check(study, parallel)
    if calibration is not None:
        load_calibration(calibration)   # a bad file stops us before the runs, not after
    for note in study.skipped:
        print(f"loggp study: skipping optional benchmark {note}", file=stream)
    if not (study.sweep or study.jitter or study.topology or study.targets):
        print("loggp study: warning: no knob setting to measure ([sweep], [jitter], [topology] and targets set none, "
              "or only zeros): only the baselines run, and the report has no slowdown to show", file=stream)
    results_dir = results_dir_for(study, results_override)
    try:
        os.makedirs(os.path.join(results_dir, runner.RUNS_DIR), exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create results folder {results_dir}: {e.strerror}") from None
    previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        with _exclusive(results_dir):
            if nodes_per_step is not None:
                stale = steps.cancel_own_steps(results_dir)  # left by a killed driver
                if stale:
                    print(f"loggp study: cancelled steps of an earlier driver: {' '.join(stale)}", file=stream)
            runner.clean_stale(results_dir)
            if study.targets:
                measure_host_signature(results_dir, stream)
            db = store.Store(os.path.join(results_dir, store.DB_NAME))
            try:
                facts = {"mpi_version": runner.mpi_version(study.launcher),
                         "loggp_version": _loggp_version(), "host": socket.gethostname()}
                # The plan as the file asks for it, optional benchmarks missing here included.
                full = studyfile.load(study_path, skip_missing=False) if study.skipped else study
                state = db.initialise(study, facts, full.plan_digest())
                if state != "new":
                    facts = db.facts()
                # what the report states each slope's precision against (the command line's, if given)
                db.set_facts({"precision": study.precision, "budget": study.budget})
                facts = dict(facts, precision=study.precision, budget=study.budget)
                if state == "edited":
                    print(f"loggp study: {study.path} differs from the file these results began with only in "
                          f"ways that keep the same runs (comments, layout); resuming", file=stream)
                _run_all(study, db, results_dir, facts, stream, parallel, nodes_per_step)
                runs = db.runs()
            finally:
                db.close()
    finally:
        signal.signal(signal.SIGTERM, previous)
    bad = [r for r in runs if r["status"] != "ok"]
    print(f"loggp study: {len(runs)} runs in {results_dir}, "
          f"{len(bad)} not ok" + (" (see `loggp study status`)" if bad else ""), file=stream)
    if runs and len(bad) == len(runs):
        print(f"loggp study: every run failed, so there is nothing to measure; the first said: "
              f"{bad[0]['status']}: {bad[0]['error']} (all of them: `loggp study status {results_dir}`)",
              file=stream)
    path = None
    if report:
        path = write_report(results_dir, calibration)
        if print_path:
            print(path)
    return (1 if bad else 0), path


def _runnable(study, db):
    """(the pending runs of the benchmarks available here, how many runs are left pending
    because their optional benchmark is missing on this machine)."""
    pending = db.pending()
    known = {b.name for b in study.benchmarks}
    runnable = [p for p in pending if p["benchmark"] in known]
    return runnable, len(pending) - len(runnable)


def _run_all(study, db, results_dir, facts, stream, parallel=1, nodes_per_step=None, clock=time.monotonic):
    """The planned runs, then the rounds added for precision, under one progress line."""
    pending, skipped = _runnable(study, db)
    if skipped:
        print(f"loggp study: {skipped} runs of unavailable benchmarks left pending", file=stream)
    total = db.plan_size() - skipped
    progress = runner.Progress(total, total - len(pending), db.mean_wall_by_benchmark(), stream, clock=clock)
    try:
        progress.beyond = _budget_left(study, db.runs()) if precision_rounds.needs(study, db.runs()) else None
        _run_pending(study, db, results_dir, facts, pending, progress, parallel, nodes_per_step)
        _run_to_precision(study, db, results_dir, facts, progress, parallel, nodes_per_step)
    finally:
        progress.close()


def _budget_left(study, runs):
    return max(0.0, study.budget_s() - precision_rounds.spent_s(runs, study.repetitions))


def _run_pending(study, db, results_dir, facts, pending, progress, parallel=1, nodes_per_step=None):
    if nodes_per_step is not None:
        steps.run_parallel(study, db, results_dir, facts, pending, progress, parallel, nodes_per_step)
        return
    for i, plan_row in enumerate(pending):
        bench = study.benchmark(plan_row["benchmark"])
        progress.starting(plan_row, [p["benchmark"] for p in pending[i:]], study.repetitions)
        row = runner.execute(study, bench, plan_row, results_dir, facts)
        db.record(row)
        progress.finished(row)


def _run_to_precision(study, db, results_dir, facts, progress, parallel=1, nodes_per_step=None):
    """Rounds past `repetitions`, one at a time, while a slope is wider than the study's
    precision and the next round fits the budget (precision_rounds.py); each round's
    runs join the progress line's count."""
    while True:
        runs = db.runs()
        left = _budget_left(study, runs)
        settings = precision_rounds.next_round(study, runs, left, db.mean_wall_by_benchmark())
        if not settings:
            open_slopes = precision_rounds.needs(study, runs)
            if open_slopes:
                progress.line(f"loggp study: {len(open_slopes)} benchmarks have slopes not yet within "
                              f"{study.precision} of themselves, and the budget ({study.budget}) has no room for "
                              f"another round; the report says how precise each is")
            return
        number = db.next_round()
        # above the live line, which goes on counting
        progress.line(f"loggp study: round {number + 1} added for precision {study.precision} "
                      f"({precision_rules.parse_budget(study.budget) - left:.0f} s of the {study.budget} budget "
                      f"spent): {precision_rounds.describe(settings)}")
        db.add_round(precision_rounds.plan_rows(study, number, settings))
        pending, _ = _runnable(study, db)
        progress.add(len(pending))
        # what the budget leaves for rounds after this one, at most
        progress.beyond = max(0.0, left - (progress.eta([p["benchmark"] for p in pending]) or 0.0))
        _run_pending(study, db, results_dir, facts, pending, progress, parallel, nodes_per_step)


def cmd_status(results_dir):
    results_dir = os.path.abspath(results_dir)  # every path it prints is absolute
    path = os.path.join(results_dir, store.DB_NAME)
    if not os.path.isfile(path):
        job = submit.job_line(results_dir)
        if job:  # submitted, not started yet
            print(f"study in {results_dir}: no run started yet\n{job}")
            return 0
        raise UsageError(f"{results_dir} has no {store.DB_NAME}: not a study results folder")
    db = store.Store(path)
    try:
        facts, runs, pending = db.facts(), db.runs(), db.pending()
        total = db.plan_size()
        means = db.mean_wall_by_benchmark()
        running = [(db.plan_entry(plan_id), started) for plan_id, started in runner.in_progress(results_dir)]
    finally:
        db.close()
    print(f"study {facts.get('name')} ({facts.get('study_path')})")
    print(f"  {len(runs)}/{total} runs done, {len(pending)} pending")
    for entry, started in running:
        if entry:
            print(f"  in progress: #{entry['id']} {entry['benchmark']} np={entry['np']} {entry['sweep']} "
                  f"round {entry['round'] + 1}, for {runner._duration(max(0.0, time.time() - started))}")
    counts = {}
    for r in runs:
        counts.setdefault(r["benchmark"], {}).setdefault(r["status"], 0)
        counts[r["benchmark"]][r["status"]] += 1
    for bench, c in sorted(counts.items()):
        print(f"  {bench:16s} " + ", ".join(f"{n} {s}" for s, n in sorted(c.items())))
    if pending and means:
        overall = sum(means.values()) / len(means)
        eta = sum(means.get(p["benchmark"], overall) for p in pending)
        print(f"  remaining time, estimated: {runner._duration(eta)}")
    job = submit.job_line(results_dir)
    if job:
        print(job)
    in_flight = steps.own_steps(results_dir)
    if in_flight:
        print(f"  Slurm steps in flight: {' '.join(in_flight)}")
    for (bench, np_, sweep, _), between, noise in steps.node_set_flags(runs):
        print(f"  node sets differ: {bench} np={np_} {sweep}: medians on different nodes spread "
              f"{100 * between:.1f} %, more than the study's noise ({100 * noise:.1f} %)")
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        print("runs not ok:")
        for r in bad:
            print(f"  #{r['plan_id']} {r['benchmark']} np={r['np']} {r['sweep']} "
                  f"round {r['round'] + 1}: {r['status']}: {r['error']} "
                  f"({os.path.join(results_dir, runner.evidence(r))})")
    return 0


def cmd_report(results_dir, write_report, calibration=None):
    results_dir = os.path.abspath(results_dir)
    if not os.path.isfile(os.path.join(results_dir, store.DB_NAME)):
        raise UsageError(f"{results_dir} has no {store.DB_NAME}: not a study results folder")
    if calibration is not None:
        load_calibration(calibration)
    print(write_report(results_dir, calibration))
    return 0


def run_default(out_dir, write_report, calibration=None):
    """The main job's study: runs (or resumes) default.toml into out_dir and
    returns the report's path (None, with the reason on stderr, when the study
    cannot start). calibration: a calibration.json, else
    out_dir/calibration.json when present. Runs that fail are recorded and
    shown in the report; they do not stop the study."""
    if calibration is None and os.path.isfile(os.path.join(out_dir, "calibration.json")):
        calibration = os.path.join(out_dir, "calibration.json")
    try:
        _, path = cmd_run(DEFAULT_STUDY, write_report, out_dir, True, calibration, print_path=False)
    except (studyfile.StudyError, store.StoreError, UsageError, CalibrationError) as e:
        # The caller prints its own summary; the reason goes to stderr.
        print(f"loggp study: {e}", file=sys.stderr)
        return None
    return path
