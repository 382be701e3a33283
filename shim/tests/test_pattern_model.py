"""LogGP's prediction for each of `loggp bench`'s patterns (shim/loggp/shim/pattern_model.py) on
synthetic figures: what each knob adds to ping-pong, window, exchange and compute, and the goals'
tolerances and floors."""
import pytest

from loggp.knobs.params import LogGP
from loggp.shim import pattern_model as model

W = model.WINDOW


def synthetic(size=8, g_machine=240.0, one_way=650.0, ack=650.0, exchange=700.0, compute_ns=5000.0,
              compute_interval=5300.0):
    """Zero-knob figures built from chosen machine parameters, so the model must recover them."""
    fixed = one_way + ack
    window = ((W - 1) * g_machine + fixed) / W
    compute = ((W - 1) * compute_interval + fixed + compute_ns) / W
    return model.Base(bytes=size, pingpong=one_way, window=window, exchange=exchange, compute=compute,
                      compute_ns=compute_ns, ack_halfrtt=ack)


def inc(pattern, base, **knobs):
    return model.predicted_increase(pattern, base, LogGP(**knobs))


def test_machine_gap_is_recovered_from_the_plain_window():
    assert model.machine_gap(synthetic(g_machine=240.0)) == pytest.approx(240.0)
    assert model.natural_interval(synthetic(compute_interval=5300.0), compute=True) == pytest.approx(5300.0)


@pytest.mark.parametrize("pattern", ["pingpong", "window", "exchange", "compute"])
def test_zero_knobs_predict_no_change(pattern):
    assert inc(pattern, synthetic()) == pytest.approx(0.0, abs=1e-9)


def test_overhead_adds_both_ends_to_one_way_patterns():
    base = synthetic()
    assert inc("pingpong", base, o_s=1000.0, o_r=1000.0) == pytest.approx(2000.0)
    assert inc("pingpong", base, o_s=3000.0) == pytest.approx(3000.0)
    assert inc("exchange", base, o_s=1000.0, o_r=1000.0) == pytest.approx(2000.0)


def test_overhead_adds_w_plus_3_over_w_per_streamed_message():
    # (W-1) pipelined messages pay max(o_s, o_r) each; the first and the ack pay o_s + o_r each
    base = synthetic()
    assert inc("window", base, o_s=10000.0, o_r=10000.0) == pytest.approx(10000.0 * (W + 3) / W)
    assert inc("compute", base, o_s=10000.0, o_r=10000.0) == pytest.approx(10000.0 * (W + 3) / W)


def test_latency_adds_to_each_one_way_trip_and_only_2L_per_window_to_a_stream():
    base = synthetic()
    assert inc("pingpong", base, L=10000.0) == pytest.approx(10000.0)
    assert inc("exchange", base, L=10000.0) == pytest.approx(10000.0)
    assert inc("window", base, L=10000.0) == pytest.approx(2 * 10000.0 / W)
    assert inc("compute", base, L=10000.0) == pytest.approx(2 * 10000.0 / W)


def test_gap_is_a_minimum_spacing_not_an_addition():
    base = synthetic(g_machine=240.0, one_way=650.0)
    # round trip 1.3 us: longer than g_total = 1.24 us, so the ping-pong is unaffected
    assert inc("pingpong", base, g=1000.0) == pytest.approx(0.0)
    # g_total 5.24 us > round trip: one g_total per round trip (measured: about 2.6-2.7 us a half)
    assert model.pingpong(base, LogGP(g=5000.0)) == pytest.approx(5240.0 / 2)
    # a stream's interval becomes g_total once it is longer than the natural one
    assert model.stream(base, LogGP(g=10000.0)) == pytest.approx(10240.0)
    assert model.exchange(base, LogGP(g=10000.0)) == pytest.approx(10240.0)
    assert inc("exchange", base, g=100.0) == pytest.approx(0.0)


def test_a_given_machine_gap_replaces_the_windows():
    # an apparatus counting only its injector's busy time: g_total = 100 ns + g
    base = model.Base(**{**synthetic(g_machine=240.0).__dict__, "g_machine": 100.0})
    assert model.machine_gap(base) == 100.0
    assert model.stream(base, LogGP(g=10000.0)) == pytest.approx(10100.0)
    assert model.pingpong(base, LogGP(g=5000.0)) == pytest.approx(5100.0 / 2)
    assert inc("window", base) == pytest.approx(0.0)


def test_computation_hides_a_gap_shorter_than_it():
    base = synthetic(compute_interval=5300.0)
    assert inc("compute", base, g=1000.0) == pytest.approx(0.0)
    assert model.stream(base, LogGP(g=10000.0), compute=True) == pytest.approx(10240.0)


def test_bytes_add_k_minus_1_G_per_message_and_to_each_one_way_time():
    size, per_byte = 4096, 10000.0 / 4095
    base = synthetic(size=size, g_machine=900.0, one_way=1500.0, exchange=1600.0)
    assert inc("pingpong", base, G=per_byte) == pytest.approx(10000.0)
    assert inc("exchange", base, G=per_byte) == pytest.approx(10000.0)
    # the gap carries the bytes; the 8-byte ack adds 7 G once per window
    assert inc("window", base, G=per_byte) == pytest.approx(10000.0 + 7 * per_byte / W)


def test_tolerances_follow_the_goals():
    assert model.tolerance("o", 20000.0, 8) == pytest.approx(400.0)
    assert model.tolerance("o", 2000.0, 8) == pytest.approx(100.0)
    assert model.tolerance("L", 31.25, 8) == pytest.approx(100.0)
    assert model.tolerance("g", 10000.0, 8) == pytest.approx(200.0)
    assert model.tolerance("g", 984.0, 8) == pytest.approx(19.68)
    assert model.tolerance("G", 10000.0, 4096) == pytest.approx(200.0)
    assert model.tolerance("G", 10000.0, 1024) is None
    assert model.tolerance("L", 0.0, 8) == pytest.approx(100.0)  # a pattern the knob should not move
    with pytest.raises(ValueError, match="'x'"):
        model.tolerance("x", 5000.0, 8)


def test_one_side_of_the_overhead_alone_adds_w_plus_1_over_w_per_streamed_message():
    # either stage alone is the slower one: (W-1) pipelined messages pay it, and the last
    # message and the ack once each
    base = synthetic()
    assert inc("window", base, o_r=10000.0) == pytest.approx(10000.0 * (W + 1) / W)
    assert inc("window", base, o_s=10000.0) == pytest.approx(10000.0 * (W + 1) / W)


def test_a_window_faster_than_its_fixed_part_has_no_interval_and_a_given_zero_gap_is_kept():
    # W messages in less time than one round trip and the ack: no room between injections
    fast = model.Base(bytes=8, pingpong=650.0, window=10.0, exchange=700.0, compute=5300.0,
                      compute_ns=5000.0, ack_halfrtt=650.0)
    assert model.natural_interval(fast, False) == 0.0
    # under g the window's W injections are g apart: W g a window, where it was the fixed part
    fixed = fast.pingpong + fast.ack_halfrtt
    assert model.stream(fast, LogGP(g=10000.0)) == pytest.approx(fast.window + (W * 10000.0 - fixed) / W)
    # an apparatus whose injector costs nothing: g_total is the knob alone, never the window's
    free = model.Base(**{**synthetic(g_machine=240.0).__dict__, "g_machine": 0.0})
    assert model.machine_gap(free) == 0.0
    assert model.stream(free, LogGP(g=10000.0)) == pytest.approx(10000.0)


def test_the_floor_applies_under_100_ns_only_and_a_spread_at_the_tolerance_is_steady():
    assert model.tolerance("g", 100.0, 8) == pytest.approx(2.0)   # 100 ns is moved by the knob: 2 %
    assert model.tolerance("g", 99.0, 8) == pytest.approx(100.0)
    assert model.tolerance("G", -100.0, 4096) == pytest.approx(2.0)
    assert not model.unsteady(20.0, 20.0) and model.unsteady(20.5, 20.0)
    assert model.baseline_spread([1000.0, 1300.0]) == pytest.approx(300.0)   # two rounds: a spread
