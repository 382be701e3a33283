"""Helpers for loggp's tests: where the build and the installed tools are,
and a subprocess runner that never hangs a test run."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def build_dir():
    return Path(os.environ.get("LOGGP_BUILD_DIR", ROOT / "build"))


def installed(name):
    """Path of an installed loggp tool; the test fails (not skips) if it is missing."""
    # The venv's own first: Debian's mpich/openmpi put mpiexec and mpicc in /usr/bin too.
    path = shutil.which(name, path=os.path.join(sys.prefix, "bin")) or shutil.which(name)
    if not path:
        pytest.fail(f"'{name}' is not on PATH: run ./setup.sh (its bin/ must be on PATH)")
    return path


def built(relative):
    path = build_dir() / relative
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (./setup.sh), or set LOGGP_BUILD_DIR")
    return path


def run(cmd, timeout=120, env=None, check=False, **kw):
    """Runs a command, capturing text output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=full_env, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def figures(proc):
    """The `name = value` lines a test program (loggp-timing) prints, after checking it succeeded."""
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    out = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = float(value)
    return out
