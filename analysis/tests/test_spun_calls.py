"""analysis/bench/spun_calls.c and loggp.analysis.spun_calls: a program's computation with
the o knobs against the same spins made by the program itself under plain MPI
(docs/prediction-against-emulation.md)."""
import numpy as np
import pytest

from loggp.analysis import spun_calls, trace
from loggp.experiments import precision
from tests.testkit import installed, run

SPIN_NS = 20000


def rounds_of(zero, o_growth, spun_growth, intervals=None):
    base = intervals or [np.array([100e3, 150e3]), np.array([120e3])]
    return [{"zero": {"computation_s": z, "length_s": 2 * z, "intervals": base},
             "o": {"computation_s": z + go, "length_s": 2 * z + 1.0, "intervals": base},
             "spun": {"computation_s": z + gs, "length_s": 2 * z + 0.9, "intervals": base}}
            for z, go, gs in zip(zero, o_growth, spun_growth)]


def test_intervals_are_the_times_between_calls_per_rank_in_rank_order():
    def fake(rank, spans, kinds=None):
        records = np.zeros(len(spans), dtype=trace.RECORD)
        records["start_ns"], records["end_ns"] = [a for a, _ in spans], [b for _, b in spans]
        records["kind"] = kinds or [trace.CALL] * len(spans)
        return trace.Trace(path=None, rank=rank, size=2, init_ns=0, finalize_ns=0, clock_offset_ns=0,
                           names=["MPI_Send"], records=records, records_offset=0)
    # a completion record between the calls is not a call: the interval spans it
    one = fake(1, [(0, 10), (12, 13), (40, 45)], [trace.CALL, trace.COMPLETE, trace.CALL])
    zero = fake(0, [(0, 5), (20, 30), (31, 35)])
    got = spun_calls.computation_intervals([one, zero])
    assert [list(g) for g in got] == [[15.0, 1.0], [30.0]]


def test_only_intervals_grown_by_more_than_the_threshold_are_counted_apart():
    zero = [np.array([100.0, 100.0, 100.0, 100.0]), np.array([200.0, 200.0])]
    other = [np.array([150.0, 100.0, 60.0, 251.0]), np.array([250.0, 200.0])]
    got = spun_calls.delayed_intervals(zero, other, 50.0)
    # grown by exactly 50 is not over 50; a shrunk one is among the rest
    assert got["share"] == pytest.approx(1 / 6)
    assert got["delayed_s"] == pytest.approx(151e-9 / 2)
    assert got["rest_s"] == pytest.approx((50 - 40 + 50) * 1e-9 / 2)


@pytest.mark.parametrize("other", [[np.array([1.0, 2.0])], [np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0])]])
def test_intervals_of_runs_whose_calls_differ_are_not_compared(other):
    zero = [np.array([1.0, 2.0]), np.array([1.0, 2.0])]
    assert spun_calls.delayed_intervals(zero, other, 1.0) is None
    assert spun_calls.long_interval_growth(zero, other, 0.5) is None


def test_long_intervals_grow_as_a_share_of_their_own_length_at_zero_knobs():
    # rank 0: a long interval 10 % slower, a short one late by a whole spin; rank 1: a long one
    # 20 % slower, and one exactly at the limit, which is not long
    zero = [np.array([1000.0, 50.0]), np.array([3000.0, 500.0])]
    other = [np.array([1100.0, 150.0]), np.array([3600.0, 900.0])]
    assert spun_calls.long_interval_growth(zero, other, 500.0) == pytest.approx(700.0 / 4000.0)
    # a slower program whose long intervals shrink elsewhere: growth is signed
    assert spun_calls.long_interval_growth(zero, [np.array([900.0, 50.0]), np.array([3000.0, 500.0])],
                                           500.0) == pytest.approx(-100.0 / 4000.0)
    assert spun_calls.long_interval_growth(zero, other, 5000.0) is None


def test_where_the_growth_sits_takes_half_the_spin_round_by_round():
    rounds = rounds_of([8.0] * 6, [0.4] * 6, [0.3] * 6)
    for i, r in enumerate(rounds):
        # each round, one of three o intervals grows by 60 us (over half of 100 us), another by 40
        r["o"]["intervals"] = [np.array([160e3 + i, 190e3]), np.array([120e3])]
    sits = spun_calls.where_growth_sits(rounds, 100e3)
    assert sits["o"]["share"].estimate == pytest.approx(1 / 3)
    assert sits["o"]["delayed_s"].estimate == pytest.approx((60e3 + 2.5) * 1e-9 / 2)
    assert sits["o"]["rest_s"].estimate == pytest.approx(40e3 * 1e-9 / 2)
    assert sits["spun"]["share"].estimate == 0
    # no interval reaches ten spins (1 ms); at a 10 us spin the 150 and 120 us ones are long, and
    # the 100 us one, exactly ten spins, is not
    assert sits["o"]["long_share"] is None
    long_ = spun_calls.where_growth_sits(rounds, 10e3)["o"]["long_share"]
    assert long_.estimate == pytest.approx(40e3 / 270e3)
    rounds[2]["spun"]["intervals"] = [np.array([1.0])]
    assert spun_calls.where_growth_sits(rounds, 100e3)["spun"] is None


def test_growth_is_paired_within_each_round():
    # zero knobs swing by 9 s from round to round while the growth creeps up: only pairs see it
    zero = [10.0, 1.0, 10.0, 1.0, 10.0, 1.0, 10.0]
    o_growth = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    spun_growth = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65]
    g = spun_calls.growth(rounds_of(zero, o_growth, spun_growth))
    assert g["o"].estimate == pytest.approx(0.4) and g["spun"].estimate == pytest.approx(0.35)
    assert g["o_minus_spun"].estimate == pytest.approx(0.05)
    assert (g["o"].low, g["o"].high) == pytest.approx((0.1, 0.7)) and g["o"].n == 7
    assert g["o_length"].estimate == pytest.approx(1.0) and g["spun_length"].estimate == pytest.approx(0.9)


def test_every_round_runs_each_mode_once_and_each_mode_leads_in_turn():
    orders = [spun_calls.round_order(r) for r in range(3)]
    assert all(sorted(o) == sorted(spun_calls.MODES) for o in orders)
    assert {o[0] for o in orders} == set(spun_calls.MODES)


def test_the_report_gives_intervals_only_from_enough_rounds():
    few = spun_calls.report("lu", "100us", rounds_of([8.0] * 3, [0.4] * 3, [0.3] * 3), 100, 100e3)
    assert f"no interval below {precision.MIN_SAMPLES} rounds" in few
    enough = rounds_of([8.0, 8.1, 7.9, 8.2, 7.8, 8.0], [0.40, 0.42, 0.38, 0.41, 0.39, 0.40], [0.3] * 6)
    text = spun_calls.report("lu", "100us", enough, 100, 100e3)
    assert "| o = 100us (the apparatus) | +400 ms [+380, +420] |" in text and "no interval" not in text
    assert "| o = 100us (the apparatus) | 0.0 % [0.0, 0.0] | +0 ms [+0, +0] | +0 ms [+0, +0] | none that long |" in text
    slower = spun_calls.report("lu", "10us", enough, 100, 10e3)
    assert "| o = 10us (the apparatus) | 0.0 % [0.0, 0.0] | +0 ms [+0, +0] | +0 ms [+0, +0] | +0.0 % [+0.0, +0.0] |" \
        in slower


@pytest.mark.parametrize("args, said", [(["--rounds", "0"], "--rounds 0"), (["--np", "1"], "--np 1"),
                                        (["--o", "0"], "--o"), (["--o", "fast"], "'fast'"),
                                        (["xx"], "'xx'")])
def test_bad_arguments_are_refused_by_name(args, said, capsys):
    try:
        status = spun_calls.main(args)
    except SystemExit as stop:  # argparse's own refusals
        status = stop.code
    assert status == 2 and said in capsys.readouterr().err


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return spun_calls.build_library(tmp_path_factory.mktemp("spun"))


def spun_run(library, folder, program):
    folder.mkdir()
    cmd, env = spun_calls.run_command("spun", 2, program, SPIN_NS, folder, library)
    proc = run(cmd, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return trace.read_folder(folder / "trace"), spun_calls.spun_totals(folder, 2)


def point_to_point_calls(t):
    names = t.call_names()[t.records["kind"] == trace.CALL]
    return int(np.isin(names, ["MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Irecv"]).sum())


def test_it_spins_once_per_send_and_receive_inside_the_traced_calls(library, tmp_path):
    # EP talks in collectives only: what it spins is the layer's own exchanges at MPI_Init
    ep_traces, ep_totals = spun_run(library, tmp_path / "ep", ["loggp-npb-ep", "S"])
    assert [point_to_point_calls(t) for t in ep_traces] == [0, 0]
    own = [spins for spins, _ in ep_totals]
    traces, totals = spun_run(library, tmp_path / "lu", ["loggp-npb-lu", "S"])
    for t, (spins, spun_ns), layers in zip(traces, totals, own):
        assert spins == point_to_point_calls(t) + layers and point_to_point_calls(t) > layers, (t.rank, spins)
        assert spun_ns >= spins * SPIN_NS
        calls = t.calls()
        inside = int((calls["end_ns"].astype("i8") - calls["start_ns"].astype("i8")).sum())
        assert inside >= spun_ns  # the spins fall inside the calls the trace records


def test_a_malformed_spin_is_refused_before_the_program_runs(library):
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", "loggp-npb-lu", "S"],
               env={"LD_PRELOAD": str(library), "SPUN_CALLS_NS": "1us"})
    assert proc.returncode != 0 and "SPUN_CALLS_NS='1us' is not a whole number of ns" in proc.stderr
