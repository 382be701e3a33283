"""Martin's figure set and the T0 + n/B view (analysis/loggp/analysis/figure_set.py):
which knob each panel shows, the regime split of a size histogram, and
figures that exist and are not empty."""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from loggp.analysis import analyze, figure_set, stats  # noqa: E402

REGIMES = [{"m_min": 4097, "m_max": 1 << 20, "T0_us": 3.0, "B_bytes_per_us": 9000.0},
           {"m_min": 0, "m_max": 4096, "T0_us": 1.0, "B_bytes_per_us": 3000.0}]


def curve(knob, label_bench="cg", slope=2.0):
    points = [analyze.Point(value=v, n=3, median_s=1.0 + v * slope / 100, slowdown=1.0 + v * slope / 100,
                            low=0.99 + v * slope / 100, high=1.01 + v * slope / 100, model=1.0 + v * slope / 200)
              for v in (0.0, 10.0, 50.0)]
    c = analyze.Curve(benchmark=label_bench, np=2, klass="S", knob=knob, baseline_s=1.0, points=points)
    c.fit = stats.linear_fit([p.value for p in points], [100 * (p.slowdown - 1) for p in points])
    return c


def test_panels_take_o_or_one_overhead_and_say_what_was_not_swept():
    curves = [curve("o_r"), curve("L"), curve("G", "mg")]
    panels = figure_set.panels_for(curves, "cg class S np=2")
    assert panels["o"].knob == "o_r" and panels["L"].knob == "L"
    assert panels["g"] is None and panels["G"] is None  # mg's G is another application's
    assert figure_set.applications(curves) == ["cg class S np=2", "mg class S np=2"]


def test_a_size_histogram_splits_over_the_regimes_by_mean_size():
    profile = {"ranks": [{"sent": {"by_size": [{"min_bytes": 8, "max_bytes": 15, "messages": 10, "bytes": 80},
                                               {"min_bytes": 4096, "max_bytes": 8191, "messages": 4,
                                                "bytes": 4 * 5600}]}},
                         {"sent": {"by_size": [{"min_bytes": 8, "max_bytes": 15, "messages": 6, "bytes": 48}]}}]}
    hist = figure_set.size_histogram(profile)
    assert hist == [(8, 15, 16, 128), (4096, 8191, 4, 22400)]
    # regimes are sorted by size whatever order the calibration lists them in
    assert figure_set.split_by_regime(hist, REGIMES) == [(0, 16, 128), (1, 4, 22400)]
    assert figure_set.T_us(3000, REGIMES) == 1.0 + 3000 / 3000.0
    assert figure_set.regime_of(1 << 22, REGIMES) == 1  # past the last regime: the last


def test_the_figures_exist_and_are_not_empty(tmp_path):
    curves = [curve("o"), curve("g"), curve("L"), curve("G")]
    fig = figure_set.figure(curves, "cg class S np=2", plt)
    assert len(fig.axes) == 4 and all(ax.lines or ax.collections for ax in fig.axes)
    fig.savefig(tmp_path / "set.png")
    run = {"sweep": "baseline", "status": "ok", "profile": json.dumps(
        {"ranks": [{"sent": {"by_size": [{"min_bytes": 8, "max_bytes": 15, "messages": 3, "bytes": 24}]}}]})}
    profiles = figure_set.baseline_profile([run, dict(run, sweep="L")], lambda r: "cg class S np=2")
    for regimes in (REGIMES, None):
        fig = figure_set.t0_nb_figure(profiles, regimes, plt)
        fig.savefig(tmp_path / "t0nb.png")
        assert (tmp_path / "t0nb.png").stat().st_size > 5000
    assert (tmp_path / "set.png").stat().st_size > 5000


def test_an_application_of_collectives_only_is_said_so():
    profile = {"ranks": [{"sent": {"by_size": []}, "collectives": {"MPI_Alltoall": {"calls": 4, "bytes": 4096}}}]}
    assert figure_set.no_point_to_point(profile).startswith("collectives only: 4 calls on rank 0, 1024 bytes")
    assert figure_set.no_point_to_point({"ranks": [{"sent": {"by_size": []}}]}) == "no messages in the profile"
