"""Shared pytest fixtures: where the build and the installed tools are, and a
private knob file for every test so a user's own knobs never leak in."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


def build_dir():
    return Path(os.environ.get("LOGGP_BUILD_DIR", ROOT / "build"))


def installed(name):
    """Path of an installed loggp tool, or a skip-free failure if missing."""
    path = shutil.which(name)
    if not path:
        pytest.fail(f"'{name}' is not on PATH: run ./setup.sh (its bin/ must be on PATH)")
    return path


def built(relative):
    path = build_dir() / relative
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (./setup.sh), or set LOGGP_BUILD_DIR")
    return path


@pytest.fixture(autouse=True)
def private_knob_file(tmp_path, monkeypatch):
    path = tmp_path / "loggp-config" / "knobs"
    monkeypatch.setenv("LOGGP_KNOB_FILE", str(path))
    for name in ("LOGGP_OS", "LOGGP_OR", "LOGGP_GAP", "LOGGP_GAP_PER_BYTE", "LOGGP_LATENCY", "LOGGP_ENGINE",
                 "LOGGP_PROFILE", "LOGGP_QUIET", "LOGGP_LIVE"):
        monkeypatch.delenv(name, raising=False)
    return path


def run(cmd, timeout=120, env=None, check=False, **kw):
    """Runs a command, capturing text output; never hangs a test run."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=full_env, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc
