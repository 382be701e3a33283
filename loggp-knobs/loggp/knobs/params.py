"""One LogGP parameter set, the one type every part holds one in: o_s, o_r, g, L
in nanoseconds and G in nanoseconds per byte (a machine's own figures, or knob
increments over them)."""
from dataclasses import dataclass, replace

from . import parse
from .vocabulary import BOTH_OVERHEADS, BY_NAME, KNOBS, knobs_of


@dataclass(frozen=True)
class LogGP:
    o_s: float = 0.0  # ns
    o_r: float = 0.0  # ns
    g: float = 0.0    # ns
    G: float = 0.0    # ns per byte
    L: float = 0.0    # ns

    @classmethod
    def of(cls, values):
        """From {setting: ns (ns/B for G)}; "o" sets o_s and o_r, and o_s or o_r given
        beside it wins."""
        return cls().with_values(values)

    @classmethod
    def parse(cls, texts):
        """From {setting: text with a unit} ("o", "o_s", ... -> "10us", "0.5ns/B"),
        each read by loggp-knobs, the one knob parser; KnobError names a bad one."""
        texts = dict(texts)
        both = {BOTH_OVERHEADS: texts.pop(BOTH_OVERHEADS)} if BOTH_OVERHEADS in texts else {}
        # loggp-knobs refuses "o" beside o_s in one call; here o_s beside "o" overrides it
        return cls.of({**parse(both), **parse(texts)})

    def with_values(self, values):
        """This set with the knobs in {setting: ns} replaced ("o" sets both overheads,
        which o_s or o_r beside it overrides)."""
        changed = {}
        for setting in sorted(values, key=lambda s: s != BOTH_OVERHEADS):
            for knob in _knobs(setting):
                changed[knob] = float(values[setting])
        return replace(self, **changed)

    def plus(self, increments=None, **more):
        """This set with each increment added ({setting: ns}, or keywords); "o" adds to
        o_s and o_r."""
        added = {}
        for setting, delta in {**(increments or {}), **more}.items():
            for knob in _knobs(setting):
                added[knob] = added.get(knob, getattr(self, knob)) + delta
        return replace(self, **added)

    def values(self):
        """{knob: ns (ns/B for G)} in the vocabulary's order."""
        return {knob: getattr(self, knob) for knob in KNOBS}

    def is_zero(self):
        return not any(self.values().values())

    def byte_time(self, size):
        """(k-1)G: what G adds to one k-byte message."""
        return max(size - 1, 0) * self.G

    def one_way(self, size):
        """o_s + (k-1)G + L + o_r: LogGP's time for one k-byte message."""
        return self.o_s + self.byte_time(size) + self.L + self.o_r

    def text(self, knob):
        """One knob as a user writes it: "0", "250ns", "1.5us", "0.5ns/B"."""
        return format_value(knob, getattr(self, knob))

    def __str__(self):
        """"o_s=1us o_r=1us g=0 G=0.5ns/B L=10us"."""
        return " ".join(f"{knob}={self.text(knob)}" for knob in KNOBS)


def _knobs(setting):
    if setting != BOTH_OVERHEADS and setting not in BY_NAME:
        raise ValueError(f"unknown knob {setting!r} (known: {BOTH_OVERHEADS}, {', '.join(KNOBS)})")
    return knobs_of(setting)


def format_value(knob, ns):
    """A value in ns (ns/B for G) with the largest time unit that keeps it >= 1."""
    if ns == 0:
        return "0"
    per_byte = "/B" if BY_NAME[knobs_of(knob)[0]].per_byte else ""
    for unit, size in (("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)):
        if abs(ns) >= size or unit == "ns":
            return f"{ns / size:.6g}{unit}{per_byte}"
