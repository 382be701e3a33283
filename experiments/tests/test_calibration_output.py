"""The words of `loggp calibrate`'s report on hand-made summaries: times at their units' edges,
a cell's half-width, the closing sentence's reaches and the probe rows' L."""
from loggp.experiments import calibration_output as out
from loggp.experiments.precision import MET, UNRESOLVED


def test_a_time_takes_the_larger_unit_from_exactly_one_of_it():
    assert out.time_text(0.999) == "999 ns"
    assert out.time_text(1.0) == "1 us"
    assert out.time_text(999.0) == "999 us"
    assert out.time_text(1000.0) == "1 ms"


def test_a_cell_shows_the_farther_end_of_its_interval():
    # 2.0 in [1.5, 2.25]: 0.5 below, 0.25 above
    assert out._cell(2.0, 1.5, 2.25, "us") == "+2.000±0.500"
    assert out._cell(2.0, 1.75, 3.0, "us") == "+2.000±1.000"
    assert out._cell(2.0, None, 3.0, "us") == "+2.000"


def test_probe_rows_take_both_overheads_out_of_L():
    run = {"sizes": [{"bytes": 8, "T_us": {"median": 5.0}, "o_s_us": {"median": 1.0},
                      "o_r_us": {"median": 1.5}, "g_us": {"median": 0.5}}]}
    (r,) = out.probe_rows([("L", 1.0, run)])
    assert r["L_us"] == 2.5


def test_a_miss_that_did_not_repeat_is_said_apart_from_noise():
    unrepeated = out.advice("L", "L", "primary", UNRESOLVED, False, repeated=False)
    noisy = out.advice("L", "L", "primary", UNRESOLVED, False)
    assert "did not repeat" in unrepeated and "did not repeat" not in noisy
    assert out.advice("L", "L", "primary", MET, False) == ""


def _summary(readings):
    """One knob L (us) with one reading per (verdict, low, high) around an expectation of 10."""
    values = [float(i + 1) for i in range(len(readings))]
    s = {"unit": "us", "role": "primary", "expected": [10.0] * len(readings), "measured": [10.0] * len(readings),
         "low": [lo for _, lo, _ in readings], "high": [hi for _, _, hi in readings],
         "verdicts": [v for v, _, _ in readings], "set": values}
    return {"knobs": {"L": {"values": values, "unit": "us", "measures": {"L": s}, "crosstalk": {}}},
            "noise": {"L": {"median_abs": 0.05}}}


def test_the_closing_sentence_reaches_the_farther_end_and_the_median_unresolved_reach():
    # met: 0.05 above, 0.125 below: within 125 ns, not 50
    text = out.closing_sentence(_summary([(MET, 9.875, 10.05)]))
    assert "to within 125 ns" in text, text
    # unresolved reaches 0.25, 0.5 and 3 us (each its farther end): the middle one, 500 ns
    text = out.closing_sentence(_summary([(MET, 9.9, 10.1), (UNRESOLVED, 9.75, 10.1),
                                          (UNRESOLVED, 9.9, 10.5), (UNRESOLVED, 7.0, 10.2)]))
    assert "below about 500 ns" in text, text
