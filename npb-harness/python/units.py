"""Knob values with units, as `loggp run` and loggp-knobs accept them.

Times: "800ps", "250ns", "1.5us", "2ms", "0.1s". G, time per byte: "0.5ns/B",
"2us/KiB", "1ms/MB". Parsed, times are nanoseconds (float) and G is
nanoseconds per byte; the text itself is what `loggp run` gets.
"""
import re

KNOBS = ("o_s", "o_r", "g", "G", "L")
# Sweep names accepted in a study file; "o" moves o_s and o_r together, as
# Martin's overhead knob did.
SWEEP_KNOBS = ("o", "o_s", "o_r", "g", "G", "L")
FLAGS = {"o_s": "--os", "o_r": "--or", "g": "--g", "G": "--G", "L": "--L"}

TIME_UNITS_NS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BYTE_UNITS = {"B": 1, "KB": 1000, "KiB": 1024, "MB": 1000**2, "MiB": 1024**2}
MAX_NS = 10e9  # same ceiling as the C parser: 10 s (per byte for G)

_number = r"(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_TIME = re.compile(rf"^({_number})\s*(ps|ns|us|ms|s)$")
_PER_BYTE = re.compile(rf"^({_number})\s*(ps|ns|us|ms|s)\s*/\s*(B|KB|KiB|MB|MiB)$")


class UnitError(ValueError):
    pass


def is_per_byte(knob):
    return knob == "G"


def parse(knob, text):
    """Returns the value in ns (time knobs) or ns/B (G); raises UnitError."""
    if not isinstance(text, str):
        example = '"0.5ns/B"' if is_per_byte(knob) else '"10us"'
        raise UnitError(f"{knob} value {text!r} must be a string with a unit, e.g. {example}")
    s = text.strip()
    if is_per_byte(knob):
        m = _PER_BYTE.match(s)
        if not m:
            raise UnitError(f"bad {knob} value {text!r}: expected time per byte "
                            f"such as '0.5ns/B' or '2us/KiB'")
        value = float(m.group(1)) * TIME_UNITS_NS[m.group(3)] / BYTE_UNITS[m.group(4)]
    else:
        m = _TIME.match(s)
        if not m:
            raise UnitError(f"bad {knob} value {text!r}: expected a time such as "
                            f"'250ns', '1.5us', '2ms' or '0.1s'")
        value = float(m.group(1)) * TIME_UNITS_NS[m.group(3)]
    if value > MAX_NS:
        raise UnitError(f"{knob} value {text!r} is over the 10 s limit")
    return value
