"""The `loggp` command: the registry of subcommands and the one entry point.

Each part defines its subcommands as loggp.knobs.command.Command classes; this
root imports and registers them, the parts never import the root. A module is
imported only when its command runs, so `loggp --help` stays fast.
"""
import importlib
import os
import sys

# name -> (module, Command class, one-line summary for `loggp --help`)
COMMANDS = {
    "run": ("loggp.shim.run", "RunCommand", "run an MPI application under libloggp.so with knobs"),
    "testbed": ("loggp.testbed", "TestbedCommand",
                "emulated hosts as network namespaces; link latency and rate with tc"),
    "bench": ("loggp.shim.bench", "BenchCommand", "figures about the apparatus: transparency, knob accuracy"),
    "main": ("loggp.main", "MainCommand", "the main job: quick calibration, then the default study"),
    "probe": ("loggp.experiments.probe", "ProbeCommand", "run loggp-probe and print the LogGP signature"),
    "calibrate": ("loggp.experiments.calibrate", "CalibrateCommand", "sweep each knob and check measured vs set"),
    "fit": ("loggp.experiments.fit", "FitCommand", "fit T(m) = T0 + m/B per protocol regime"),
    "study": ("loggp.harness.study", "StudyCommand", "run, resume, inspect and report knob-sweep studies"),
    "predict": ("loggp.analysis.predict", "PredictCommand",
                "predict a program's slowdown per knob setting from its trace (LogGOPS replay)"),
    "explain": ("loggp.analysis.explain_command", "ExplainCommand",
                "where a prediction and an emulation part ways, per class of MPI call, from two traces"),
    "trace": ("loggp.analysis.trace_command", "TraceCommand",
              "export a trace as a GOAL schedule (LogGOPSim) or an OTF2 archive"),
    "targets": ("loggp.experiments.target", "TargetsCommand",
                "the catalogue of target networks (published LogGP signatures) to emulate or predict"),
    "tune": ("loggp.experiments.tune", "TuneCommand", "tune packet: best PacketSize for a linked structure, "
             "measured vs LogGP"),
}


def wiring(name):
    """What the root hands a part's command: `loggp run --testbed` launches through the
    root's testbed, which the shim cannot import; `loggp study` writes analysis's report,
    which the harness below it cannot import; `loggp bench` judges with experiments'
    precision, above the shim."""
    if name == "run":
        from loggp.testbed import launch_plan
        return {"testbed_plan": launch_plan, "target_plan": target_knobs}
    if name == "study":
        return {"write_report": write_report}
    if name == "bench":
        # `bench` judges its readings with the experiments' intervals and three verdicts, and
        # reads --precision and --budget with their parsers
        from loggp.experiments import precision
        return {"judge": precision.judge_differences, "judge_at_most": precision.judge_at_most,
                "parse_precision": precision.parse_precision, "parse_budget": precision.parse_budget,
                "judge_bounds": precision.judge_bounds, "exit_status": precision.exit_status}
    return {}


def target_knobs(args):
    """`loggp run --target`'s knobs (loggp.experiments.target), imported only when asked."""
    from loggp.experiments.target import run_knobs
    return run_knobs(args)


def write_report(results_dir, calibration=None):
    """A study's report (loggp.analysis.report), imported only when one is written."""
    from loggp.analysis.report import write
    return write(results_dir, calibration)


def command(name):
    """The Command object for `loggp NAME`."""
    module, cls, _ = COMMANDS[name]
    return getattr(importlib.import_module(module), cls)(**wiring(name))


def usage(out):
    print("usage: loggp <command> [args]  |  loggp --version\n\ncommands:", file=out)
    for name, (_, _, text) in COMMANDS.items():
        print(f"  {name:10s} {text}", file=out)
    print("\n`loggp <command> --help` for a command's options.", file=out)
    print("\nexample:\n  loggp run -n 2 --L 10us -- ./app", file=out)


def dispatch(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        usage(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "--version":
        from importlib.metadata import version
        print(f"loggp {version('loggp')}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"loggp: unknown command '{name}'", file=sys.stderr)
        usage(sys.stderr)
        return 2
    return command(name).main(rest)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        code = dispatch(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`loggp --help | head -1`): nothing more to say. Point
        # stdout at /dev/null so the interpreter's final flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process ended by SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
