"""loggp.knobs: knob values for Python code, parsed by loggp-knobs itself so that
every part of loggp accepts exactly the same syntax (the one knob parser).

Every name a knob goes by (flag, environment, JSON, C) is in .vocabulary."""
import json
import subprocess

from .programs import MissingProgram, find_program
from .vocabulary import ENVIRONMENT, FLAGS, KNOBS, SETTINGS  # noqa: F401 (the names every part reads)


class KnobError(ValueError):
    """A value loggp-knobs refused; the message names it."""


def knobs_program(*args, env=None):
    """Runs `loggp-knobs ARGS` (in env, default this process's environment); its
    stdout, or KnobError with its message."""
    try:
        exe = find_program("loggp-knobs")
    except MissingProgram as err:
        raise KnobError(str(err)) from None
    # paths in its output are bytes, not always UTF-8: kept as they are, never a crash
    proc = subprocess.run([exe, *args], capture_output=True, text=True, errors="surrogateescape", env=env)
    if proc.returncode != 0:
        raise KnobError(proc.stderr.strip().replace("loggp-knobs: ", "", 1) or "refused by loggp-knobs")
    return proc.stdout


def environment(flag_values):
    """[(flag, text)] with loggp-knobs' flags (o, os, or, g, G, L) -> {variable: value}
    for every knob, as `loggp-knobs env` exports them (values given, else the knob file's)."""
    argv = []
    for flag, text in flag_values:
        argv += [f"--{flag}", text]
    exported = {}
    for line in knobs_program("env", "--format", "sh", *argv).splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        exported[name] = value
    return exported


def parse(values):
    """{knob: text} -> {knob: nanoseconds (ns per byte for G)}; one call for all."""
    unknown = [k for k in values if k not in FLAGS]
    if unknown:
        raise KnobError(f"unknown knob {unknown[0]!r} (known: {', '.join(FLAGS)})")
    if not values:
        return {}
    argv = []
    for knob, text in values.items():
        if not isinstance(text, str):
            raise KnobError(f"{knob}: {text!r} must be a string with a unit, e.g. '10us'")
        argv += [FLAGS[knob], text]
    parsed = json.loads(knobs_program("parse", *argv))
    return {knob: float(parsed["o_s" if knob == "o" else knob]["ns"]) for knob in values}
