"""Parser for the report NPB benchmarks print, and for custom commands' output.

Works on our kernels (loggp-npb-*) and on NASA's binaries (cg.A.x), which
print the same lines, e.g. " Time in seconds =  1.23" and
" Verification    =      SUCCESSFUL".
"""
import re
from dataclasses import dataclass, field

_FIELD = re.compile(r"^\s*(Class|Size|Iterations|Time in seconds|Total processes|"
                    r"Active processes|Mop/s total|Mop/s/process|Operation type|"
                    r"Verification|Version)\s*=\s*(.*?)\s*$", re.MULTILINE)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eEdD][-+]?\d+)?")


@dataclass
class Report:
    time_seconds: float | None = None
    verified: bool | None = None      # None: no verification line
    fields: dict = field(default_factory=dict)
    matched: str | None = None        # the text the runtime was read from

    @property
    def klass(self):
        return self.fields.get("Class")

    @property
    def mops_total(self):
        return _number(self.fields.get("Mop/s total"))


def _number(text):
    if text is None:
        return None
    m = _NUMBER.search(text)
    if not m:
        return None
    # Fortran codes may print D exponents.
    return float(m.group(0).replace("D", "E").replace("d", "e"))


def parse_npb(text):
    """Parses NPB's report; missing lines leave fields None (never raises)."""
    report = Report()
    for m in _FIELD.finditer(text):
        # The first occurrence wins: NPB prints the block once, at the end.
        report.fields.setdefault(m.group(1), m.group(2))
    report.time_seconds = _number(report.fields.get("Time in seconds"))
    if report.time_seconds is not None:
        report.matched = f"Time in seconds = {report.fields['Time in seconds']}"
    verification = report.fields.get("Verification")
    if verification is not None:
        word = verification.split()[0].upper() if verification.split() else ""
        if word == "SUCCESSFUL":
            report.verified = True
        elif word in ("UNSUCCESSFUL", "FAILED", "NOT"):
            report.verified = False
        else:
            report.verified = None
    return report


def parse_custom(text, runtime_regex, success_regex=None):
    """Custom command: runtime from the first group of runtime_regex (seconds);
    verified when success_regex matches (None when no success_regex is given)."""
    report = Report()
    m = re.search(runtime_regex, text, re.MULTILINE)
    if m:
        group = m.group(1) if m.groups() else m.group(0)
        report.time_seconds = _number(group)
        report.matched = m.group(0)
    if success_regex is not None:
        report.verified = re.search(success_regex, text, re.MULTILINE) is not None
    return report
