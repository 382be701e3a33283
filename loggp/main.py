"""`loggp main`: the main job on the embedded default. A quick calibration
(do the knobs add what they say on this machine?), then the default study
(how much slower do our NPB kernels run as each knob grows, and what does
each baseline's trace predict?), then the table of blocking and non-blocking
calls at a few sizes, ending with the path of the report. Interrupted, it
resumes where it stopped.

Exit status (as `loggp calibrate`'s): 0 no calibration reading missed its goal (met, or
unresolved where the machine's noise hid the answer), 3 the job ran to the end but a reading
missed its accuracy goal (calibration/verdicts.txt says which and why), 1 a failed run, 2 bad
usage. The packet-size tuning's verdict (is LogGP's best size the measured one?) is printed,
never the exit status."""
import json
import os
import sys
import time
from pathlib import Path

from loggp.experiments.calibrate import MISSED_GOAL  # shared: it ran, but a reading missed its goal
from loggp.knobs.command import EXIT_FAILED, EXIT_OK, Command, UsageError


class MainCommand(Command):
    name = "main"
    description = __doc__
    example = "loggp main --out results/main"
    interrupted = "interrupted; run the same command again to resume"

    def configure(self, p):
        p.add_argument("--out", default="results/main", metavar="DIR",
                       help="results folder (default results/main; rerun to resume)")
        p.add_argument("--skip-calibration", action="store_true", help="go straight to the study")

    def check(self, args):
        try:
            Path(args.out).resolve().mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError(f"cannot use --out {args.out}: {err}") from None

    def run(self, args):
        return main_job(Path(args.out).resolve(), args.skip_calibration)


def main_job(out, skip_calibration):
    from loggp.experiments import calibrate
    from loggp.cli import write_report
    from loggp.harness import study

    started = time.monotonic()
    calibration = out / "calibration" / "calibration.json"
    if not skip_calibration and not calibration.is_file():
        print(f"[loggp main] 1/4 quick calibration -> {calibration.parent}", file=sys.stderr, flush=True)
        rc = calibrate.main(["--quick", "--out", str(calibration.parent)])
        if rc not in (EXIT_OK, MISSED_GOAL):
            print(f"[loggp main] calibration failed (exit {rc})", file=sys.stderr)
            return rc
    print(f"[loggp main] 2/4 default study -> {out / 'study'}", file=sys.stderr, flush=True)
    report = study.run_default(str(out / "study"), write_report,
                               str(calibration) if calibration.is_file() else None)
    if not report:
        minutes = (time.monotonic() - started) / 60
        print(f"[loggp main] the study could not run (see above); {minutes:.1f} min", file=sys.stderr)
        return EXIT_FAILED
    modes_table(out / "modes")
    if packet_tuning(out, calibration) != EXIT_OK:
        return EXIT_FAILED
    minutes = (time.monotonic() - started) / 60
    print(f"[loggp main] done in {minutes:.1f} min", file=sys.stderr)
    print(f"report: {os.path.abspath(report)}")
    print(f"  with Martin's figure set (figure_set_N.png: o, g, L, G per kernel) and the T0 + n/B view "
          f"(t0_nb.png) beside it; blocking vs non-blocking: {out / 'modes' / 'modes.png'}")
    verdict = calibration_verdict(calibration)
    if verdict:
        print(f"calibration: {verdict['sentence']} ({calibration.parent / 'verdicts.txt'})")
    if verdict and verdict["missed"]:
        print(f"[loggp main] calibration: {', '.join(verdict['missed'])} missed the accuracy goal on this machine "
              f"(the reasons are in {calibration.parent / 'verdicts.txt'}); exit {MISSED_GOAL}", file=sys.stderr)
        return MISSED_GOAL
    return EXIT_OK


def modes_table(folder):
    """`loggp probe --modes all` at three sizes, once (kept in folder/ as JSON, CSV and PNG)."""
    from loggp.experiments import modes, probe
    if (folder / "modes.json").is_file():
        return
    print(f"[loggp main] 3/4 blocking and non-blocking calls -> {folder}", file=sys.stderr, flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    modes.execute(2, [], ["--modes", "all", "--sizes", "8,1K,64K", "--reps", "20", "--rounds", "2",
                          "--json", str(folder / "modes.json"), "--csv", str(folder / "modes.csv"),
                          "--plot", str(folder / "modes.png")], probe.loggp_run_command)


def calibration_verdict(calibration):
    """A finished calibration's closing sentence and the knobs with a missed reading, in sweep
    order; None when no calibration ran (--skip-calibration)."""
    try:
        summary = json.loads(Path(calibration).read_text())
    except FileNotFoundError:
        return None
    knobs = summary.get("knobs", {})
    if "verdict" not in summary:  # written before the three verdicts: its pass/fail only
        return {"sentence": "calibrated without intervals (an older calibration.json); rerun to judge it",
                "missed": [knob for knob, k in knobs.items() if not k.get("pass", True)]}
    return {"sentence": summary.get("sentence", ""),
            "missed": [knob for knob, k in knobs.items() if k.get("verdict") == "missed"]}


def packet_tuning(out, calibration):
    """The packet-size tuning, once at small size (a few seconds); skipped when
    its results exist (resume)."""
    from loggp.experiments import precision, tune
    folder = out / "tune-packet"
    if (folder / "packet.json").is_file():
        return 0
    print(f"[loggp main] 4/4 packet-size tuning (small) -> {folder}", file=sys.stderr, flush=True)
    argv = ["packet", "--records", "2048", "--max-size", "65536", "--reps", str(precision.MIN_SAMPLES),
            "--out", str(folder)]
    rc = tune.main(argv + (["--calibration", str(calibration)] if calibration.is_file() else []))
    if rc == MISSED_GOAL:  # LogGP's best size missed the measured one: a finding, printed, not a failed job
        print(f"[loggp main] packet-size tuning: a predicted best missed the measured one "
              f"({folder / 'packet.txt'}); the job goes on", file=sys.stderr)
        return EXIT_OK
    if rc != EXIT_OK:
        print(f"[loggp main] packet-size tuning failed (exit {rc})", file=sys.stderr)
    return rc
