"""The knob vocabulary: every name a knob goes by, defined once.

Each part reads its knob names from here (flags, environment variables, JSON
fields, columns); the C table (loggp-knobs/core/knobs.c, knobs.h) is checked
against this one by loggp-knobs/tests/test_vocabulary.py.
"""
from dataclasses import dataclass

TIME = "time"
TIME_PER_BYTE = "time-per-byte"


@dataclass(frozen=True)
class Knob:
    name: str      # Python, knob file, study file, NAME=VALUE settings: "o_s"
    flag: str      # command-line flag without its dashes: "os" (--os)
    variable: str  # environment variable for one run: "LOGGP_OS"
    unit: str      # TIME or TIME_PER_BYTE
    json: str      # key in `knobs_ns` (loggp-knobs show --json, profiles)
    field: str     # a value of it in Python and in tables, with its unit: "o_s_ns"
    c_enum: str    # loggp_knob_id in knobs.h
    meaning: str   # one line, as `loggp-knobs show` and the docs say it

    @property
    def option(self):
        return f"--{self.flag}"

    @property
    def per_byte(self):
        return self.unit == TIME_PER_BYTE

    @property
    def example(self):
        return "0.5ns/B" if self.per_byte else "10us"


VOCABULARY = (
    Knob("o_s", "os", "LOGGP_OS", TIME, "o_s", "o_s_ns", "LOGGP_KNOB_O_S",
         "send overhead: busy-wait on the sender's CPU in every send"),
    Knob("o_r", "or", "LOGGP_OR", TIME, "o_r", "o_r_ns", "LOGGP_KNOB_O_R",
         "receive overhead: busy-wait on the receiver's CPU per message received"),
    Knob("g", "g", "LOGGP_GAP", TIME, "g", "g_ns", "LOGGP_KNOB_GAP",
         "gap: minimum spacing between successive injections of one process"),
    Knob("G", "G", "LOGGP_GAP_PER_BYTE", TIME_PER_BYTE, "G_per_byte", "G_ns_per_byte", "LOGGP_KNOB_GAP_PER_BYTE",
         "Gap per byte: (k-1)*G more spacing and flight time for k bytes"),
    Knob("L", "L", "LOGGP_LATENCY", TIME, "L", "L_ns", "LOGGP_KNOB_LATENCY",
         "latency: delay before a message becomes visible to the receiver"),
)

# The armed baseline: every knob at its smallest step (o, g, L 1 ns; G 1 ps per byte, the finest
# the knob parser keeps), so the layer takes every delay path while the delays add ~nothing. A
# reading taken against it cancels the armed layer's own cost per message. The C side's
# LOGGP_ARMED_STEP_PS and _PS_PER_BYTE (runenv.h, LOGGP_OUTSIDE=armed) say the same; a test checks.
ARMED_STEP_NS = {TIME: 1.0, TIME_PER_BYTE: 0.001}
ARMED_STEP_TEXT = {TIME: "1ns", TIME_PER_BYTE: "0.001ns/B"}

# "o" is not a knob of its own: as a setting or a flag (--o) it sets o_s and o_r together.
BOTH_OVERHEADS = "o"
OVERHEAD_PAIR = ("o_s", "o_r")

KNOBS = tuple(k.name for k in VOCABULARY)
BY_NAME = {k.name: k for k in VOCABULARY}
# Names a NAME=VALUE setting, a sweep or a knob set takes: "o" and the knobs.
SETTINGS = (BOTH_OVERHEADS, *KNOBS)
# Flag of each setting: {"o": "--o", "o_s": "--os", ...}.
FLAGS = {BOTH_OVERHEADS: "--o", **{k.name: k.option for k in VOCABULARY}}
# Flag without dashes -> setting: {"o": "o", "os": "o_s", ...}.
FLAG_NAMES = {flag[2:]: name for name, flag in FLAGS.items()}
ENVIRONMENT = {k.name: k.variable for k in VOCABULARY}
# {knob: its armed step as a value with its unit}: {"o_s": "1ns", ..., "G": "0.001ns/B"}.
ARMED = {k.name: ARMED_STEP_TEXT[k.unit] for k in VOCABULARY}
FIELDS = {k.name: k.field for k in VOCABULARY}
# Long names a newcomer may try for a knob flag, for "did you mean".
LONG_NAMES = {"latency": "L", "overhead": "o", "send-overhead": "o_s", "recv-overhead": "o_r",
              "gap": "g", "gap-per-byte": "G", "bandwidth": "G"}


def knobs_of(setting):
    """The knobs a setting moves: ("o_s", "o_r") for "o", else (setting,)."""
    return OVERHEAD_PAIR if setting == BOTH_OVERHEADS else (setting,)


def unit_of(setting):
    """TIME or TIME_PER_BYTE."""
    return BY_NAME[knobs_of(setting)[0]].unit


def setting_name(text):
    """(setting, old spelling or None) for a NAME in NAME=VALUE: the knob's name
    ("o_s"), or its flag's spelling ("os"), taken as an alias to be named deprecated;
    KeyError for neither."""
    if text in SETTINGS:
        return text, None
    if text in FLAG_NAMES:
        return FLAG_NAMES[text], text
    raise KeyError(text)


def flag_for_name(option):
    """"--os" for "--o_s" (a knob's name written as a flag), else None."""
    name = option[2:] if option.startswith("--") else None
    return FLAGS[name] if name in BY_NAME and FLAGS[name] != option else None


def deprecated_spelling(old, setting):
    """The one line said for a setting written with its flag's spelling."""
    return f"'{old}' is the flag's spelling; write '{setting}' (the old spelling will go)"
