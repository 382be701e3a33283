"""The apparatus's known defects: readings `loggp calibrate` resolves as missed on a quiet
machine whose cause is known. Each stays *missed* (it is a real, repeatable error) and is
named in one line beside its verdict, but only up to the size it is known to reach: a
larger miss is a different fault. docs/benchmarks.md ("Known defects") says more."""
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownDefect:
    knob: str          # the knob set
    parameter: str     # the reading it moves
    above: object      # True: it reads above its expectation; False: below; None: either way
    most: float        # the largest deviation it explains, in the reading's unit (us, ns/B) ...
    most_share: float  # ... or this share of the set value, whichever is larger
    line: str          # what it is, in one line

    def size(self, set_value):
        """The largest deviation it is known to reach at `set_value`."""
        return max(self.most, self.most_share * abs(set_value))

    def explains(self, deviation, set_value, reach=None):
        """Does this defect account for a reading `deviation` from its expectation? `reach`:
        the end of the reading's 95 % interval nearest the expectation, as a deviation; a
        reading beyond the defect's size is a different fault only when that end is beyond
        it too, as a miss is one only when its whole interval is beyond the goal."""
        if self.above is not None and (deviation > 0) != self.above:
            return False
        nearest = abs(deviation) if reach is None or (reach > 0) != (deviation > 0) else min(abs(deviation), abs(reach))
        return nearest <= self.size(set_value)

    def beyond(self, deviation, set_value):
        """Is the reading itself beyond the size this defect is known to reach?"""
        return abs(deviation) > self.size(set_value)


KNOWN_DEFECTS = (
    KnownDefect("o", "g_excess", True, 0.16, 0.0,
                "the machine's, not the apparatus's: plain MPICH with 1 us (10 us) spun before each send and "
                "after each receive streams 8 B 0.12 us (0.14) a message slower than with the receive spin "
                "alone, the o knobs 0.07-0.11 (analysis/bench/spun_stream.c); LogP's max(o_s, o_r) leaves it out"),
    KnownDefect("o", "L", True, 0.14, 0.0,
                "the machine's, not the apparatus's: plain MPICH with 1 us (10 us) spun by both ranks around "
                "each call grows an 8 B half round trip by 0.07-0.10 us (0.12-0.14) over LogP's o_s + o_r "
                "(analysis/bench/spun_pingpong.c), and L = T - o_s - o_r takes it"),
    KnownDefect("o", "o_r", True, 0.0, 0.02,
                "o_r's reading at a large o grows with the host's detours, about the share of a CPU they "
                "take: +0.064 us over 10 us at 2,238 detours a second, +0.148 at 3,922 (2.1 % of a CPU), "
                "+0.162 at 5,268; cause not yet found"),
    KnownDefect("g", "g", False, 0.15, 0.0,
                "LogP's expectation at a small g takes g's machine part from the largest setting, where "
                "long bursts collect more of the host's detours, so it sits above the reading: 30 ns at "
                "2,150 detours a second, 118 ns at 5,268"),
    KnownDefect("L", "g", False, 0.15, 0.0,
                "L holds hand completions over from the provider in batches, so a receiver-bound stream "
                "pays the provider's per-read cost less often and runs up to ~0.1 us a message faster"),
    KnownDefect("g", "G", None, 0.002, 0.0,
                "the machine's, not the apparatus's: g's wait before each send moves G's slope over 16-64 KiB as "
                "1 us spun on the send side does (+0.0006 and +0.0016 ns/B against +0.0008 and +0.0018, paired "
                "within 0.0003: analysis/bench/bulk_slope_by_side.py), and plain MPICH spinning on the send side "
                "moves it by -0.0030 to +0.0010 from launch to launch (analysis/bench/spun_sides.c)"),
    KnownDefect("o", "G", None, 0.001, 0.0,
                "the machine's, not the apparatus's: plain MPICH with 1 us spun by the program on both sides "
                "moves G's slope over 16-64 KiB by -0.0010 to +0.0018 ns/B from launch to launch, and by up to "
                "0.006 with one side spinning, as each side hides part of the other's spin by size "
                "(analysis/bench/spun_sides.c); the o knobs read -0.0018 to +0.0003 at 1 us"),
    KnownDefect("L", "G", None, 0.001, 0.0,
                "G's slope over 16-64 KiB moves by up to 0.001 ns/B either way at L = 1 us (+0.0005 on a host "
                "taking 7,160 detours a second, -0.0010 on one taking 488: 33-65 ns over 64 KiB), mostly as a "
                "spin on the receive side moves it, by less; cause not yet found (docs/benchmarks.md)"),
    KnownDefect("G", "L", None, 0.2, 0.0,
                "the machine's, not G's: a hold moves T - o_s - o_r at 8 B-4 KiB beyond its own length by "
                "-0.16 to +0.15 us, by size and launch, the same whether G or an L of that length sets it "
                "(paired within 0.013 us, analysis/bench/hold_by_size.py), as plain MPICH moves a half round "
                "trip by -0.19 to +0.15 us beyond a wait of 0.05-2 us before each reply "
                "(analysis/bench/spun_reply.c); L is read as their median over the sizes"),
    KnownDefect("L", "L", None, 0.05, 0.0,
                "the machine's answer to a hold, as L under G: L = 1 us is read as the median over 8 B-4 KiB of "
                "T - o_s - o_r's growth, and plain MPICH grows that median by -14 to +17 ns beyond a 1 us wait "
                "before each reply (analysis/bench/spun_reply.c), the apparatus's hold of that length by up to "
                "+25 ns [+6, +37] at 4 KiB (analysis/bench/hold_by_size.py); read +0.967 to +1.040 so far"),
    KnownDefect("G", "G", True, 0.0, 0.03,
                "shm copies a rendezvous message more slowly after the long wait G adds (a colder cache), "
                "so g(m) grows by the host's slower copy besides (m-1)G: 1-2 % of G"),
    KnownDefect("G", "G_T", True, 0.0, 0.03,
                "shm copies a rendezvous message more slowly after the long wait G adds (a colder cache), "
                "so T(m) grows by the host's slower copy besides (m-1)G: 1-2 % of G"),
)


def known_defect(knob, parameter, deviation, set_value, reach=None):
    """The KnownDefect that explains `parameter` reading `deviation` (reading - expectation,
    in its unit; `reach`: its interval's end nearest the expectation, likewise) from its
    expectation when `knob` is set to `set_value`, or None."""
    for defect in KNOWN_DEFECTS:
        if (defect.knob, defect.parameter) == (knob, parameter) and defect.explains(deviation, set_value, reach):
            return defect
    return None
