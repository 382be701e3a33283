"""`loggp probe`: runs loggp-probe at np=2 (through `loggp run` when knobs are given).

The functions here are the one way the rest of the experiments start the probe, so that
tests can replace `run_probe` with a synthetic apparatus.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.knobs import ENVIRONMENT, FLAGS, KNOBS, KnobError, grammar, knobs_program
from loggp.knobs.command import EXIT_USAGE, Command, UsageError
from loggp.knobs.programs import find_program
from loggp.knobs.vocabulary import flag_for_name

from . import modes

KNOB_FLAGS = {knob: FLAGS[knob] for knob in KNOBS}
# Knob variables (those `loggp run` sets) that would override the knob file a
# --knob-set run rewrites.
KNOB_ENV = tuple(sorted(ENVIRONMENT.values()))


class ProbeError(RuntimeError):
    """The probe could not be started or failed; the message says why."""


def format_knob(knob, value):
    """Knob value (us, or ns/B for G) as `loggp run` takes it."""
    return f"{value:.6g}ns/B" if knob == "G" else f"{value:.6g}us"


def loggp_run_command(np_ranks, run_args, knob_args, probe_args):
    """`loggp run` of loggp-probe."""
    return [sys.executable, "-m", "loggp.cli", "run", "-n", str(np_ranks), "--quiet", *run_args, *knob_args,
            "--", find_program("loggp-probe"), *probe_args]


def private_knob_env(directory):
    """The environment for a --knob-set run: a knob file of its own in `directory`, and
    no knob variables to override it."""
    env = {k: v for k, v in os.environ.items() if k not in KNOB_ENV}
    env["LOGGP_KNOB_FILE"] = str(Path(directory, "knobs"))
    return env


def run_for_json(cmd, out, timeout, env=None):
    """Runs a probe command that writes its JSON to `out`, and returns that JSON."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ProbeError(f"probe timed out after {timeout} s: {' '.join(cmd)}") from None
    if proc.returncode != 0 or not out.is_file():
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ProbeError(f"probe failed (exit {proc.returncode}): {' '.join(cmd)}\n  " + "\n  ".join(detail))
    return json.loads(out.read_text())


def probe_command(probe_args, knobs=None, np_ranks=2, run_args=()):
    """The command that runs loggp-probe: plain mpiexec without knobs, else `loggp run`
    with every knob given explicitly (so the user's knob file cannot leak in)."""
    if knobs is None:
        return [find_program("mpiexec"), "-n", str(np_ranks), find_program("loggp-probe"), *probe_args]
    unknown = set(knobs) - set(KNOB_FLAGS)
    if unknown:
        raise ProbeError(f"unknown knob(s) {sorted(unknown)}; expected {sorted(KNOB_FLAGS)}")
    knob_args = []
    for knob, flag in KNOB_FLAGS.items():
        knob_args += [flag, format_knob(knob, knobs.get(knob, 0.0))]
    return loggp_run_command(np_ranks, run_args, knob_args, probe_args)


def knob_set_spec(knobs):
    """A knob set as loggp-probe's --knob-set takes it: 'zero' or name=value,..."""
    unknown = set(knobs) - set(KNOB_FLAGS)
    if unknown:
        raise ProbeError(f"unknown knob(s) {sorted(unknown)}; expected {sorted(KNOB_FLAGS)}")
    items = [f"{k}={format_knob(k, v)}" for k, v in knobs.items() if v]
    return ",".join(items) if items else "zero"


def split_sets(result):
    """The per-set results of a --knob-set run, each shaped like a one-run result."""
    common = {k: v for k, v in result.items() if k not in ("knob_sets", "summary", "sizes")}
    return [{**common, "knob_set": s["spec"], "knobs": s["knobs"], "summary": s["summary"], "sizes": s["sizes"]}
            for s in result["knob_sets"]]


def run_probe_sets(probe_args, knob_sets, run_args=(), rounds=3, timeout=600):
    """Runs the probe once under `loggp run`, measuring under each knob set (dicts of
    increments, us or ns/B) in interleaved rounds, side by side; returns one result per set.
    The knob file is a private one in a temporary directory."""
    sets = []
    for knobs in knob_sets:
        sets += ["--knob-set", knob_set_spec(knobs)]
    with tempfile.TemporaryDirectory(prefix="loggp-probe-") as tmp:
        out = Path(tmp, "probe.json")
        cmd = loggp_run_command(2, run_args, [], [*probe_args, *sets, "--rounds", str(rounds), "--quiet",
                                                  "--json", str(out)])
        return split_sets(run_for_json(cmd, out, timeout, env=private_knob_env(tmp)))


def run_probe(probe_args, knobs=None, run_args=(), timeout=180):
    """Runs the probe (knobs: dict of increments, us or ns/B; None for no libloggp)
    and returns its parsed JSON result."""
    with tempfile.TemporaryDirectory(prefix="loggp-probe-") as tmp:
        out = Path(tmp, "probe.json")
        cmd = probe_command([*probe_args, "--quiet", "--json", str(out)], knobs, run_args=run_args)
        return run_for_json(cmd, out, timeout)


class ProbeCommand(Command):
    """loggp probe [--np N] [--o T --os T --or T --g T --G T/B --L T] [loggp-probe options]"""
    name = "probe"
    errors = ((ProbeError, EXIT_USAGE),)

    def parse(self, argv):
        return parse_args(argv)

    def run(self, args):
        return execute(args)


def main(argv=None):
    return ProbeCommand().main(argv)


def probe_duration(text):
    """--time-limit in the one grammar ("1.5s"), as loggp-probe takes it: seconds."""
    try:
        return f"{grammar.parse_duration(text, 0.0, 86400.0):g}"
    except grammar.GrammarError as err:
        raise UsageError(f"--time-limit {err}") from None


def probe_knob_set(text):
    """--knob-set with the knob names of every NAME=VALUE setting (`tune --setting` too):
    o, o_s, o_r, g, G, L; the flag spelling (os, or) is taken with a note."""
    if text.strip() == "zero":
        return text
    try:
        texts = grammar.parse_settings(text, "--knob-set",
                                       warn=lambda line: print(f"loggp probe: {line}", file=sys.stderr))
    except grammar.GrammarError as err:
        raise UsageError(str(err)) from None
    return ",".join(f"{name}={value}" for name, value in texts.items())


# loggp-probe options whose values `loggp probe` reads in the one grammar first.
GRAMMAR_OPTIONS = {"--time-limit": probe_duration, "--knob-set": probe_knob_set}


def parse_args(argv):
    """loggp probe's own options; the rest goes to loggp-probe, which checks it."""
    if argv[:1] in (["-h"], ["--help"]):
        print("usage: loggp probe [--np N] [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T] "
              "[loggp-probe options]\n"
              "Runs loggp-probe on N ranks; with any knob, under `loggp run` with those knobs;\n"
              "with --knob-set, under `loggp run` with a private knob file the probe rewrites between sets.\n"
              "  --np N, -n N         ranks (default 2)\n"
              "  --o T, --os T, --or T, --g T, --G T/B, --L T\n"
              "                       knobs for the run, as for `loggp run` (default: none, no libloggp.so)\n"
              "  --modes all|send,ssend,isend\n"
              "                       instead: the table of blocking and non-blocking calls, one way and round\n"
              "                       trip per size (loggp-modes; with --sizes, --reps, --rounds, --json F,\n"
              "                       --csv F, --plot F.png; default: the probe's LogGP signature)\n"
              "  --time-limit T, --knob-set SET\n"
              "                       as loggp-probe's below, in the one grammar (docs/cli.md): a duration with\n"
              "                       its unit (1.5s); knob names as in a knob file (o_s=1us,L=5us)\n"
              "example:\n  loggp probe --L 10us --sizes 8,4K,64K --json probe.json\n"
              "loggp-probe options:")
        sys.stdout.flush()
        raise SystemExit(subprocess.run([find_program("loggp-probe"), "--help"]).returncode)
    np_ranks, knob_args, rest, given = 2, [], [], {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if flag_for_name(arg):
            print(f"loggp probe: {arg} is written {flag_for_name(arg)} on the command line; read as "
                  f"{flag_for_name(arg)}", file=sys.stderr)
            arg = flag_for_name(arg)
        if arg in ("--np", "-n", *FLAGS.values()):
            if i + 1 >= len(argv):
                raise UsageError(f"option {arg} needs a value")
            value = argv[i + 1]
            key = "--np" if arg == "-n" else arg
            if key in given:
                raise UsageError(f"{key} is given twice ('{given[key]}', then '{value}'); give it once")
            given[key] = value
            if arg in ("--np", "-n"):
                if not value.isdigit() or int(value) < 2:
                    raise UsageError(f"bad --np '{value}' (expected an integer >= 2)")
                np_ranks = int(value)
            else:
                knob_args += [arg, value]
            i += 2
            continue
        if arg in GRAMMAR_OPTIONS and i + 1 < len(argv):
            rest += [arg, GRAMMAR_OPTIONS[arg](argv[i + 1])]
            i += 2
            continue
        rest.append(arg)
        i += 1
    if "--knob-set" in rest and knob_args:
        raise UsageError("give knobs either as --knob-set sets or as knob options, not both")
    if knob_args:
        # Checked here, so that a bad value is reported as this command's, not the `loggp run` it starts
        try:
            knobs_program("parse", *knob_args)
        except KnobError as err:
            raise UsageError(str(err)) from None
    return argparse.Namespace(np_ranks=np_ranks, knob_args=knob_args, rest=rest)


def execute(args):
    np_ranks, knob_args, rest = args.np_ranks, args.knob_args, args.rest
    if "--modes" in rest:
        return modes.execute(np_ranks, knob_args, rest, loggp_run_command)
    if "--knob-set" in rest:
        cmd = loggp_run_command(np_ranks, [], [], rest)
        with tempfile.TemporaryDirectory(prefix="loggp-probe-") as tmp:
            return subprocess.run(cmd, env=private_knob_env(tmp)).returncode
    if knob_args:
        cmd = loggp_run_command(np_ranks, [], knob_args, rest)
    else:
        cmd = [find_program("mpiexec"), "-n", str(np_ranks), find_program("loggp-probe"), *rest]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
