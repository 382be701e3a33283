"""`loggp probe --modes`: the blocking / non-blocking table has every mode and
size, positive times, its JSON, CSV and plot, and refuses bad input by name."""
import csv
import json

import pytest

from tests.testkit import installed, run


def probe(*args, timeout=180):
    return run([installed("loggp"), "probe", *args], timeout=timeout)


def test_the_table_has_every_mode_and_size_and_its_files(tmp_path):
    out = {k: tmp_path / f"m.{k}" for k in ("json", "csv", "png")}
    proc = probe("--modes", "all", "--sizes", "8,1K", "--reps", "5", "--rounds", "2",
                 "--json", out["json"], "--csv", out["csv"], "--plot", out["png"])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out["json"].read_text())
    assert result["modes"] == ["send", "ssend", "isend"]
    assert [r["bytes"] for r in result["rows"]] == [8, 1024]
    for row in result["rows"]:
        for mode in result["modes"]:
            assert row[mode]["oneway_us"] > 0 and row[mode]["roundtrip_us"] > 0, row
    with open(out["csv"]) as f:
        assert len(list(csv.DictReader(f))) == 2 * 3
    assert out["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out["png"].stat().st_size > 5000
    header = proc.stdout.splitlines()[1]
    assert "Send/Recv one-way" in header and "Ssend/Recv" in header and "Isend/Irecv+Wait" in header
    assert not list(tmp_path.glob("*.tmp.*"))


def test_a_mode_list_measures_those_modes_only(tmp_path):
    proc = probe("--modes", "isend", "--sizes", "8", "--reps", "3", "--rounds", "1", "--json", tmp_path / "m.json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["modes"] == ["isend"]


@pytest.mark.parametrize("args, named", [
    (["--modes", "bogus"], "--modes bogus: unknown mode 'bogus'"),
    (["--modes", "all", "--np", "3"], "got --np 3"),
    (["--modes", "all", "--window", "4"], "got '--window'"),
    (["--modes", "all", "--sizes", "8X"], "bad --sizes '8X'"),
    (["--modes", "all", "--json", "/no/such/folder/m.json"], "--json /no/such/folder/m.json"),
])
def test_bad_input_is_refused_by_name(args, named):
    proc = probe(*args)
    assert proc.returncode == 2 and named in proc.stderr, proc.stderr
