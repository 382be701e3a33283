"""Fixtures for every test in the repository: a private knob file per test,
so a user's own knobs never leak in, and no shm region of a rank an earlier test
killed left for a later one. Helpers live in tests/testkit.py."""
import pytest

from loggp.knobs import ENVIRONMENT
from loggp.shim import shm_regions
from tests.testkit import RUN_START, remove_leftover_mpich_segments

KNOB_VARIABLES = (*ENVIRONMENT.values(), "LOGGP_ENGINE", "LOGGP_PROFILE", "LOGGP_QUIET", "LOGGP_LIVE",
                  "LOGGP_ROUTE", "LOGGP_TEST_CLOCK_SKEW", "LOGGP_L_JITTER", "LOGGP_O_JITTER", "LOGGP_SEED",
                  "LOGGP_SCOPE", "LOGGP_TRACE", "LOGGP_TOPOLOGY", "LOGGP_RANKS_PER_NODE", "LOGGP_L_INTER",
                  "LOGGP_G_INTER")


@pytest.fixture(autouse=True)
def private_knob_file(tmp_path, monkeypatch):
    path = tmp_path / "loggp-config" / "knobs"
    monkeypatch.setenv("LOGGP_KNOB_FILE", str(path))
    for name in KNOB_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture(autouse=True)
def no_region_of_a_killed_rank():
    # a later rank given a killed rank's PID would hang or crash in MPI_Init
    # (loggp.shim.shm_regions); only this run's own regions are touched, after
    # each test (before the first, this run has made none)
    yield
    shm_regions.remove_stale(since=RUN_START)


# ---- temporary root: one per pytest run -------------------------------------
# pytest's default root (/tmp/pytest-of-USER) is shared by every run of every
# checkout, and each run prunes the older numbered folders there: two runs at
# once could delete each other's files. Each run gets a fresh root of its own
# (unless --basetemp names one), removed when the run passes.
import shutil  # noqa: E402
import tempfile  # noqa: E402

_OWN_BASETEMP = []


def pytest_configure(config):
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        root = tempfile.mkdtemp(prefix="loggp-pytest-")
        config.option.basetemp = root
        _OWN_BASETEMP.append(root)


def pytest_unconfigure(config):
    failed = getattr(config, "_loggp_failed", True)
    for root in _OWN_BASETEMP:
        if not failed:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"pytest temporary files kept in {root}")


def pytest_sessionfinish(session, exitstatus):
    session.config._loggp_failed = exitstatus not in (0, 5)
    # a run killed or aborted by a test leaves MPICH's segments (a megabyte each) behind
    remove_leftover_mpich_segments()
