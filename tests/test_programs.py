"""Every command finds the venv's programs the same way, activated or not: the
venv's bin/ first, then PATH (loggp.knobs.programs)."""
import os
import sys

from tests.testkit import run

VENV_BIN = os.path.join(sys.prefix, "bin")
# PATH as in a shell where the venv is not activated
BARE_PATH = "/usr/bin:/bin"


def test_which_looks_in_the_venv_before_path(monkeypatch):
    from loggp.knobs.programs import which
    monkeypatch.setenv("PATH", BARE_PATH)
    assert which("loggp-npb-is") == os.path.join(VENV_BIN, "loggp-npb-is")
    assert which("sh") == "/usr/bin/sh" or which("sh") == "/bin/sh"
    assert which("no-such-program-anywhere") is None


def test_a_study_finds_the_venvs_kernels_without_activation(monkeypatch):
    from loggp.harness import studyfile
    monkeypatch.setenv("PATH", BARE_PATH)
    assert studyfile._missing_program("loggp-npb-is") is None
    assert "neither in" in studyfile._missing_program("loggp-npb-nothing")


def test_run_starts_the_venvs_program_by_its_path_without_activation():
    loggp = os.path.join(VENV_BIN, "loggp")
    proc = run([loggp, "run", "-n", "2", "--dry-run", "--", "loggp-npb-is", "S"], env={"PATH": BARE_PATH})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(f" {VENV_BIN}/loggp-npb-is S")
    # activated, PATH finds the same file: the name stays as given
    proc = run([loggp, "run", "-n", "2", "--dry-run", "--", "loggp-npb-is", "S"],
               env={"PATH": f"{VENV_BIN}:{BARE_PATH}"})
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith(" -n 2 loggp-npb-is S"), proc.stdout
