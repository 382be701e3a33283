"""The one grammar of loggp's values outside the knobs themselves: sizes,
durations and NAME=VALUE knob settings, for flags, study files and the
environment alike (docs/cli.md). Knob values are loggp-knobs' (the C parser).

Each parser raises GrammarError naming the bad value; `argtype` turns one into
an argparse type."""
import argparse
import math
import re
import sys

from .vocabulary import SETTINGS, deprecated_spelling, setting_name


class GrammarError(ValueError):
    """A value the grammar refuses; the message names it."""


SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30,
              "GiB": 1 << 30}
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_NUMBER = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([A-Za-z]*)")


def parse_size(text, low=0, high=1 << 40):
    """"64K", "1MiB", "4096" -> bytes (K = KiB = 1024); a whole number of bytes in [low, high]."""
    m = _NUMBER.fullmatch(str(text).strip())
    if not m or m.group(2) not in SIZE_UNITS:
        raise GrammarError(f"'{text}' is not a size (bytes, or with K, KiB, M, MiB, G, GiB: e.g. 4096, 64K, 1MiB)")
    value = float(m.group(1)) * SIZE_UNITS[m.group(2)]
    if value != math.floor(value):
        raise GrammarError(f"'{text}' is not a whole number of bytes")
    if not low <= value <= high:
        raise GrammarError(f"'{text}' must be in [{format_size(low)}, {format_size(high)}]")
    return int(value)


def parse_sizes(text, low=0, high=1 << 40):
    """"8,64K,1M" -> [8, 65536, 1048576]."""
    items = [t.strip() for t in str(text).split(",")]
    if not any(items) or not all(items):
        raise GrammarError(f"'{text}' is not a comma-separated list of sizes (e.g. 8,64K,1M)")
    return [parse_size(t, low, high) for t in items]


def format_size(n):
    """65536 -> "64K", 1048576 -> "1M", 100 -> "100": what parse_size reads back."""
    for unit in ("G", "M", "K"):
        if n and n % SIZE_UNITS[unit] == 0:
            return f"{n // SIZE_UNITS[unit]}{unit}"
    return str(n)


def parse_duration(text, low=0.0, high=math.inf, low_open=False):
    """"1.5s", "250ms", "10min" -> seconds. Every duration carries its unit; only 0 may go without."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise GrammarError(f"{text!r} is not a duration: write it as a string with a unit (e.g. \"{text}s\")")
    m = _NUMBER.fullmatch(text.strip())
    if not m:
        raise GrammarError(f"'{text}' is not a duration (a number and a unit: {', '.join(DURATION_UNITS)}; e.g. 1.5s)")
    number, unit = m.groups()
    if not unit and float(number) != 0:
        raise GrammarError(f"'{text}': a duration needs its unit (e.g. {number}s); only 0 may go without")
    if unit and unit not in DURATION_UNITS:
        raise GrammarError(f"'{text}': unknown unit '{unit}' (use {', '.join(DURATION_UNITS)})")
    seconds = float(number) * DURATION_UNITS.get(unit, 1.0)
    if not ((low < seconds) if low_open else (low <= seconds)) or seconds > high:
        span = f"{'(' if low_open else '['}{format_duration(low)}, {format_duration(high)}]"
        raise GrammarError(f"'{text}' must be in {span}")
    return seconds


def format_duration(seconds):
    """Seconds as the grammar writes them: "1.5s", "250ms", "10min", "0"."""
    if seconds == 0:
        return "0"
    if math.isinf(seconds):
        return "inf"
    for unit in ("h", "min"):
        if seconds >= DURATION_UNITS[unit] and seconds % DURATION_UNITS[unit] == 0:
            return f"{seconds / DURATION_UNITS[unit]:g}{unit}"
    for unit in ("s", "ms", "us", "ns"):
        if seconds >= DURATION_UNITS[unit] or unit == "ns":
            return f"{seconds / DURATION_UNITS[unit]:.6g}{unit}"


# Where knobs apply (LOGGP_SCOPE: `loggp run --scope`, a study's `scope`) and what knobs
# scoped to the kernel region leave outside it (LOGGP_OUTSIDE: `--outside`, a study's
# `outside`): zero, or armed, each knob set at its smallest step (runenv.h).
SCOPES = ("all", "kernel")
OUTSIDES = ("zero", "armed")


def check_outside(outside, scope):
    """`outside` checked against the scope it comes with: one of OUTSIDES, and armed only
    with the kernel scope (outside the region is everywhere else)."""
    if outside not in OUTSIDES:
        raise GrammarError(f"{outside!r} is not what the knobs leave outside the kernel region: "
                           f"zero (nothing) or armed (each knob set at its smallest step)")
    if outside == "armed" and scope != "kernel":
        raise GrammarError(f"'armed' applies only with the kernel scope (the scope here is {scope!r}): "
                           "outside the region is everywhere else")
    return outside


def parse_settings(text, what="setting", warn=None):
    """"o_s=1us,G=0.5ns/B" -> {"o_s": "1us", "G": "0.5ns/B"}: knob names as in the knob
    file (o, o_s, o_r, g, G, L). A flag's spelling (os, or) is taken with one line to
    `warn` (default stderr) saying it will go. Values are left to loggp-knobs."""
    texts = {}
    for item in str(text).split(","):
        name, eq, value = item.strip().partition("=")
        if not eq or not value.strip():
            raise GrammarError(f"{what} '{text}': '{item.strip()}' is not knob=value (e.g. o_s=10us,G=2ns/B)")
        try:
            setting, old = setting_name(name.strip())
        except KeyError:
            raise GrammarError(f"{what} '{text}': unknown knob '{name.strip()}' (known: {', '.join(SETTINGS)})") \
                from None
        if old:
            (warn or _stderr)(f"{what} '{text}': {deprecated_spelling(old, setting)}")
        if setting in texts:
            raise GrammarError(f"{what} '{text}': knob '{setting}' given twice")
        texts[setting] = value.strip()
    return texts


def _stderr(line):
    print(f"loggp: {line}", file=sys.stderr)


def argtype(parse, *args, **kw):
    """An argparse type from one of the parsers above, its error naming the value."""
    def convert(text):
        try:
            return parse(text, *args, **kw)
        except GrammarError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    convert.__name__ = parse.__name__.removeprefix("parse_")
    return convert


def size(low=0, high=1 << 40):
    return argtype(parse_size, low, high)


def sizes(low=0, high=1 << 40):
    return argtype(parse_sizes, low, high)


def duration(low=0.0, high=math.inf, low_open=False):
    return argtype(parse_duration, low, high, low_open)


def duration_ns(low=0.0, high=math.inf, low_open=False):
    """A duration option whose value the program takes in whole nanoseconds."""
    def parse_duration_ns(text):
        return round(parse_duration(text, low, high, low_open) * 1e9)
    return argtype(parse_duration_ns)


class Deprecated(argparse.Action):
    """An old spelling of an option: stores into the new one's dest and says, in one
    line on stderr, which spelling to use."""

    def __init__(self, *args, instead, **kw):
        super().__init__(*args, **kw)
        self.instead = instead

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: {option_string} is the old spelling of {self.instead}; it will go", file=sys.stderr)
        setattr(namespace, self.dest, values)
