"""The calibration's bulk range starts at BULK_MIN_BYTES itself: o, g and L are read
below it, G's slope from it up, and --sizes needs two sizes in it. Each side of the
switch is checked one byte away."""
import numpy as np
import pytest

from loggp.experiments import calibrate
from loggp.experiments.calibration_plan import BULK_MIN_BYTES, CalibrationError
from loggp.experiments.calibration_readings import _bulk_slope, _small

SIZES = np.array([64.0, BULK_MIN_BYTES - 1.0, float(BULK_MIN_BYTES), 2.0 * BULK_MIN_BYTES])


def test_the_small_sizes_stop_one_byte_below_the_bulk_minimum():
    assert _small(SIZES).tolist() == [True, True, False, False]


def test_the_slope_of_G_is_taken_from_the_bulk_minimum_up():
    # 2 ns/B over the bulk sizes; the size one byte below sits far off that line, so
    # taking it in (or leaving the minimum itself out) moves or refuses the slope
    y = 3.0 + 0.002 * (SIZES - 1)
    y[1] = 1000.0
    assert _bulk_slope(SIZES, y) == pytest.approx(2.0)


def test_sizes_need_two_at_or_above_the_bulk_minimum():
    assert calibrate.parse_sizes(f"64,{BULK_MIN_BYTES},{2 * BULK_MIN_BYTES}") == [64, BULK_MIN_BYTES,
                                                                                  2 * BULK_MIN_BYTES]
    with pytest.raises(CalibrationError, match=f">= {BULK_MIN_BYTES}"):
        calibrate.parse_sizes(f"64,{BULK_MIN_BYTES - 1},{2 * BULK_MIN_BYTES}")
