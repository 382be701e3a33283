"""`loggp bench`: bad input is refused by name; transparency measures the three modes
(without the library, zero knobs, armed) and writes them as JSON. Its figures are
benchmarks, so only their presence and sanity are asserted, never their size."""
import json

from tests.testkit import installed, run


def test_bad_value_is_refused_by_name():
    proc = run([installed("loggp"), "bench", "knobs", "--value-us", "-3"])
    assert proc.returncode == 2
    assert "-3" in proc.stderr


def test_bad_rounds_are_refused_by_name():
    proc = run([installed("loggp"), "bench", "transparency", "--rounds", "zero"])
    assert proc.returncode == 2
    assert "zero" in proc.stderr


def test_transparency_measures_all_three_modes(tmp_path):
    out = tmp_path / "t.json"
    proc = run([installed("loggp"), "bench", "transparency", "--rounds", "1", "--json", str(out)], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "armed" in proc.stdout
    result = json.loads(out.read_text())
    for figure in ("halfrtt_us", "rate_per_s"):
        for mode in ("plain", "loggp", "armed"):
            value = result[figure][mode]
            assert value > 0 and len(result[figure][f"{mode}_samples"]) == 1
    assert not (tmp_path / "t.json.tmp").exists()
