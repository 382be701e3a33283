"""Where loggp's installed programs are: the installation prefix (the virtual
environment ./setup.sh made) first, then PATH. The one lookup every part uses."""
import os
import shutil
import sys
from pathlib import Path

from .command import CommandError


class MissingProgram(CommandError):
    """A program loggp needs is not installed; the message names it (exit 2)."""

    def __init__(self, message):
        super().__init__(message, exit_code=2)


def prefix_path(*parts):
    """A file of the installation prefix (the virtual environment)."""
    return Path(sys.prefix, *parts)


def find_program(name):
    candidate = prefix_path("bin", name)
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise MissingProgram(f"'{name}' not found in {prefix_path('bin')} or on PATH (run ./setup.sh)")
    return found
