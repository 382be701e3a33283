"""Slowdown against the inter-node L and G (analysis/loggp/analysis/topology_report.py)
from hand-made runs: values in order, slowdowns over the baseline, a panel per
swept key."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from loggp.analysis import topology_report  # noqa: E402


def run(sweep, seconds, value=None, status="ok"):
    knobs = {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "0ns"}
    if value:
        knobs.update({sweep: value, "ranks_per_node": "2"})
    return {"benchmark": "cg", "np": 4, "class": "S", "sweep": sweep, "status": status,
            "runtime_seconds": seconds, "knobs": json.dumps(knobs)}


RUNS = ([run("baseline", 2.0) for _ in range(3)]
        + [run("L_inter", 3.0, "10us"), run("L_inter", 3.0, "10us"), run("L_inter", 2.2, "2us")]
        + [run("L_inter", 99.0, "2us", status="timeout"), run("G_inter", 2.5, "1ns/B")])


def test_points_ascend_by_value_with_slowdowns_over_the_baseline():
    curves = topology_report.topology_curves(RUNS)
    assert set(curves) == {("cg", 4, "S", "L_inter"), ("cg", 4, "S", "G_inter")}
    c = curves[("cg", 4, "S", "L_inter")]
    assert c["ranks_per_node"] == "2"
    assert [p["value"] for p in c["points"]] == ["2us", "10us"]
    assert [round(p["slowdown"], 6) for p in c["points"]] == [1.1, 1.5]
    assert c["points"][0]["runs"] == 1  # the timed-out run is left out
    assert topology_report.rows(curves)[0][:6] == ["cg", 4, "S", "L_inter", "2", "2us"]
    assert topology_report.rows(curves)[0][-2:] == [None, None]  # one run: no interval, empty cells
    assert topology_report.rows(curves, words=True)[0][-2].endswith("a single run gives no interval")


def test_the_figure_has_a_panel_per_swept_key(tmp_path):
    fig = topology_report.figure(topology_report.topology_curves(RUNS), plt)
    assert len(fig.axes) == 2
    assert {ax.get_xlabel() for ax in fig.axes} == {"L between nodes (us)", "G between nodes (ns/B)"}
    fig.savefig(tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 1000


def test_no_topology_runs_give_no_curve():
    assert topology_report.topology_curves([run("baseline", 2.0), run("L", 2.5)]) == {}
