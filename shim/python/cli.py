"""The `loggp` command: one entry point that dispatches to each part's subcommand.

Each subcommand lives in the part that owns it and exposes main(argv) -> int.
"""
import importlib
import sys

SUBCOMMANDS = {
    "run": ("loggp.run", "run an MPI application under libloggp.so with knobs"),
    "testbed": ("loggp.testbed", "emulated hosts as network namespaces; link latency and rate with tc"),
    "bench": ("loggp.bench", "figures about the apparatus: transparency, knob accuracy"),
    "main": ("loggp.mainjob", "the main job: quick calibration, then the default study"),
    "probe": ("loggp.experiments.probe", "run loggp-probe and print the LogGP signature"),
    "calibrate": ("loggp.experiments.calibrate", "sweep each knob and check measured vs set"),
    "fit": ("loggp.experiments.fit", "fit T(m) = T0 + m/B per protocol regime"),
    "study": ("loggp.harness.study", "run, resume, inspect and report knob-sweep studies"),
}


def usage(out):
    print("usage: loggp <command> [args]\n\ncommands:", file=out)
    for name, (_, text) in SUBCOMMANDS.items():
        print(f"  {name:10s} {text}", file=out)
    print("\n`loggp <command> --help` for a command's options.", file=out)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        usage(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"loggp: unknown command '{name}'", file=sys.stderr)
        usage(sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
