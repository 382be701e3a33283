"""The host's response to waiting (loggp.analysis.host_response): a share measured on a
program's other settings, never on the one it predicts, taken only when resolved above zero."""
import math

import pytest

from loggp.analysis import emulation_table as et
from loggp.analysis import host_response as hr
from loggp.experiments import precision


def test_the_shares_come_from_the_other_knobs_each_over_its_own_prediction():
    computation = {"o": [0.02, 0.04], "L": [0.03], "G": [0.5]}
    predicted = {"o": 0.2, "L": 0.1, "G": 1.0}
    assert sorted(hr.shares(computation, predicted, "G")) == pytest.approx([0.1, 0.2, 0.3])
    # the predicted knob's own pairs never enter its share
    assert 0.5 not in hr.shares(computation, predicted, "G")
    assert sorted(hr.shares(computation, predicted, "o")) == pytest.approx([0.3, 0.5])
    assert hr.response({"L": [0.03]}, {"L": 0.1}, "L") is None


def test_a_share_needs_two_other_settings_with_pairs():
    predicted = {"o": 0.2, "L": 0.1, "G": 1.0}
    # one other setting would carry its own cause: no share
    assert hr.response({"o": [0.02, 0.04], "G": [0.5]}, predicted, "G") is None
    # two others, but one of them without a pair, or without a prediction: still one
    assert hr.response({"o": [0.02], "L": [], "G": [0.5]}, predicted, "G") is None
    assert hr.response({"o": [0.02], "L": [0.03], "G": [0.5]}, {"o": 0.2, "G": 1.0}, "G") is None
    share = hr.response({"o": [0.02], "L": [0.03], "G": [0.5]}, predicted, "G")
    assert share.n == 2 and share.estimate == pytest.approx(0.2)


def test_the_share_is_the_median_with_its_order_statistics_interval():
    computation = {"o": [0.01 * i for i in range(1, 6)], "G": [0.01 * i for i in range(6, 10)], "L": [9.0] * 9}
    share = hr.response(computation, {"o": 0.1, "G": 0.1, "L": 1.0}, "L")
    assert share.estimate == pytest.approx(0.5) and share.n == 9
    assert share.low == pytest.approx(0.2) and share.high == pytest.approx(0.8)


@pytest.mark.parametrize("share,taken", [
    (precision.Interval(0.2, 0.1, 0.3, 9), True),
    (precision.Interval(0.2, 0.0, 0.3, 9), False),             # touches zero: not resolved
    (precision.Interval(-0.1, -0.2, -0.05, 9), False),         # a computation that shrank
    (precision.Interval(0.2, -math.inf, math.inf, 3), False),  # too few pairs for an interval
    (None, False)])
def test_only_a_share_resolved_above_zero_changes_the_prediction(share, taken):
    assert hr.resolved(share) is taken
    grown = hr.with_response(2.0, share)
    assert grown == ((2.4, 2.2, 2.6) if taken else (2.0, 2.0, 2.0))


def test_the_error_of_a_ranged_prediction_is_zero_where_the_ranges_meet_else_at_the_corners():
    emulated = precision.Interval(1.0, 0.9, 1.1, 9)
    assert et.error_range(1.2, emulated, 1.05, 1.3)[0] == 0.0
    low, high = et.error_range(1.3, emulated, 1.2, 1.4)
    assert low == pytest.approx(1.2 / 1.1 - 1) and high == pytest.approx(1.4 / 0.9 - 1)
    below = et.error_range(0.7, emulated, 0.6, 0.8)
    assert below == (pytest.approx(1 - 0.8 / 0.9), pytest.approx(1 - 0.6 / 1.1))
    # no range given: the prediction alone, as before
    assert et.error_range(1.3, emulated) == (pytest.approx(1.3 / 1.1 - 1), pytest.approx(1.3 / 0.9 - 1))
