"""The apparatus's known defects: readings `loggp calibrate` resolves as missed on a quiet
machine whose cause is known. Each stays *missed* (it is a real, repeatable error) and is
named in one line beside its verdict; docs/benchmarks.md ("Known defects") says more."""
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownDefect:
    knob: str        # the knob set
    parameter: str   # the reading it moves
    above: bool      # True: it reads above its expectation; False: below
    line: str        # what it is, in one line


KNOWN_DEFECTS = (
    KnownDefect("L", "g", False,
                "L holds hand completions over from the provider in batches, so a receiver-bound stream "
                "pays the provider's per-read cost less often and runs up to ~0.1 us a message faster"),
    KnownDefect("G", "G", True,
                "shm copies a rendezvous message more slowly after the long wait G adds (a colder cache), "
                "so g(m) grows by the host's slower copy besides (m-1)G: 1-2 % of G"),
    KnownDefect("G", "G_T", True,
                "shm copies a rendezvous message more slowly after the long wait G adds (a colder cache), "
                "so T(m) grows by the host's slower copy besides (m-1)G: 1-2 % of G"),
)


def known_defect(knob, parameter, above):
    """The KnownDefect that explains `parameter` reading above (or below) its expectation
    when `knob` is set, or None."""
    for defect in KNOWN_DEFECTS:
        if (defect.knob, defect.parameter, defect.above) == (knob, parameter, bool(above)):
            return defect
    return None
