"""Slowdown against L's jitter (analysis/loggp/analysis/jitter_report.py) from
hand-made runs: spreads in order, slowdowns over the baseline, ratios to the
constant L, and a figure drawn from them."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from loggp.analysis import jitter_report  # noqa: E402


def run(sweep, seconds, jitter=None, bench="cg", status="ok"):
    knobs = {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "10us" if jitter else "0ns"}
    if jitter:
        knobs["L_jitter"] = jitter
    return {"benchmark": bench, "np": 4, "class": "S", "sweep": sweep, "status": status,
            "runtime_seconds": seconds, "knobs": json.dumps(knobs)}


RUNS = ([run("baseline", 2.0) for _ in range(3)]
        + [run("L_jitter", t, "normal:4us") for t in (3.0, 3.0, 3.0)]
        + [run("L_jitter", t, "none") for t in (2.4, 2.4)]
        + [run("L_jitter", t, "normal:1us") for t in (2.5, 2.5)]
        + [run("L_jitter", 99.0, "normal:1us", status="timeout")]
        + [run("L", 2.4)])


def test_points_ascend_by_spread_with_slowdowns_and_ratios_to_constant_L():
    curves = jitter_report.jitter_curves(RUNS)
    assert list(curves) == [("cg", 4, "S")]
    c = curves[("cg", 4, "S")]
    assert c["L"] == "10us"
    pts = c["points"]
    assert [p["jitter"] for p in pts] == ["none", "normal:1us", "normal:4us"]
    assert [p["spread_us"] for p in pts] == [0.0, 1.0, 4.0]
    assert [round(p["slowdown"], 6) for p in pts] == [1.2, 1.25, 1.5]
    assert [round(p["over_constant_L"], 6) for p in pts] == [1.0, round(2.5 / 2.4, 6), 1.25]
    assert pts[1]["runs"] == 2  # the timed-out run is left out


def test_no_jitter_runs_or_no_baseline_give_no_curve():
    assert jitter_report.jitter_curves([r for r in RUNS if r["sweep"] != "L_jitter"]) == {}
    assert jitter_report.jitter_curves([r for r in RUNS if r["sweep"] != "baseline"]) == {}


def test_rows_and_figure(tmp_path):
    curves = jitter_report.jitter_curves(RUNS)
    rows = jitter_report.rows(curves)
    assert len(rows) == 3 and len(rows[0]) == len(jitter_report.HEADER)
    fig = jitter_report.figure(curves, plt)
    fig.savefig(tmp_path / "j.png")
    assert (tmp_path / "j.png").stat().st_size > 1000
    assert "standard deviation" in fig.axes[0].get_xlabel()


def test_one_run_each_says_so_in_words_and_leaves_the_csv_cells_empty():
    runs = [run("baseline", 2.0), run("L_jitter", 3.0, "normal:4us"), run("L_jitter", 2.4, "none"),
            run("L_jitter", 2.4, "none")]
    curves = jitter_report.jitter_curves(runs)
    low_high = jitter_report.HEADER.index("low"), jitter_report.HEADER.index("high")
    for words, one_each, baseline_once in ((False, (None, None), (None, None)),
                                           (True, ("one run each: no interval", None),
                                            ("2 runs over 1 baseline run: a single run gives no interval", None))):
        by_jitter = {row[4]: row for row in jitter_report.rows(curves, words=words)}
        assert tuple(by_jitter["normal:4us"][i] for i in low_high) == one_each
        assert tuple(by_jitter["none"][i] for i in low_high) == baseline_once
    fig = jitter_report.figure(curves, plt)  # no error bar where there is no interval
    plt.close(fig)
