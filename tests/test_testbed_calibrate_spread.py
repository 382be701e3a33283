"""`loggp testbed calibrate`'s table gives the spread of its runs beside the least L (no
namespaces needed: the rows and the table from hand-made probe summaries)."""
import pytest

from loggp import testbed_calibrate as tc


def summaries(*Ls):
    return [{"L_us": L, "T_us": L + 10.0, "o_s_us": 1.0, "o_r_us": 1.0} for L in Ls]


def test_each_row_has_the_range_of_its_runs_and_of_its_error_per_round():
    runs = {"baseline": summaries(1.0, 1.5, 1.2), "libloggp": summaries(52.0, 49.0, 56.0), "netem": []}
    rows = tc.rows_of(runs, 50.0, "no qdisc")
    base, lib, netem = rows
    assert base["L_range_us"] == [1.0, 1.5] and "error_pct_range" not in base
    assert lib["L_us"] == 49.0 and lib["L_range_us"] == [49.0, 56.0]
    assert lib["error_pct"] == pytest.approx(-4.0)   # least L minus least baseline: 48 of 50
    # per round: 51/50, 47.5/50, 54.8/50 -> +2 %, -5 %, +9.6 %
    assert lib["error_pct_range"] == pytest.approx([-5.0, 9.6])
    assert "unavailable" in netem
    text = tc.report_text({"testbed": "t", "hosts": ["h0", "h1"], "repeat": 3, "rows": rows})
    assert "[49.000, 56.000]" in text and "[-5.0, 9.6]%" in text and "spread of the 3 runs" in text


def test_one_run_says_so_instead_of_a_range():
    rows = tc.rows_of({"baseline": summaries(1.0), "libloggp": summaries(49.0)}, 50.0, "")
    text = tc.report_text({"testbed": "t", "hosts": ["h0", "h1"], "repeat": 1, "rows": rows})
    assert text.splitlines()[-1].count("one run") == 2 and "[49.000, 49.000]" not in text
