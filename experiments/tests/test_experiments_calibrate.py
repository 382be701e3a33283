"""Calibration on synthetic probe results: a faithful apparatus meets its goals, broken ones
miss them, a noisy machine leaves them unresolved; the command writes its outputs and
verdicts; plus a smoke test through the real `loggp run`."""
import argparse
import csv
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from loggp.experiments import calibrate as cal
from loggp.experiments import precision as pr
from loggp.shim import machine_load
from exp_synthetic import synthetic_probe

SIZES = cal.CAL_SIZES


class Clock:
    """Each probe run costs `per_run` seconds of this clock."""
    def __init__(self, per_run=10.0):
        self.now, self.per_run = 0.0, per_run

    def __call__(self):
        return self.now


def fake_runner(scale=None, leak=None, noise_us=0.0, armed_cost_us=0.0, rounds=8, calls=None, clock=None, seed=11):
    rng = np.random.default_rng(seed)

    def runner(knob_sets, probe_args):
        if calls is not None:
            calls.append(([dict(k) for k in knob_sets], list(probe_args)))
        if clock is not None:
            clock.now += clock.per_run
        many = len(knob_sets) > 1
        return [synthetic_probe(SIZES, knobs=k, scale=scale, leak=leak, rng=rng, rounds=rounds if many else None,
                                round_noise_us=noise_us, armed_cost_us=armed_cost_us) for k in knob_sets]
    return runner


def run_analysis(sweeps=None, budget_s=600.0, clock=None, goal=pr.KNOB_PRECISION, **apparatus):
    sweeps = sweeps or cal.DEFAULT_SWEEPS
    clock = clock or Clock()
    summary, rows, _ = cal.calibrate(sweeps, fake_runner(clock=clock, **apparatus), [], None, goal, budget_s,
                                     clock=clock, log=lambda *_: None)
    return summary, rows


def verdicts(summary, knob, param):
    k = summary["knobs"][knob]
    return (k["measures"].get(param) or k["crosstalk"][param])["verdicts"]


def test_a_faithful_apparatus_meets_every_goal_in_one_run_per_knob():
    summary, rows = run_analysis()
    assert summary["verdict"] == pr.MET, [k["reasons"] for k in summary["knobs"].values()]
    for knob, k in summary["knobs"].items():
        assert k["verdict"] == pr.MET and k["reasons"] == [] and k["runs"] == 1, knob
        assert set(k["crosstalk"]) == set(cal.CROSSTALK[knob])
        assert k["values"] == [v for v in cal.DEFAULT_SWEEPS[knob] if v]
    assert summary["knobs"]["L"]["slope"]["estimate"] == pytest.approx(1.0, abs=1e-6)
    assert all(r["verdict"] == pr.MET and r["reason"] for r in rows)
    # every (knob, nonzero value, parameter) is a row
    expected = sum(len([v for v in vals if v]) * (len(cal.PRIMARY[k]) + len(cal.CROSSTALK[k]))
                   for k, vals in cal.DEFAULT_SWEEPS.items())
    assert len(rows) == expected and "pass" not in summary


def test_the_armed_layers_own_cost_cancels_and_is_reported():
    # 0.25 us per blocking receive whenever any knob is set: from a zero-knob baseline every
    # o_r reading would carry it (cross-talk of L and g, o read high); from the armed one it cancels
    summary, _ = run_analysis(cal.QUICK_SWEEPS, armed_cost_us=0.25)
    assert summary["verdict"] == pr.MET, [k["reasons"] for k in summary["knobs"].values()]
    cost = summary["armed_cost"]
    # armed minus zero knobs: the layer's cost and the knob's own 1 ns step
    assert cost["o_r"]["interval"]["estimate"] == pytest.approx(0.251, abs=1e-6)
    assert cost["o_s"]["interval"]["estimate"] == pytest.approx(0.001, abs=1e-6)
    assert "o_r +251 ns" in cal.report_text({**summary, "sentence": ""})


def test_o_knob_raising_the_burst_gap_is_not_cross_talk():
    # In LogP a burst cannot beat its overhead: g rises with o; g_excess must not.
    summary, rows = run_analysis({"o": [0, 10, 100]})
    assert summary["knobs"]["o"]["verdict"] == pr.MET
    g_rows = [r for r in rows if r["parameter"] == "g_excess"]
    assert all(abs(r["increase"]) < 1e-9 for r in g_rows)


def test_a_gap_knob_at_half_strength_is_missed():
    summary, rows = run_analysis(scale={"g": 0.5})
    g = summary["knobs"]["g"]
    assert g["verdict"] == pr.MISSED and summary["verdict"] == pr.MISSED
    assert pr.MISSED in g["measures"]["g"]["verdicts"]
    assert any(r.startswith("MISSED: g = 100 us: g read") and "less than set" in r for r in g["reasons"])
    for other in ("o", "L", "G"):
        assert summary["knobs"][other]["verdict"] == pr.MET, other


def test_gap_is_judged_as_a_minimum_spacing():
    # LogP: a stream whose natural interval is 0.6 us runs at max(0.6, g_machine + set);
    # the largest setting tells g_machine, the smaller ones are judged with it.
    g_machine = cal.machine_gap(10.0, 9.45, 0.6)
    assert g_machine == pytest.approx(0.05)
    assert cal.expected_increase("g", "g", 10.0, 0.6, g_machine) == pytest.approx(9.45)
    assert cal.expected_increase("g", "g", 1.0, 0.6, g_machine) == pytest.approx(0.45)
    assert cal.expected_increase("g", "g", 0.5, 0.6, g_machine) == 0.0  # below the stream's own interval
    # g_machine lies between 0 and the natural interval, so a weak or strong knob cannot hide
    assert cal.machine_gap(10.0, 5.0, 0.6) == 0.0
    assert cal.machine_gap(10.0, 20.0, 0.6) == 0.6
    # the other knobs add exactly their set value
    assert cal.expected_increase("L", "L", 10.0, 0.6, 0.3) == 10.0
    assert cal.expected_increase("o", "o_r", 10.0, 0.6, 0.3) == 10.0


def test_the_machines_gap_is_read_at_the_largest_g_setting_where_the_stream_is_gap_bound():
    # A LogP stream of natural interval ~0.8 us on a machine whose own gap is 0.3 us: a set
    # g of 0.2 us does not move it (0.5 < 0.8), 10 us makes it 10.3. Read at the small
    # setting, g_machine would be taken for the natural interval and 10 us expected to add 10.
    g_machine = 0.3

    def logp_stream(knob_sets, probe_args):
        probes = fake_runner()(knob_sets, probe_args)
        for knobs, probe in zip(knob_sets, probes):
            k = {p: 0.0 for p in ("o_s", "o_r", "g")}
            k.update(knobs)
            for entry in probe["sizes"]:
                cell = entry["g_us"]
                natural = cell["median"] - max(k["g"], k["o_s"], k["o_r"])
                shift = max(natural, g_machine + k["g"]) - cell["median"]
                cell["median"] += shift
                if "rounds_us" in cell:
                    cell["rounds_us"] = [x + shift for x in cell["rounds_us"]]
        return probes
    summary, _, _ = cal.calibrate({"g": [0, 0.2, 10]}, logp_stream, [], None, pr.KNOB_PRECISION, 600,
                                  clock=Clock(), log=lambda *_: None)
    g = summary["knobs"]["g"]
    # 10.3 less the small sizes' natural interval (0.8 us and their bytes)
    assert g["measures"]["g"]["measured"] == pytest.approx([0.0, 9.5], abs=0.05)
    assert g["measures"]["g"]["expected"] == pytest.approx(g["measures"]["g"]["measured"], abs=0.01)
    assert g["measures"]["g"]["verdicts"] == [pr.MET, pr.MET], g["reasons"]


def test_the_figure_draws_gs_own_expectation_not_y_equals_x():
    # a stream of natural interval 0.6 us on a machine whose own gap is 0.05 us
    curve = cal.expectation_curve("g", [1.0, 10.0], 0.6, 0.05)
    at = dict(zip(curve["x"], curve["y"]))
    assert at[0.5] == 0.0  # below the stream's natural interval a set gap costs nothing
    assert at[10.0] == pytest.approx(10 - 0.001 + 0.05 - 0.6)
    assert cal.expectation_curve("L", [1.0, 10.0], 0.6, 0.05)["y"][-1] == pytest.approx(10 - 0.001)
    summary, _ = run_analysis({"g": [0, 1, 10]})
    panel = cal.panel_contents("g", summary["knobs"]["g"])
    assert panel["expectation"] == summary["knobs"]["g"]["expectation"] and panel["title"] == "g: met"


def test_per_byte_gap_in_a_stream_is_a_minimum_spacing_too():
    natural = np.array([0.6, 0.6, 0.7, 1.0])
    per_byte = np.array([0.014, 0.126, 1.02, 8.19])  # (m-1)G at G = 2 ns/B for 8 B .. 4 KiB
    # LogP: the interval becomes max(natural, g_machine + (m-1)G), g_machine = 0.05 here
    logp = np.maximum(natural, 0.05 + per_byte) - natural
    assert np.allclose(cal.spacing_residual(logp, per_byte, natural), 0.0)
    # an added gap (natural + (m-1)G) is exact as well; half or double G is not
    assert np.allclose(cal.spacing_residual(per_byte, per_byte, natural), 0.0)
    assert cal.spacing_residual(per_byte / 2, per_byte, natural)[-1] < -3
    assert cal.spacing_residual(2 * per_byte, per_byte, natural)[-1] > 8


def test_half_strength_G_is_missed():
    summary, _ = run_analysis({"G": [0, 0.5, 2]}, scale={"G": 0.5})
    G = summary["knobs"]["G"]
    assert G["verdict"] == pr.MISSED
    assert G["slope"]["estimate"] == pytest.approx(0.5, abs=0.01)


def test_an_apparatus_adding_nine_tenths_of_its_knob_is_missed():
    summary, _ = run_analysis({"L": [0, 1, 10]}, scale={"L": 0.9}, noise_us=0.002)
    assert verdicts(summary, "L", "L") == [pr.MISSED, pr.MISSED]
    assert summary["verdict"] == pr.MISSED


def test_latency_leaking_a_fifth_into_receive_overhead_is_missed_cross_talk():
    summary, _ = run_analysis({"L": [0, 1, 10]}, leak={("L", "o_r"): 0.2}, noise_us=0.002)
    L = summary["knobs"]["L"]
    assert L["verdict"] == pr.MISSED
    assert L["crosstalk"]["o_r"]["verdicts"] == [pr.MISSED, pr.MISSED]
    assert L["crosstalk"]["o_s"]["verdicts"] == [pr.MET, pr.MET]
    assert any("o_r (cross-talk)" in r and "also moved o_r" in r for r in L["reasons"])


def test_a_miss_counts_only_once_a_second_run_repeats_it():
    # the same leak in every launch: missed, and the knob ran twice to show it
    summary, _ = run_analysis({"L": [0, 1, 10]}, leak={("L", "o_r"): 0.2}, noise_us=0.002)
    assert summary["knobs"]["L"]["runs"] == 2 and verdicts(summary, "L", "o_r") == [pr.MISSED, pr.MISSED]


def test_a_miss_in_one_launch_that_the_next_does_not_show_is_unresolved():
    # one launch of the apparatus carries a fifth of L into o_r (its memory placement, the
    # host's state): its eight rounds agree, so pooled it misses; the next launches do not
    made, clock = [], Clock()

    def runner(knob_sets, probe_args):
        made.append(1)
        leak = {("L", "o_r"): 0.2} if len(made) == 2 else None   # the noise run, then L's first run
        return fake_runner(leak=leak, noise_us=0.002, clock=clock, seed=len(made))(knob_sets, probe_args)
    # a budget for two runs of L: the first misses on its own, so the second is run, and pooled
    # the two are not a miss
    summary, rows, _ = cal.calibrate({"L": [0, 1, 10]}, runner, [], None, pr.KNOB_PRECISION, 25, clock=clock,
                                     log=lambda *_: None)
    L = summary["knobs"]["L"]
    assert L["runs"] == 2 and L["crosstalk"]["o_r"]["verdicts"] == [pr.UNRESOLVED, pr.UNRESOLVED]
    assert summary["verdict"] != pr.MISSED
    # run alone, the same launch is not settled: a second run is asked for
    collected = cal.Collected({"L": [0, 1, 10]})
    first = fake_runner(leak={("L", "o_r"): 0.2}, noise_us=0.002)
    collected.add_run("L", first(cal.sweep_sets("L", [0, 1, 10]), []))
    _, _, unsettled = cal.judge(collected)
    assert unsettled == ["L"]


def test_split_runs_and_repeated_miss_count_runs_apart():
    from loggp.experiments import calibration_verdict as cv
    assert cv.split_runs([1, 2, 3, 4, 5], [2, 3]) == [[1, 2], [3, 4, 5]]
    goal = pr.Goal(0.0, 1.0)
    pooled = pr.Interval(2.0, 1.5, 2.5, 16)
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [2.0] * 8])[:2] == (pr.MISSED, True)
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8])[:2] == (pr.UNRESOLVED, False)
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [0.5] * 8])[:2] == (pr.UNRESOLVED, True)
    assert "beyond the goal in 1 of 2 runs apart only" in cv.repeated_miss(pooled, goal, [[2.0] * 8, [0.5] * 8])[2]
    # two of three beyond: most runs, and at least two
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [0.5] * 8, [1.2] * 8])[0] == pr.MISSED
    # below the goal, on the pooled side only
    low = pr.Interval(-2.0, -2.5, -1.5, 16)
    assert cv.repeated_miss(low, goal, [[-2.0] * 8, [2.0] * 8, [-2.0] * 8])[0] == pr.MISSED
    assert cv.repeated_miss(low, goal, [[-2.0] * 8, [2.0] * 8, [2.0] * 8])[0] == pr.UNRESOLVED


def test_a_repeated_miss_needs_more_than_half_the_runs_beyond_the_goal_not_on_its_edge():
    from loggp.experiments import calibration_verdict as cv
    goal = pr.Goal(0.0, 1.0)
    pooled = pr.Interval(2.0, 1.5, 2.5, 32)
    # two of four runs beyond: half, not most, so not repeatable
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [2.0] * 8, [0.5] * 8, [0.5] * 8])[:2] == (pr.UNRESOLVED, True)
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [0.5] * 8, [2.0] * 8, [0.5] * 8, [0.0] * 8])[0] == pr.UNRESOLVED
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [2.0] * 8, [2.0] * 8, [0.5] * 8])[0] == pr.MISSED
    # a run whose median sits on the goal's edge is inside the goal, on either side
    assert cv.repeated_miss(pooled, goal, [[2.0] * 8, [1.0] * 8])[0] == pr.UNRESOLVED
    low = pr.Interval(-2.0, -2.5, -1.5, 16)
    assert cv.repeated_miss(low, goal, [[-2.0] * 8, [-1.0] * 8])[0] == pr.UNRESOLVED
    # a run that gave no rounds is no run apart: two misses of two runs with rounds
    assert cv.split_runs([2.0] * 16, [8, 0, 0, 8]) == [[2.0] * 8, [2.0] * 8]


def test_a_known_defect_stays_missed_and_is_named_in_one_line():
    summary, _ = run_analysis({"L": [0, 2, 10]}, leak={("L", "g"): -0.012}, noise_us=0.002)
    L = summary["knobs"]["L"]
    assert L["crosstalk"]["g"]["verdicts"] == [pr.MISSED, pr.MISSED]
    named = [r for r in L["reasons"] if "g (cross-talk)" in r]
    assert len(named) == 2 and all("known defect: L holds" in r for r in named)
    assert cal.verdicts_text(summary).count("known defect: L holds") == 2
    assert "2 of them are known defects of the apparatus" in cal.closing_sentence(summary)


@pytest.mark.parametrize("leak", [0.012, -0.05])  # the other way, or further than the defect reaches
def test_a_miss_the_known_defect_does_not_reach_is_not_excused(leak):
    summary, _ = run_analysis({"L": [0, 2, 10]}, leak={("L", "g"): leak}, noise_us=0.002)
    L = summary["knobs"]["L"]
    assert L["crosstalk"]["g"]["verdicts"] == [pr.MISSED, pr.MISSED]
    excused = [r for r in L["reasons"] if "known defect" in r]
    assert len(excused) == (1 if leak < 0 else 0)  # -0.1 us at 2 us is within its reach, -0.5 at 10 is not
    assert cal.verdicts_text(summary).count("known defect") == len(excused)


def test_known_defects_explain_a_bounded_deviation_in_one_direction():
    from loggp.experiments.known_defects import known_defect
    assert known_defect("G", "G", 0.02 * 2.0, 2.0) and not known_defect("G", "G", 0.04 * 2.0, 2.0)
    assert not known_defect("G", "G", -0.01, 2.0) and not known_defect("G", "o_r", 0.01, 2.0)
    assert known_defect("L", "g", -0.15, 10.0) and not known_defect("L", "g", -0.151, 10.0)
    # o_r high at a large o: up to 2 % of the setting, never below, never a tenth too much
    assert known_defect("o", "o_r", 0.148, 10.0) and not known_defect("o", "o_r", 0.201, 10.0)
    assert not known_defect("o", "o_r", -0.148, 10.0) and not known_defect("o", "o_r", 1.0, 10.0)
    # g_excess under o: up to the 0.16 us plain MPICH's own spins reach at 10 us, never below
    assert known_defect("o", "g_excess", 0.16, 10.0) and not known_defect("o", "g_excess", 0.161, 10.0)
    assert not known_defect("o", "g_excess", -0.05, 10.0)
    # L under o: up to the 0.14 us plain MPICH's own spins grow a half round trip by, never below
    assert known_defect("o", "L", 0.14, 1.0) and not known_defect("o", "L", 0.141, 1.0)
    assert not known_defect("o", "L", -0.05, 1.0) and not known_defect("g", "L", 0.05, 1.0)
    # G's bulk slope at 1 us: under o and L up to 0.001 ns/B either way, under g (as a send-side spin) 0.002
    for knob in ("o", "L"):
        assert known_defect(knob, "G", 0.0007, 1.0) and not known_defect(knob, "G", 0.0011, 1.0)
        assert known_defect(knob, "G", -0.001, 1.0) and not known_defect(knob, "G", -0.0011, 1.0)
    for deviation in (0.002, -0.002, 0.0016):
        assert known_defect("g", "G", deviation, 1.0)
    assert not known_defect("g", "G", 0.0021, 1.0) and not known_defect("g", "G", -0.0021, 1.0)
    assert not known_defect("G", "o_s", 0.0007, 1.0)
    # L under G: the machine's answer to a hold, up to 0.2 us either way at any G, no further
    for deviation in (0.2, -0.2, 0.01):
        assert known_defect("G", "L", deviation, 2.0) and known_defect("G", "L", deviation, 0.1)
    assert not known_defect("G", "L", 0.201, 2.0) and not known_defect("G", "L", -0.201, 5.0)
    assert not known_defect("L", "L", -0.1, 1.0) and not known_defect("g", "L", -0.1, 1.0)
    # L's own reading: the same answer to a hold, up to 0.05 us either way, not nine tenths of L = 1 us
    for deviation in (0.041, -0.033, 0.05, -0.05):
        assert known_defect("L", "L", deviation, 1.0)
    assert not known_defect("L", "L", 0.051, 1.0) and not known_defect("L", "L", -0.051, 10.0)


def test_a_reading_beyond_a_known_defect_is_a_different_fault_only_when_its_interval_is_beyond_it_too():
    from loggp.experiments.known_defects import known_defect
    # G's slope at o = 1 us once read -0.0018 ns/B in [-0.0052, -0.0006]: the interval reaches the 0.001 named
    assert known_defect("o", "G", -0.0018, 1.0, reach=-0.0006)
    assert known_defect("o", "G", -0.0018, 1.0, reach=-0.001) and not known_defect("o", "G", -0.0018, 1.0, reach=-0.0011)
    # both sides of the edge, for a defect that reads high and one that reads low
    assert known_defect("o", "L", 0.3, 1.0, reach=0.14) and not known_defect("o", "L", 0.3, 1.0, reach=0.141)
    assert known_defect("L", "g", -0.3, 10.0, reach=-0.15) and not known_defect("L", "g", -0.3, 10.0, reach=-0.151)
    # the direction is the reading's; an interval end across the expectation does not widen the reach
    assert not known_defect("L", "g", 0.3, 10.0, reach=0.01)
    assert not known_defect("o", "L", 0.3, 1.0, reach=-0.01)


def _missed_series(measured, low, high, set_value=1.0, unit="ns/B"):
    return {"verdicts": [pr.MISSED], "measured": [measured], "expected": [0.0], "low": [low], "high": [high],
            "set": [set_value], "unit": unit}


def test_a_miss_named_by_its_interval_alone_says_it_is_beyond_the_defects_known_size():
    from loggp.experiments.calibration_output import named_defect
    reaching = named_defect("o", "G", _missed_series(-0.0018, -0.0052, -0.0006), 0)
    assert reaching.startswith("known defect, though the reading is beyond the 0.001 ns/B it is known to reach")
    assert "rerun to tell" in reaching and "G's slope over 16-64 KiB" in reaching
    within = named_defect("o", "G", _missed_series(-0.0008, -0.0010, -0.0006), 0)
    assert within.startswith("known defect: the machine's") and "it is known to reach" not in within
    assert named_defect("o", "G", _missed_series(-0.0018, -0.0030, -0.0012), 0) is None
    unresolved = dict(_missed_series(-0.0018, -0.0052, -0.0006), verdicts=[pr.UNRESOLVED])
    assert named_defect("o", "G", unresolved, 0) is None


@pytest.mark.parametrize("apparatus", [{"scale": {"L": 0.9}}, {"leak": {("L", "o_r"): 0.2}}, {}])
def test_on_a_noisy_machine_the_same_apparatus_is_unresolved_never_met(apparatus):
    # rounds that differ by microseconds against a 1-10 us knob and a 4-run budget
    clock = Clock(per_run=10.0)
    summary, rows = run_analysis({"L": [0, 1, 10]}, budget_s=40, clock=clock, noise_us=3.0, **apparatus)
    assert summary["budget_ran_out"] and summary["unsettled"] == ["L"]
    assert {r["verdict"] for r in rows if r["role"] == "primary"} == {pr.UNRESOLVED}
    assert not any(r["verdict"] == pr.MET for r in rows if r["parameter"] in ("L", "o_r"))
    assert summary["verdict"] != pr.MET
    assert any("budget ran out" in r for r in summary["knobs"]["L"]["reasons"])
    assert "stay unresolved" in cal.closing_sentence(summary)


def test_no_repeat_starts_after_the_budget_is_spent():
    calls, clock = [], Clock(per_run=10.0)
    summary, _, _ = cal.calibrate({"L": [0, 1, 10], "g": [0, 1, 10]}, fake_runner(noise_us=3.0, calls=calls, clock=clock),
                                  [], None, pr.KNOB_PRECISION, 35, clock=clock, log=lambda *_: None)
    # the noise run at 0 s, L at 10 s, g at 20 s (every knob runs once), L again at 30 s; at 40 s
    # the budget is spent
    assert len(calls) == 4 and clock.now == 40
    assert summary["budget_ran_out"] and summary["knobs"]["L"]["runs"] == 2 and summary["knobs"]["g"]["runs"] == 1
    # however small the budget, every knob is measured once
    calls.clear()
    summary, _, _ = cal.calibrate({"L": [0, 1, 10], "g": [0, 1, 10]}, fake_runner(noise_us=3.0, calls=calls, clock=clock),
                                  [], None, pr.KNOB_PRECISION, 1, clock=clock, log=lambda *_: None)
    assert len(calls) == 3 and all(k["runs"] == 1 for k in summary["knobs"].values())


def test_small_cross_talk_within_the_tolerance_is_met():
    # half a per cent of o leaking into L stays within max(1 %, 20 ns).
    summary, _ = run_analysis({"o": [0, 1, 10, 100]}, leak={("o_s", "L"): 0.005})
    assert summary["knobs"]["o"]["verdict"] == pr.MET


def test_tolerances():
    assert cal.tolerance("o_s", "o", 100, 65536) == pytest.approx(1.0)
    assert cal.tolerance("o_s", "o", 0.5, 65536) == pytest.approx(0.02)
    assert cal.tolerance("G", "G", 5, 65536) == pytest.approx(0.05)
    assert cal.tolerance("L", "G", 5, 65536) == pytest.approx(0.02)
    # cross-talk on G: the time tolerance spread over the largest message
    assert cal.tolerance("G", "L", 100, 65537) == pytest.approx(1.0 * 1000 / 65536)
    looser = pr.Precision(0.02, 100.0)
    assert cal.tolerance("o_s", "o", 1, 65536, looser) == pytest.approx(0.1)


def test_median_run_outvotes_one_bad_run():
    good = synthetic_probe(SIZES)
    bad = synthetic_probe(SIZES, knobs={"o_r": 1000})
    combined = cal.median_run([good, bad, good])
    assert [e["o_r_us"]["median"] for e in combined["sizes"]] == [e["o_r_us"]["median"] for e in good["sizes"]]


def test_readings_are_taken_within_each_round():
    # Every set of the g sweep's run sits 0.5 us higher in one round (a slow moment of the
    # machine); side by side, no reading moves.
    def runner(knob_sets, args):
        out = []
        for knobs in knob_sets:
            run = synthetic_probe(SIZES, knobs=knobs, rounds=8)
            for e in run["sizes"]:
                for q in cal.QUANTITIES:
                    e[q]["rounds_us"][3] += 0.5
            out.append(run)
        return out
    summary, rows, _ = cal.calibrate({"g": [0, 1, 10], "L": [0, 1, 10]}, runner, [], None, log=lambda *_: None)
    assert summary["verdict"] == pr.MET
    assert max(abs(r["increase"] - r["expected_increase"]) for r in rows) < 1e-9


def test_split_rounds_gives_one_result_per_round():
    run = synthetic_probe(SIZES, rounds=3, round_noise_us=0.1, rng=np.random.default_rng(2))
    rounds = cal.split_rounds(run)
    assert len(rounds) == 3
    first = sorted(run["sizes"], key=lambda e: e["bytes"])[0]
    assert rounds[2]["sizes"][0]["o_r_us"]["median"] == first["o_r_us"]["rounds_us"][2]
    assert cal.split_rounds(synthetic_probe(SIZES)) == [synthetic_probe(SIZES)]


def test_a_run_is_framed_by_the_armed_set_and_zero_knobs():
    sets = cal.sweep_sets("o", [0, 1, 10])
    armed = {"o_s": 0.001, "o_r": 0.001, "g": 0.001, "G": 0.001, "L": 0.001}
    assert sets == [armed, {k: 0.0 for k in armed}, {**armed, "o_s": 1.0, "o_r": 1.0},
                    {**armed, "o_s": 10.0, "o_r": 10.0}]


def run_command(tmp_path, argv, **apparatus):
    calls, clock = [], Clock()
    watch = machine_load.LoadWatch(sampler=lambda: 0.0)
    rc = cal.main(argv + ["--out", str(tmp_path / "cal")], runner=fake_runner(calls=calls, clock=clock, **apparatus),
                  clock=clock, load_watch=watch, detours=lambda: None)
    return rc, calls


def test_command_writes_every_output_with_its_verdicts(tmp_path, capsys):
    rc, calls = run_command(tmp_path, ["--quick"])
    out = tmp_path / "cal"
    assert rc == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[1].startswith("machine noise:")  # after the detours line, before everything else
    assert "armed layer's own cost" in text and "verdict: MET" in text
    summary = json.loads((out / "calibration.json").read_text())
    assert summary["verdict"] == pr.MET and set(summary["knobs"]) == {"o", "g", "L", "G"}
    assert summary["sentence"] in text and summary["sentence"].startswith("On this machine 42 of 42 readings")
    for k in summary["knobs"].values():
        assert {"slope", "verdict", "points", "measures", "crosstalk", "reasons"} <= set(k)
        for s in list(k["measures"].values()) + list(k["crosstalk"].values()):
            assert len(s["reasons"]) == len(s["verdicts"]) == len(k["values"])
    regimes = summary["baseline"]["regimes"]
    assert regimes and all({"m_min", "m_max", "T0_us", "B_bytes_per_us"} <= set(r) for r in regimes)
    with open(out / "calibration.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(len([v for v in vals if v]) * (len(cal.PRIMARY[k]) + len(cal.CROSSTALK[k]))
                            for k, vals in cal.QUICK_SWEEPS.items())
    assert all(r["verdict"] == "met" and r["reason"] and r["precision_reached"] for r in rows)
    verdicts_file = (out / "verdicts.txt").read_text()
    assert verdicts_file.startswith("verdict: met\n") and "L = 10 us: met" in verdicts_file
    assert (out / "calibration.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "calibration.svg").stat().st_size > 1000
    assert (out / "probe_points.csv").read_text().count("\n") > 10
    assert len(list((out / "probes").glob("*.json"))) == sum(len(sets) for sets, _ in calls)
    # the noise run, the full-range baseline, then one run per knob (settled at once)
    assert len(calls) == 6
    assert [len(sets) for sets, a in calls if "--sizes" not in a] == [1]


def test_command_reports_a_broken_apparatus_plainly(tmp_path, capsys):
    rc, _ = run_command(tmp_path, ["--knobs", "g", "--sweep", "g=0,5us,50us", "--no-baseline"], scale={"g": 0.5})
    assert rc == cal.MISSED_GOAL == 3
    text = capsys.readouterr().out
    assert "g [us]: MISSED" in text and "MISSED: g = 50 us: g read +2" in text
    verdicts_file = (tmp_path / "cal" / "verdicts.txt").read_text()
    assert verdicts_file.startswith("verdict: missed") and "wholly below" in verdicts_file


def test_a_loaded_machine_is_said_before_the_report(tmp_path, capsys):
    watch = machine_load.LoadWatch(sampler=lambda: 1.8)
    rc = cal.main(["--knobs", "L", "--quick", "--no-baseline", "--out", str(tmp_path / "cal")],
                  runner=fake_runner(), load_watch=watch, detours=lambda: None)
    text = capsys.readouterr().out
    assert rc == 0
    shared = [i for i, line in enumerate(text.splitlines()) if line.startswith("other work shares the cores")]
    report = text.splitlines().index(next(line for line in text.splitlines() if line.startswith("L [us]")))
    assert shared and shared[0] < report
    assert json.loads((tmp_path / "cal" / "calibration.json").read_text())["load"]["shared"]


@pytest.mark.parametrize("args, message", [
    (["--knobs", "o,x"], "unknown knob 'x'"),
    (["--sweep", "o=1us"], "two distinct values"),
    (["--sweep", "o=1us,-2us"], "negative values"),
    (["--sweep", "o=0,5"], "'5': a bare number has no unit"),
    (["--sweep", "q=1us,2us"], "KNOB=V1"),
    (["--knobs", "g", "--sweep", "o=0,1us"], "not in --knobs"),
    (["--sizes", "8,64"], "two sizes >= 8192"),
    (["--sizes", "8,abc"], "'abc' is not a size"),
    (["--time-limit", "0"], "--time-limit: '0' must be in (0, 1h]"),
    (["--time-limit", "1.5"], "'1.5': a duration needs its unit (e.g. 1.5s)"),
    (["--rounds", "0"], "--rounds 0"),
    (["--precision", "1"], "--precision '1'"),
    (["--precision", "0%"], "--precision '0%'"),
    (["--budget", "5"], "--budget '5'"),
    (["--budget", "5m"], "--budget '5m'"),
    (["--sweep", "o=" + ",".join(f"{v}us" for v in range(16))], "at most 15 values"),
    (["--bogus"], "unrecognized arguments"),
])
def test_bad_arguments_exit_2(tmp_path, capsys, args, message):
    def runner(knob_sets, probe_args):
        raise AssertionError("must not run")
    assert cal.main(args + ["--out", str(tmp_path / "x")], runner=runner) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def libloggp_installed():
    lib = os.environ.get("LOGGP_LIBRARY") or str(Path(sys.prefix, "lib", "libloggp.so"))
    return Path(lib).is_file()


# The smoke test runs each knob set for half a second; the 2 % goals are `loggp calibrate`'s
# own verdict on a full-length run (docs/benchmarks.md). Here each knob must do its whole job
# and only its job, within bounds that a knob doing half its job, or leaking more than a fifth
# of itself into another parameter, fails.
SMOKE_SWEEPS = {"o": 10.0, "g": 10.0, "L": 10.0, "G": 1.0}
SMOKE_BULK_BYTES = 65536


def smoke_misses(summary):
    """What the run shows wrong, as readable lines (none: every knob did its job alone)."""
    misses = []
    for knob, k in summary["knobs"].items():
        top = SMOKE_SWEEPS[knob]
        for param, measure in k["measures"].items():
            rose, expected = measure["measured"][-1], measure["expected"][-1]
            if not 0.8 * expected <= rose <= 1.25 * expected:
                misses.append(f"{knob} = {top:g}: {param} rose by {rose:.4g}, expected {expected:.4g}")
        # a leak of a fifth of the knob's time, never under half a microsecond (the armed layer's
        # own cost per message and the machine's noise at this run length stay below that)
        leak_us = max(0.2 * top, 0.5) if knob != "G" else 0.5
        for param, moved in k["crosstalk"].items():
            bound = leak_us * 1000.0 / (SMOKE_BULK_BYTES - 1) if param in cal.PER_BYTE else leak_us
            if (knob, param) == ("L", "G"):
                # L costs every flight of shm's rendezvous above 4 KiB, bending g(m) between 16 and
                # 64 KiB (docs/benchmarks.md, "by the probe"): held to its size, not to zero
                bound = 2 * leak_us * 1000.0 / (SMOKE_BULK_BYTES - 1)
            worst = max(moved["measured"], key=abs)
            if abs(worst) > bound:
                misses.append(f"{knob} = {top:g} moved {param} by {worst:+.4g} (bound {bound:.4g})")
    return misses


@pytest.mark.parametrize("apparatus, named", [
    ({}, None),
    ({"scale": {"o_r": 0.5}}, "o = 10: o_r rose by 4.99"),
    ({"scale": {"g": 0.5}}, "g = 10: g rose by"),
    ({"scale": {"L": 0.5}}, "L = 10: L rose by 5"),
    ({"scale": {"G": 0.5}}, "G = 1: G rose by 0.49"),
    ({"leak": {("L", "o_r"): 0.25}}, "L = 10 moved o_r by +2.5"),
])
def test_the_smoke_bounds_fail_a_knob_doing_half_its_job_or_leaking_a_quarter(apparatus, named):
    summary, _ = run_analysis({knob: [0, top] for knob, top in SMOKE_SWEEPS.items()}, **apparatus)
    misses = smoke_misses(summary)
    assert (named in "\n".join(misses)) if named else not misses, misses


@pytest.mark.skipif(not libloggp_installed(), reason="libloggp.so is not installed (run ./setup.sh)")
@pytest.mark.skipif(shutil.which("loggp-probe") is None and not Path(sys.prefix, "bin", "loggp-probe").exists(),
                    reason="loggp-probe is not installed (run ./setup.sh)")
def test_calibrate_smoke_through_loggp_run(tmp_path, capsys):
    for attempt in range(3):  # timing: under load, measure again rather than widen
        out = tmp_path / f"cal{attempt}"
        rc = cal.main(["--sweep", "o=0,10us", "--sweep", "g=0,10us", "--sweep", "L=0,10us", "--sweep", "G=0,1ns/B",
                       "--no-baseline", "--budget", "1s", "--rounds", "5", "--time-limit", "0.5s",
                       "--sizes", "8,64,16384,65536", "--out", str(out)])
        captured = capsys.readouterr()
        text = captured.out
        assert rc in (0, 3), text + captured.err
        summary = json.loads((out / "calibration.json").read_text())
        assert set(summary["knobs"]) == {"o", "g", "L", "G"}
        assert all(k["runs"] == 1 for k in summary["knobs"].values())  # the budget allows one run each
        assert (out / "calibration.png").is_file() and (out / "verdicts.txt").is_file()
        # the verdict printed, the exit code and the summary agree
        assert (rc == 3) == (summary["verdict"] == "missed"), text
        assert f"verdict: {summary['verdict'].upper()}" in text
        misses = smoke_misses(summary)
        if not misses:
            break
    if misses and summary["load"]["shared"]:
        # judged by the CPU share others took, not by any time: such readings are not results
        pytest.skip(f"{summary['load']['line']} ({len(misses)} smoke bounds missed)")
    assert not misses, "\n".join(misses) + "\n" + text


@pytest.mark.parametrize("lost, named", [(0.036, True), (0.009, False), (0.015, False), (0.0151, True)])
def test_a_miss_on_a_host_losing_much_of_a_cpu_to_detours_says_so(lost, named):
    summary, _ = run_analysis({"L": [0, 1, 10]}, scale={"L": 0.9}, noise_us=0.002)
    summary["detours"] = {"per_second": 9320, "median_us": 2.4, "lost_fraction": lost}
    sentence = cal.closing_sentence(summary)
    assert ("of a CPU in detours" in sentence) == named
    if named:
        assert f"{100 * lost:.1f} % of a CPU in detours (9320 a second)" in sentence


def test_a_noisy_host_is_not_blamed_when_nothing_missed_or_other_work_ran():
    detours = {"per_second": 9320, "median_us": 2.4, "lost_fraction": 0.036}
    summary, _ = run_analysis({"L": [0, 1, 10]}, noise_us=0.002)
    summary["detours"] = detours
    assert "detours" not in cal.closing_sentence(summary)
    missed, _ = run_analysis({"L": [0, 1, 10]}, scale={"L": 0.9}, noise_us=0.002)
    missed["detours"], missed["load"] = detours, {"line": "other work shares the cores"}
    sentence = cal.closing_sentence(missed)
    assert "other work shared the cores" in sentence and "detours" not in sentence
    missed["detours"], missed["load"] = None, {}
    assert "detours" not in cal.closing_sentence(missed)


def test_a_budget_spent_exactly_starts_no_repeat():
    # noise 0-10 s, L 10-20 s, g 20-30 s, L again 30-40 s: at 40 s a budget of 40 s is spent
    calls, clock = [], Clock(per_run=10.0)
    runner = fake_runner(noise_us=3.0, calls=calls, clock=clock)
    summary, _, _ = cal.calibrate({"L": [0, 1, 10], "g": [0, 1, 10]}, runner, [], None, pr.KNOB_PRECISION, 40,
                                  clock=clock, log=lambda *_: None)
    assert len(calls) == 4 and summary["knobs"]["g"]["runs"] == 1


def _sweeps(*items, knobs="o"):
    return cal.parse_sweeps(argparse.Namespace(knobs=knobs, quick=False, sweep=list(items)))


def test_a_sweep_takes_fifteen_values_with_its_zero_and_fourteen_without():
    assert len(_sweeps("o=0," + ",".join(f"{v}us" for v in range(1, 15)))["o"]) == 15
    assert len(_sweeps(",".join(f"o={v}us" if v == 1 else f"{v}us" for v in range(1, 15)))["o"]) == 14
    with pytest.raises(cal.CalibrationError, match="at most 15 values"):
        _sweeps(",".join(f"o={v}us" if v == 1 else f"{v}us" for v in range(1, 16)))


def test_g_is_read_at_the_largest_size_asked_whatever_their_order():
    assert cal._bulk_bytes(["--sizes", "65536,1024,131072,4096"]) == 131072


def test_the_noise_line_is_the_median_difference_not_the_mean():
    # |differences| 1, 2 and 100 ns: the median 2 ns; one far round must not make it 34 ns
    noise = {"o_s": [], "o_r": [], "g": [], "G": [], "L": [-0.001, 0.002, 0.1]}
    assert cal.noise_line(noise) == ("machine noise: two zero-knob sets of one round differ by a median of "
                                     "L 2 ns (3 rounds)")
