"""Where loggp's installed programs are: the installation prefix (the virtual
environment ./setup.sh made) first, then PATH. The one lookup every part uses,
so a command started as .venv/bin/loggp, without the venv activated, finds the
venv's mpiexec, kernels and tools as an activated shell would."""
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


def which(name, path=None):
    """The executable a bare program name stands for: the prefix's bin/ first, then
    path (default $PATH); None if neither has it."""
    return shutil.which(name, path=str(prefix_path("bin"))) or shutil.which(name, path=path)


def find_program(name):
    found = which(name)
    if not found:
        raise MissingProgram(f"'{name}' not found in {prefix_path('bin')} or on PATH (run ./setup.sh)")
    return found
