"""The profile is written only when asked for: LOGGP_PROFILE unset or empty
leaves no file anywhere a profile could land and says nothing on stderr."""
from pathlib import Path

import pytest

from tests.testkit import built, installed, run


def profiles_under(*folders):
    return {p for folder in folders for p in Path(folder).glob("**/profile.*.json")}


@pytest.mark.parametrize("engine", ["libfabric", "pmpi"])
def test_an_empty_profile_variable_writes_no_profile(tmp_path, engine):
    work = tmp_path / "work"
    work.mkdir()
    # an empty folder name would put profile.<rank>.json at the root or in the working folder
    root_before = set(Path("/").glob("profile.*.json"))
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--engine", engine, "--",
                built("shim/tests/loggp-test-timing"), "pingpong", "8", "10"],
               env={"LOGGP_PROFILE": ""}, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loggp" not in proc.stderr, proc.stderr
    assert not profiles_under(work, tmp_path)
    assert set(Path("/").glob("profile.*.json")) == root_before


def test_a_profile_lands_only_where_asked(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-timing"),
                "pingpong", "8", "10"], env={"LOGGP_PROFILE": str(out)}, cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "loggp" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["profile.0.json", "profile.1.json"]
    assert not profiles_under(work)
