"""How far a prediction is trusted (loggp.analysis.trust): the share explained, the
probe's intervals and the rounding that follows from them."""
import json

import pytest

from loggp.analysis import loggops, trust


def test_the_share_the_replay_explains_is_said_both_ways():
    assert trust.explained(47.0, 100.0).startswith("the replay explains 47 % of the traced time; the other 53 %")
    assert trust.explained(135.0, 100.0).startswith("the replay is 135 % of the traced time")
    assert "no length" in trust.explained(1.0, 0.0)


@pytest.mark.parametrize("value, low, high, shown", [
    (7.1234, None, None, "+7.1 %"),
    (0.012345, None, None, "+0.012 %"),
    (42.2, 41.3, 43.2, "+42.2 % (+41.3 .. +43.2 with the probe's intervals)"),  # half-spread 0.95
    (42.2, 40.0, 44.0, "+42 % (+40 .. +44 with the probe's intervals)"),
    (42.24, 42.19, 42.31, "+42.24 % (+42.19 .. +42.31 with the probe's intervals)"),
    (-3.0, None, None, "-3 %"),
])
def test_figures_keep_the_digits_their_inputs_support(value, low, high, shown):
    assert trust.show_percent(value, low, high) == shown


def test_the_probe_intervals_come_from_its_summary_size():
    probe = {"summary": {"o_s_us": 0.2, "o_r_us": 1.0, "g_us": 0.3, "L_us": 0.5, "G_ns_per_byte": 0.05,
                         "at_bytes": 8},
             "sizes": [{"bytes": 1, "o_s_us": {"median": 9, "ci95_half": 9}},
                       {"bytes": 8, "o_s_us": {"median": 0.2, "ci95_half": 0.02},
                        "o_r_us": {"median": 1.0, "ci95_half": 0.1}, "g_us": {"median": 0.3}}]}
    run = json.loads(json.dumps(probe))
    assert trust.probe_halves(run) == pytest.approx({"o_s": 20.0, "o_r": 100.0})
    low, high = trust.corners(loggops.Params(o_s=200.0, o_r=1000.0, g=300.0, L=500.0), trust.probe_halves(run))
    assert (low.o_s, low.o_r, low.g, high.o_s, high.o_r, high.L) == pytest.approx((180, 900, 300, 220, 1100, 500))
    assert trust.probe_halves({}) == {} and trust.probe_halves(None) == {}


def test_a_replay_the_length_of_the_traced_run_explains_all_of_it():
    assert trust.explained(100.0, 100.0).startswith("the replay explains 100 % of the traced time; the other 0 %")


def test_an_interval_without_spread_keeps_three_significant_digits():
    assert trust.show_percent(42.2, 42.2, 42.2) == "+42.2 % (+42.2 .. +42.2 with the probe's intervals)"
    assert trust.show_percent(1.234, 1.234, 1.234) == "+1.23 % (+1.23 .. +1.23 with the probe's intervals)"


def test_a_zero_half_width_is_an_interval_and_no_corner_goes_below_zero():
    probe = {"summary": {"at_bytes": 8}, "sizes": [{"bytes": 8, "o_s_us": {"median": 0.01, "ci95_half": 0.02},
                                                    "g_us": {"median": 0.3, "ci95_half": 0.0}}]}
    halves = trust.probe_halves(probe)
    assert halves == pytest.approx({"o_s": 20.0, "g": 0.0})
    low, high = trust.corners(loggops.Params(o_s=10.0, o_r=1000.0, g=300.0, L=500.0), halves)
    assert (low.o_s, high.o_s, low.g, high.g) == pytest.approx((0.0, 30.0, 300.0, 300.0))
