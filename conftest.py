"""Fixtures for every test in the repository: a private knob file per test,
so a user's own knobs never leak in. Helpers live in tests/testkit.py."""
import pytest

from loggp.knobs import ENVIRONMENT

KNOB_VARIABLES = (*ENVIRONMENT.values(), "LOGGP_ENGINE", "LOGGP_PROFILE", "LOGGP_QUIET", "LOGGP_LIVE",
                  "LOGGP_ROUTE", "LOGGP_TEST_CLOCK_SKEW")


@pytest.fixture(autouse=True)
def private_knob_file(tmp_path, monkeypatch):
    path = tmp_path / "loggp-config" / "knobs"
    monkeypatch.setenv("LOGGP_KNOB_FILE", str(path))
    for name in KNOB_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return path
