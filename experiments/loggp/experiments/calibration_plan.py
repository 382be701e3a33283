"""What `loggp calibrate` measures: the knobs and their sweeps, the probe's sizes, the
parameters each knob must move (its own measures) and must not (its cross-talk), and each
run's knob sets, framed by the armed baseline and zero knobs."""
from loggp.knobs.vocabulary import ARMED_STEP_NS, VOCABULARY

KNOBS = ("o", "g", "L", "G")
DEFAULT_SWEEPS = {
    "o": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "g": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "L": [0, 0.5, 1, 2, 5, 10, 20, 50, 100],
    "G": [0, 0.1, 0.2, 0.5, 1, 2, 5],
}
QUICK_SWEEPS = {"o": [0, 1, 10], "g": [0, 1, 10], "L": [0, 1, 10], "G": [0, 0.5, 2]}
UNITS = {"o": "us", "g": "us", "L": "us", "G": "ns/B"}
CAL_SIZES = [8, 64, 512, 4096, 16384, 65536]
# G is read where every size crosses one protocol: above shm's 4 KiB eager limit, where L
# costs every flight of the rendezvous (docs/protocols.md), so L does not bend the slope.
BULK_MIN_BYTES = 8192
MAX_SWEEP_VALUES = 15  # loggp-probe takes 16 knob sets: the armed frame, zero knobs and 14 nonzero values
# The knob's own measures (expected to rise by the set value) and the parameters that
# must not move.
PRIMARY = {"o": ("o_s", "o_r"), "g": ("g",), "L": ("L",), "G": ("G", "G_T")}
CROSSTALK = {"o": ("g_excess", "L", "G"), "g": ("o_s", "o_r", "L", "G"),
             "L": ("o_s", "o_r", "g", "G"), "G": ("o_s", "o_r", "g", "L")}
PER_BYTE = ("G", "G_T")
QUANTITIES = ("T_us", "o_s_us", "o_r_us", "g_us")
PARAMS = ("o_s", "o_r", "g", "g_excess", "L", "G", "G_T")


class CalibrationError(ValueError):
    """Bad input or a failed run, reported without a traceback."""


# The armed baseline (vocabulary.ARMED_STEP_NS), in this command's units (UNITS: us, G ns/B).
# The layer then takes its armed path on both sides of every difference, so its own cost per
# message cancels instead of landing on the knob.
ARMED = {k.name: ARMED_STEP_NS[k.unit] / (1.0 if k.per_byte else 1000.0) for k in VOCABULARY}
ZERO = {k: 0.0 for k in ARMED}


def armed_step(knob):
    return ARMED["o_s" if knob == "o" else knob]


def armed_settings(knob, value):
    """The armed set with one knob (o: o_s and o_r) at `value`."""
    settings = dict(ARMED)
    for name in (("o_s", "o_r") if knob == "o" else (knob,)):
        settings[name] = float(value)
    return settings


def sweep_points(values):
    """The settings judged against the armed baseline: a sweep's nonzero values (its 0 is
    the zero-knob set every run measures anyway)."""
    return sorted({float(v) for v in values if v != 0})


def sweep_sets(knob, values):
    """One run's knob sets: the armed baseline (the frame every reading is taken against),
    zero knobs (for the armed layer's own cost), then each nonzero value armed."""
    return [dict(ARMED), dict(ZERO)] + [armed_settings(knob, v) for v in sweep_points(values)]

