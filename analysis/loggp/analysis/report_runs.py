"""How the study report names a run: its application, and the knobs its setting moved."""
import json

from loggp.harness.studyfile import ARMED_SWEEP
from loggp.harness import units
from loggp.harness.units import ARMED


def run_label(run):
    """A run's application as the curves name it (analyze.Curve.label)."""
    c = f" class {run['class']}" if run.get("class") else ""
    return f"{run['benchmark']}{c} np={run['np']}"


def run_setting(run):
    """The knobs a run moved: beyond zero, and beyond the armed step (the other knobs of a setting)."""
    if run.get("sweep") == ARMED_SWEEP:
        return "armed baseline (every knob at its smallest step)"
    knobs = json.loads(run["knobs"])
    moved = [f"{k}={v}" for k, v in knobs.items()
             if k not in ARMED or units.parse(k, v) not in (0.0, units.parse(k, ARMED[k]))]
    return " ".join(moved) or "baseline"
