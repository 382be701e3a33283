"""The prediction check's kept state (loggp.analysis.emulation_check, --state): what a state
must have been measured with to go on, where it is kept, and reading it back. The check
writes it atomically after each round, so a killed check goes on where it was."""
import json
from pathlib import Path

from loggp.knobs.files import write_text_atomic


class StateError(Exception):
    """A kept state that cannot be gone on from: not one, damaged, or of other arguments."""


STATE_VERSION = 1


def check_arguments(programs, np_, klass, settings, goal, machine):
    """What a kept state must have been measured with to go on: rounds under other
    arguments are other figures."""
    return {"programs": [[p.name, list(p.argv)] for p in programs], "np": np_, "class": klass,
            "settings": dict(settings), "precision": goal.text(), "machine": machine}


def state_path(state, out):
    """--state, else beside --out (its name with .state.json), else None: not kept."""
    if state:
        return Path(state)
    return Path(out).with_suffix(".state.json") if out else None


def write_state(path, arguments, elapsed_s, entries):
    """The state, whole or not at all: the arguments, the time spent, each program's entry."""
    write_text_atomic(path, json.dumps({"version": STATE_VERSION, "arguments": arguments,
                                        "elapsed_s": elapsed_s, "checks": entries}) + "\n")


def load_state(path, arguments):
    """The state kept at path by a check of the same arguments, or None when there is none yet;
    CheckError when the file is not such a state or was kept for other arguments."""
    if path is None or not path.exists():
        return None
    try:
        saved = json.loads(path.read_text())
        version = saved.get("version") if isinstance(saved, dict) else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StateError(f"--state {path}: not a state this check kept ({e}); delete it or name another "
                         "file") from None
    if version != STATE_VERSION or not isinstance(saved.get("arguments"), dict):
        raise StateError(f"--state {path}: not a state this check kept (version {version!r}, this check's is "
                         f"{STATE_VERSION}); delete it or name another file")
    for key, here in arguments.items():
        there = saved["arguments"].get(key)
        if there != here:
            raise StateError(f"--state {path}: kept for other arguments ({key} {json.dumps(there)} there, "
                             f"{json.dumps(here)} here); run those again to go on, or delete it or name "
                             "another file")
    checks, elapsed = saved.get("checks"), saved.get("elapsed_s")
    if (not isinstance(checks, list) or len(checks) != len(arguments["programs"])
            or not isinstance(elapsed, (int, float)) or not elapsed >= 0):
        raise StateError(f"--state {path}: damaged (one entry per program and the time spent expected); "
                         "delete it or name another file")
    return saved


FAILED = {"failed": True}   # a program's entry in the state once a run of it kept failing
