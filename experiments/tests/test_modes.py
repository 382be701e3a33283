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


def test_each_median_comes_with_its_spread_an_interval_or_the_range_of_few_rounds(tmp_path):
    from loggp.experiments import modes, precision
    many = [1000.0 + 10 * i for i in range(precision.MIN_SAMPLES + 4)]
    cells = {("send", 8): {"oneway_ns": [3000.0, 1000.0, 2000.0], "roundtrip_ns": [4000.0, 6000.0, 5000.0]},
             ("isend", 8): {"oneway_ns": many, "roundtrip_ns": many}}
    rows = modes.table(cells, ["send", "isend"])
    send, isend = rows[0][1]["send"], rows[0][1]["isend"]
    assert send[:2] == (2.0, 5.0) and send[2] == ("min-max", 1.0, 3.0) and send[3] == ("min-max", 4.0, 6.0)
    interval = precision.median_interval([v / 1e3 for v in many])
    assert isend[2] == ("95 %", interval.low, interval.high)
    text = modes.render(rows, ["send", "isend"])
    assert "2.00 [1.00, 3.00]" in text and "5.00 [4.00, 6.00]" in text
    assert "the rounds' range" in text and "95 % interval" in text
    modes.write_outputs({"--json": str(tmp_path / "m.json"), "--csv": str(tmp_path / "m.csv")}, rows,
                        ["send", "isend"], [], 0)
    saved = json.loads((tmp_path / "m.json").read_text())["rows"][0]["send"]
    assert saved["oneway_spread_us"] == {"kind": "min-max", "low": 1.0, "high": 3.0}
    with open(tmp_path / "m.csv") as f:
        first = next(csv.DictReader(f))
    assert (first["oneway_low_us"], first["oneway_high_us"], first["spread"]) == ("1.0000", "3.0000", "min-max")
