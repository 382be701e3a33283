"""Knob values with units, as `loggp run` and loggp-knobs accept them.

Times: "800ps", "250ns", "1.5us", "2ms", "0.1s". G, time per byte: "0.5ns/B",
"2us/KiB", "1ms/MB". Parsed, times are nanoseconds (float) and G is
nanoseconds per byte, as loggp-knobs (the project's one knob parser) reads
them; the text itself is what `loggp run` gets.
"""
import functools

from loggp.knobs import FLAGS, KNOBS, SETTINGS, KnobError, parse as parse_knobs  # noqa: F401
from loggp.knobs.vocabulary import ARMED, TIME_PER_BYTE, unit_of  # noqa: F401

# Sweep names accepted in a study file; "o" moves o_s and o_r together, as
# Martin's overhead knob did.
SWEEP_KNOBS = SETTINGS

# ARMED (from the vocabulary), every knob at its smallest step, is a study's armed baseline: its
# runs carry the layer's own cost, as each knob setting's do, so a setting minus its armed run is
# the knob's effect alone.


class UnitError(ValueError):
    pass


def is_per_byte(knob):
    return unit_of(knob) == TIME_PER_BYTE


@functools.lru_cache(maxsize=1024)
def _parse_cached(knob, text):
    try:
        return parse_knobs({knob: text})[knob]
    except KnobError as err:
        raise UnitError(f"bad {knob} value {text!r}: {err}") from None


def parse(knob, text):
    """Returns the value in ns (time knobs) or ns/B (G); raises UnitError."""
    if knob not in SWEEP_KNOBS:
        raise UnitError(f"unknown knob {knob!r} (expected one of {', '.join(SWEEP_KNOBS)})")
    if text == 0 and not isinstance(text, bool):
        return 0.0  # zero is zero in every unit, as loggp-knobs reads a bare 0
    if not isinstance(text, str):
        example = '"0.5ns/B"' if is_per_byte(knob) else '"10us"'
        raise UnitError(f"{knob} value {text!r} must be a string with a unit, e.g. {example}")
    return _parse_cached(knob, text.strip())
