"""Conventions: every command's and subcommand's --help exits 0, shows an
example and gives every option's default; --version; a closed pipe is not a crash."""
import argparse
import re
import subprocess
import sys

import pytest

from tests.testkit import installed, run


def subcommand_parsers():
    """(argv path, parser) for every `loggp` command and subcommand with a parser."""
    from loggp import cli

    def walk(parser, path):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, path + [name])

    found = []
    for name in cli.COMMANDS:
        command = cli.command(name)
        try:
            parser = command.parser()
        except NotImplementedError:
            found.append(([name], None))  # a command with its own help (probe)
            continue
        found.extend(walk(parser, [name]))
    return found


PATHS = [path for path, _ in subcommand_parsers()]


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) for p in PATHS])
def test_every_help_exits_0_with_an_example(path):
    proc = run([installed("loggp"), *path, "--help"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:") and "example:" in proc.stdout, proc.stdout
    example = proc.stdout.split("example:", 1)[1].split()
    assert example[0] in ("loggp", "sudo"), "the example is a command line"


def test_every_option_gives_its_default():
    missing = []
    for path, parser in subcommand_parsers():
        if parser is None:
            continue
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:
                continue  # positional arguments, --help and on/off flags
            if "default" not in (action.help or ""):
                missing.append(f"loggp {' '.join(path)} {action.option_strings[-1]}")
    assert not missing, missing


def test_probe_help_describes_its_own_options():
    out = run([installed("loggp"), "probe", "--help"]).stdout
    assert "--np N" in out and "(default 2)" in out and "example:" in out


def test_root_help_and_version():
    proc = run([installed("loggp"), "--help"])
    assert proc.returncode == 0 and "example:" in proc.stdout
    from importlib.metadata import version
    __version__ = version("loggp")
    assert run([installed("loggp"), "--version"]).stdout == f"loggp {__version__}\n"
    knobs_version = run([installed("loggp-knobs"), "--version"])
    assert knobs_version.returncode == 0 and knobs_version.stdout == f"loggp-knobs {__version__}\n"


@pytest.mark.parametrize("command", ["set", "show", "reset", "env", "path", "parse", "--help"])
def test_loggp_knobs_help_has_an_example(command):
    proc = run([installed("loggp-knobs"), command] + ([] if command == "--help" else ["--help"]))
    assert proc.returncode == 0 and "example:" in proc.stdout
    assert "loggp-knobs " in proc.stdout.split("example:", 1)[1].splitlines()[0]


def test_timing_help_needs_no_mpi():
    proc = run([installed("loggp-timing"), "--help"], timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:")
    assert "example:" in proc.stdout and "MPI_Abort" not in proc.stderr


@pytest.mark.parametrize("tool", ["loggp-layer-cost", "loggp-detours"])
def test_bench_tools_answer_help_and_refuse_the_unknown(tool):
    proc = run([installed(tool), "--help"], timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:"), proc.stderr
    assert "example:" in proc.stdout and "default" in proc.stdout
    bad = run([installed(tool), "--frobnicate"], timeout=30)
    assert bad.returncode == 2 and "'--frobnicate'" in bad.stderr


@pytest.mark.parametrize("tool", ["loggp-packet", "loggp-modes", "loggp-rtt-samples"])
def test_measuring_programs_on_path_answer_help_without_mpi(tool):
    proc = run([installed(tool), "--help"], timeout=30)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: mpiexec -n 2 " + tool), proc.stderr
    assert "example:" in proc.stdout and "loggp " in proc.stdout  # names the command that runs it


@pytest.mark.parametrize("kernel", ["cg", "ep", "ft", "is", "lu", "mg"])
def test_npb_kernels_answer_help_without_mpi(kernel):
    proc = run([installed(f"loggp-npb-{kernel}"), "--help"], timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert f"usage: mpiexec -n NP loggp-npb-{kernel} CLASS" in proc.stdout and "example:" in proc.stdout
    assert "MPI" not in proc.stderr


@pytest.mark.parametrize("args", [["--help"], ["study", "--help"]])
def test_a_closed_pipe_is_not_a_traceback(args):
    # The reader is gone before loggp writes, as with `loggp --help | head -1`.
    proc = subprocess.Popen([installed("loggp"), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()
    assert proc.returncode in (0, 141)  # argparse itself ignores a failed write of its help


def test_the_pipe_check_can_fail():
    # A Python program without the handling does print one, so the check above means something.
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2); print('x' * 100)"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert b"BrokenPipeError" in err


# Words of the project's own history, which a user cannot look up.
INTERNAL = re.compile(r"\bissues? \d|\w\.py\b|\bVMs?\b|\bsessions?\b|this module", re.IGNORECASE)


def test_help_texts_carry_no_internal_notes():
    from loggp.shim import bench
    texts = [(" ".join(path), parser.format_help()) for path, parser in subcommand_parsers() if parser]
    texts.append(("probe", run([installed("loggp"), "probe", "--help"]).stdout.split("loggp-probe options:")[0]))
    texts.append(("bench's terms", "\n".join(text for _, text in bench.TERMS)))
    leaks = [f"{where}: {line.strip()}" for where, text in texts for line in text.splitlines()
             if INTERNAL.search(line)]
    assert not leaks, leaks


# ---- the one grammar (docs/cli.md), checked on every option of every command --------------

# Lower-case words joined by dashes; a knob keeps its own letter (--G-sizes, --jitter-L).
_WORD = r"([a-z][a-z0-9]*|G|L)"
PLAIN_FLAG = re.compile(rf"--{_WORD}(-{_WORD})*$")
# A name that carries a unit means a bare number: the grammar puts the unit in the value.
UNIT_IN_NAME = re.compile(r"-(s|ms|us|ns|sec|seconds|bytes|kib|mib)$", re.IGNORECASE)
# Help that says a value is a bare number of a unit.
BARE_UNIT_HELP = re.compile(r"\b(in |, )?(seconds|microseconds|nanoseconds|bytes)\b(?! per)|\bbare\b")
NUMBER_TYPES = (int, float)


def grammar_options():
    """(where, action) for every option of every command."""
    for path, parser in subcommand_parsers():
        if parser is None:
            continue
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                yield f"loggp {' '.join(path)} {'/'.join(action.option_strings)}", action


def deprecated(action):
    from loggp.knobs.grammar import Deprecated
    return isinstance(action, Deprecated)


def test_option_names_follow_the_grammar():
    bad = []
    for where, action in grammar_options():
        for name in action.option_strings:
            if name.startswith("--") and not PLAIN_FLAG.match(name):
                bad.append(f"{where}: {name} is neither lower-case-with-dashes nor a knob's flag")
            if UNIT_IN_NAME.search(name) and not deprecated(action):
                bad.append(f"{where}: {name} puts a unit in its name (the value carries it)")
            if name in ("--results", "--output", "--outdir", "--output-dir") and not deprecated(action):
                bad.append(f"{where}: {name}: a results folder is --out DIR, one file --json FILE")
    assert not bad, bad


def test_outputs_are_out_dir_or_json_file_with_defaults_under_results():
    bad = []
    for where, action in grammar_options():
        if "--out" in action.option_strings:
            if action.metavar != "DIR":
                bad.append(f"{where}: --out takes a DIR (metavar {action.metavar!r})")
            if action.default is not None and not str(action.default).startswith("results/"):
                bad.append(f"{where}: --out defaults to {action.default!r}, outside results/")
        if "--json" in action.option_strings and action.nargs != 0 and action.metavar != "FILE":
            bad.append(f"{where}: --json takes a FILE (metavar {action.metavar!r})")
    assert not bad, bad


def test_no_option_takes_a_bare_number_of_a_unit():
    """Durations, sizes and knob values carry their unit; options that take a plain
    number take a count, a seed or a ratio. The old spellings are the exception, and say so."""
    bad = []
    for where, action in grammar_options():
        if action.nargs == 0 or deprecated(action):
            continue
        kind = action.type
        numeric = kind in NUMBER_TYPES or getattr(kind, "__name__", "") in ("parse", "positive_int")
        if numeric and BARE_UNIT_HELP.search(action.help or ""):
            bad.append(f"{where}: a bare number of {BARE_UNIT_HELP.search(action.help).group(2)}")
    assert not bad, bad


def test_the_checks_above_can_fail():
    assert UNIT_IN_NAME.search("--compute-ns") and UNIT_IN_NAME.search("--time-limit-s")
    assert not PLAIN_FLAG.match("--Time") and PLAIN_FLAG.match("--L-inter") and not PLAIN_FLAG.match("--Lx")
    assert not PLAIN_FLAG.match("--time_limit") and PLAIN_FLAG.match("--os")
    assert BARE_UNIT_HELP.search("seconds one run may take") and not BARE_UNIT_HELP.search("0.5ns per byte")


def test_unit_defaults_are_shown_with_their_unit():
    """A size or duration option shows its default as the grammar writes it, and the
    default parses back to the value the command uses."""
    from loggp.knobs import grammar
    checked, bad = 0, []
    for where, action in grammar_options():
        name = getattr(action.type, "__name__", "")
        if name not in ("size", "sizes", "duration", "duration_ns") or action.default is None:
            continue
        checked += 1
        shown = f"(default {action.default})"
        if shown not in action.help:
            bad.append(f"{where}: help does not show {shown}")
        if not isinstance(action.default, str):
            bad.append(f"{where}: default {action.default!r} is not written in the grammar")
        elif name.startswith("duration") and not re.search(r"[a-z]$", action.default):
            bad.append(f"{where}: default {action.default!r} has no unit")
    assert checked >= 6 and not bad, (checked, bad)


def test_docs_cli_names_every_command():
    from pathlib import Path
    from loggp import cli
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    missing = [name for name in cli.COMMANDS if f"| `loggp {name}` |" not in text]
    assert not missing, f"docs/cli.md lacks a row for: {missing}"
