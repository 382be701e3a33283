"""Knob values with units, as `loggp run` and loggp-knobs accept them.

Times: "800ps", "250ns", "1.5us", "2ms", "0.1s". G, time per byte: "0.5ns/B",
"2us/KiB", "1ms/MB". Parsed, times are nanoseconds (float) and G is
nanoseconds per byte, as loggp-knobs (the project's one knob parser) reads
them; the text itself is what `loggp run` gets.
"""
import functools
import json
import subprocess

KNOBS = ("o_s", "o_r", "g", "G", "L")
# Sweep names accepted in a study file; "o" moves o_s and o_r together, as
# Martin's overhead knob did.
SWEEP_KNOBS = ("o", "o_s", "o_r", "g", "G", "L")
FLAGS = {"o_s": "--os", "o_r": "--or", "g": "--g", "G": "--G", "L": "--L"}


class UnitError(ValueError):
    pass


def is_per_byte(knob):
    return knob == "G"


@functools.lru_cache(maxsize=1024)
def _parse_with_loggp_knobs(knob, text):
    from loggp.run import RunError, find_program
    try:
        program = find_program("loggp-knobs")
    except RunError as err:
        raise UnitError(str(err)) from None
    flag = "--o" if knob == "o" else FLAGS[knob]
    proc = subprocess.run([program, "parse", flag, text], capture_output=True, text=True)
    if proc.returncode != 0:
        message = proc.stderr.strip().replace("loggp-knobs: ", "", 1)
        raise UnitError(f"bad {knob} value {text!r}: {message or 'refused by loggp-knobs'}")
    parsed = json.loads(proc.stdout)
    return float(next(iter(parsed.values()))["ns"])


def parse(knob, text):
    """Returns the value in ns (time knobs) or ns/B (G); raises UnitError."""
    if knob not in SWEEP_KNOBS:
        raise UnitError(f"unknown knob {knob!r} (expected one of {', '.join(SWEEP_KNOBS)})")
    if not isinstance(text, str):
        example = '"0.5ns/B"' if is_per_byte(knob) else '"10us"'
        raise UnitError(f"{knob} value {text!r} must be a string with a unit, e.g. {example}")
    return _parse_with_loggp_knobs(knob, text.strip())
