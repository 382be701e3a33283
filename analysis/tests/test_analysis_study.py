"""Analysis on synthetic data: slowdowns, fits, flags, count x delta models,
calibration input and the written report."""
import csv
import json
import os
import re

import numpy as np
import pytest

from loggp.analysis import analyze, models, report, report_runs, report_sections, stats
from loggp.experiments import calibration_file as calibration
from loggp.experiments import precision
from loggp.harness import store


# --- statistics --------------------------------------------------------------

def test_slowdown_is_a_ratio_of_medians_with_an_interval_around_it():
    rng = np.random.default_rng(1)
    base = 2.0 * (1 + 0.01 * rng.standard_normal(9))
    slow = 3.0 * (1 + 0.01 * rng.standard_normal(9))
    ratio, low, high = stats.slowdown(slow, base)
    assert ratio == pytest.approx(np.median(slow) / np.median(base))
    assert low < ratio < high
    assert 1.4 < low and high < 1.6


def test_slowdown_single_runs_and_bad_input():
    # a single run on a side shows none of its spread: no interval, never [x, x]
    assert stats.slowdown([3.0], [2.0]) == (1.5, None, None)
    assert stats.slowdown([3.0], [2.0, 2.2, 1.8]) == (1.5, None, None)
    assert stats.slowdown([3.0, 3.3], [2.0, 2.2])[1] is not None
    with pytest.raises(ValueError):
        stats.slowdown([], [1.0])
    with pytest.raises(ValueError, match="> 0"):
        stats.slowdown([1.0], [0.0])


def test_linear_fit():
    fit = stats.linear_fit([0, 1, 2, 4], [1, 4, 7, 13])
    assert fit.slope == pytest.approx(3) and fit.intercept == pytest.approx(1)
    assert fit.r2 == pytest.approx(1)
    assert stats.linear_fit([2, 2], [1, 5]) is None
    assert stats.linear_fit([0, 1, 2], [5, 5, 5]).r2 is None
    two = stats.linear_fit([0, 1], [1, 3])
    assert two.slope == pytest.approx(2) and two.r2 is None


def test_flags_find_jumps_and_plateaus_but_not_lines():
    x = [0, 1, 2, 3, 4]
    half = [0.5] * 5
    line = [0, 10, 20, 30, 40]
    assert stats.flags(x, line, half, stats.linear_fit(x, line)) == []
    step = [0, 1, 2, 40, 41]
    assert ("jump", 2, 3) in stats.flags(x, step, half, stats.linear_fit(x, step))
    saturating = [0, 30, 45, 46, 46.5]
    found = stats.flags(x, saturating, half, stats.linear_fit(x, saturating))
    assert ("plateau", 2, 3) in found and ("plateau", 3, 4) in found


@pytest.mark.parametrize("rise, jump", [(30.0, False), (30.5, True)])
def test_a_jump_is_a_rise_of_more_than_three_times_the_slope(rise, jump):
    # slope 10 per unit: a segment of one unit is a jump only past a rise of 30
    fit = stats.Fit(10.0, 0.0, None, 3)
    flagged = stats.flags([0, 1, 2], [0.0, 10.0, 10.0 + rise], [0.1] * 3, fit)
    assert (("jump", 1, 2) in flagged) is jump


@pytest.mark.parametrize("rise, plateau", [(2.5, False), (2.49, True)])
def test_a_plateau_adds_less_than_a_quarter_of_the_predicted_rise(rise, plateau):
    fit = stats.Fit(10.0, 0.0, None, 3)
    flagged = stats.flags([0, 1, 2], [0.0, 10.0, 10.0 + rise], [0.1] * 3, fit)
    assert (("plateau", 1, 2) in flagged) is plateau


def test_the_slowdown_interval_covers_the_true_ratio_at_least_95_percent_of_the_time():
    # both sides resampled: an interval that takes the baseline's median as exact, or cuts
    # 5 % from each end, covers the ratio less often (about 81 % and 94 % here)
    rng = np.random.default_rng(5)
    trials, covered = 1000, 0
    for _ in range(trials):
        base = 2.0 * np.exp(0.05 * rng.standard_normal(15))
        slow = 3.0 * np.exp(0.05 * rng.standard_normal(15))
        _, low, high = stats.slowdown(slow, base, rng=rng, resamples=1000)
        covered += low <= 1.5 <= high
    assert 0.95 <= covered / trials <= 0.99


def test_error_bars_run_from_the_estimate_down_to_low_and_up_to_high():
    assert stats.error_lengths(1.0, 0.75, 1.5) == (0.25, 0.5)
    assert stats.error_lengths(1.0, None, 1.5) == (0.0, 0.0)


def test_a_rise_where_the_slope_predicts_none_is_a_jump():
    flat = stats.Fit(0.0, 0.0, None, 3)
    assert ("jump", 1, 2) in stats.flags([0, 1, 2], [0.0, 0.0, 5.0], [0.1] * 3, flat)


def test_a_jump_must_rise_above_both_points_noise_together():
    fit = stats.Fit(0.1, 0.0, None, 3)
    # rise 3 over half-widths of 2 and 2: inside their joint noise of 4
    assert stats.flags([0, 1, 2], [0.0, 0.1, 3.1], [0.1, 2.0, 2.0], fit) == []
    assert ("jump", 1, 2) in stats.flags([0, 1, 2], [0.0, 0.1, 4.2], [0.1, 2.0, 2.0], fit)


def test_a_plateau_needs_a_rise_before_above_the_effect_and_a_prediction_above_it():
    fit = stats.Fit(10.0, 0.0, None, 3)
    # risen to exactly min_effect_pct (2 %) before: not "risen before"
    assert ("plateau", 1, 2) not in stats.flags([0, 1, 2], [0.0, 2.0, 2.0], [0.1] * 3, fit)
    assert ("plateau", 1, 2) in stats.flags([0, 1, 2], [0.0, 2.5, 2.5], [0.1] * 3, fit)
    # a predicted rise of exactly min_effect_pct is not enough to miss
    small = stats.Fit(2.0, 0.0, None, 3)
    assert ("plateau", 1, 2) not in stats.flags([0, 1, 2], [0.0, 5.0, 5.1], [0.1] * 3, small)
    assert ("plateau", 1, 2) in stats.flags([0, 1, 2], [0.0, 5.0, 5.1], [0.1] * 3, stats.Fit(2.1, 0.0, None, 3))

# --- count x delta models ----------------------------------------------------

def rank_profile(rank, sent, received, sent_bytes, recv_calls, waitall, allreduce, alltoall_bytes,
                 size=4, injected=None):
    return {"loggp_version": "0.1.0", "rank": rank, "size": size, "host": "h",
            "engine": "libfabric:shm", "wall_seconds": 1.0,
            "sent": {"messages": sent, "bytes": sent_bytes, "by_size": []},
            "received": {"messages": received, "bytes": 0, "by_size": []},
            "calls": {"MPI_Send": sent, "MPI_Recv": recv_calls, "MPI_Waitall": waitall},
            "collectives": {"MPI_MPI_Allreduce": {"calls": allreduce, "bytes": 8 * allreduce},
                            "MPI_Alltoall": {"calls": 5, "bytes": alltoall_bytes}},
            "injected_ns": injected or {"o_s": 0, "o_r": 0, "g": 0, "G": 0, "L": 0}}


KNOWN = {"size": 4, "engine": "libfabric:shm", "ranks": [
    rank_profile(0, 1000, 800, 1_000_000, 300, 50, 10, 4000),
    rank_profile(1, 500, 1000, 2_000_000, 100, 10, 10, 8000),
]}


def test_counts_from_a_known_profile():
    c = models.busiest(KNOWN)
    # collectives on 4 ranks: 10 allreduces x log2(4) + 5 alltoalls x 3 = 35 messages
    assert c["collective_messages_estimate"] == 35
    assert c["sent_messages"] == 1035 and c["received_messages"] == 1035
    assert c["overhead_messages"] == max(1035 + 835, 535 + 1035)
    # bytes: p2p + allreduce payload x 2 rounds + alltoall payload x 3/4
    assert c["sent_bytes"] == 2_000_000 + 80 * 2 + 8000 * 3 / 4
    assert c["dependent_messages"] == 300 + 50 + 35
    assert models.per_unit_cost(c, "o") == pytest.approx(1870e-9)
    assert models.per_unit_cost(c, "L") == pytest.approx(385e-9)
    assert models.per_unit_cost(c, "g") is None


def test_injected_delay_takes_the_busiest_rank():
    p = {"ranks": [rank_profile(0, 1, 1, 1, 1, 1, 1, 1, injected={"o_s": 5e6, "o_r": 1e6, "g": 2e6}),
                   rank_profile(1, 1, 1, 1, 1, 1, 1, 1, injected={"o_s": 1e6, "o_r": 7e6, "g": 1e6})]}
    assert models.injected_busiest(p, "o") == pytest.approx(8e-3)
    assert models.injected_busiest(p, "g") == pytest.approx(2e-3)


# --- synthetic studies -------------------------------------------------------

def run_row(i, bench, sweep, runtime, profile=None, status="ok", round_=0, **knobs_ns):
    k = {"o_s": 0.0, "o_r": 0.0, "g": 0.0, "G": 0.0, "L": 0.0, **knobs_ns}
    return {"id": i, "plan_id": i, "round": round_, "benchmark": bench, "kind": "kernel",
            "class": "S", "np": 2, "sweep": sweep,
            "knobs": json.dumps({kk: f"{v}ns" + ("/B" if kk == "G" else "") for kk, v in k.items()}),
            "o_s_ns": k["o_s"], "o_r_ns": k["o_r"], "g_ns": k["g"], "G_ns_per_byte": k["G"],
            "L_ns": k["L"], "command": "loggp run ...", "started_at": f"2026-01-01T00:00:{i:02d}",
            "finished_at": f"2026-01-01T00:00:{i:02d}", "wall_seconds": runtime + 0.3,
            "runtime_seconds": runtime, "verified": 1 if status == "ok" else 0,
            "exit_status": 0 if status == "ok" else 1, "status": status, "host": "h",
            "mpi_version": "mpiexec 5.0.2", "loggp_version": "0.1.0",
            "profile": json.dumps(profile) if profile else None,
            "stdout_path": f"runs/{i}/stdout.txt", "stderr_path": f"runs/{i}/stderr.txt",
            "error": None if status == "ok" else "verification failed"}


ARMED_COST_S = 0.03   # the armed layer's own cost per run, in the armed baseline and every setting
ROUNDS = 8


def synthetic_runs(noise=0.003, seed=3, armed=True, rounds=ROUNDS):
    """'lin': T = 1 s x (1 + 2 % per us of o) exactly as the model says
    (1000 messages each way on the busiest rank -> 2000 x o);
    'hidden': L costs nothing although the profile counts 400 dependent messages.
    Each round: the zero-knob baseline, the armed one (ARMED_COST_S more) and the settings."""
    rng = np.random.default_rng(seed)
    prof = {"size": 2, "engine": "libfabric:shm",
            "ranks": [rank_profile(r, 10000, 10000, 0, 400, 0, 0, 0, size=2) for r in (0, 1)]}
    cost = ARMED_COST_S if armed else 0.0
    rows, i = [], 0
    for rep in range(rounds):
        for bench in ("lin", "hidden"):
            i += 1
            rows.append(run_row(i, bench, "baseline", 1.0 * (1 + noise * rng.standard_normal()), prof, round_=rep))
            if armed:
                i += 1
                rows.append(run_row(i, bench, "armed", (1.0 + cost) * (1 + noise * rng.standard_normal()), prof,
                                    round_=rep, o_s=1.0, o_r=1.0, g=1.0, G=0.001, L=1.0))
            for o_us in (1, 2, 5, 10):
                i += 1
                t = 1.0 + 10000 * 2 * o_us * 1e-6 if bench == "lin" else 1.0
                rows.append(run_row(i, bench, "o", (t + cost) * (1 + noise * rng.standard_normal()), prof,
                                    round_=rep, o_s=o_us * 1000.0, o_r=o_us * 1000.0))
            for l_us in (10, 50):
                i += 1
                rows.append(run_row(i, bench, "L", (1.0 + cost) * (1 + noise * rng.standard_normal()), prof,
                                    round_=rep, L=l_us * 1000.0))
    i += 1
    rows.append(run_row(i, "lin", "L", 9.9, prof, status="unverified", L=50000.0))
    return rows


def test_linear_slowdown_gives_the_right_slope_and_the_model_agrees():
    curves, baselines, problems, _ = analyze.analyse({}, synthetic_runs())
    lin_o = next(c for c in curves if c.benchmark == "lin" and c.knob == "o")
    assert [p.value for p in lin_o.points] == [0, 1, 2, 5, 10]
    assert lin_o.sensitivity == pytest.approx(2.0, rel=0.03)       # % per us
    assert lin_o.fit.r2 > 0.99
    # the sensitivity: paired with the armed run of each round, the layer's own cost cancelled
    assert lin_o.resolved and lin_o.slope_low < lin_o.sensitivity < lin_o.slope_high
    assert 1.9 < lin_o.slope_low and lin_o.slope_high < 2.1
    assert lin_o.model_slope == pytest.approx(2.0, rel=0.01)
    # 10000 point-to-point + 5 alltoalls (1 message each on 2 ranks), each way
    assert lin_o.profile_count == 2 * 10005
    assert lin_o.effective_count == pytest.approx(20000, rel=0.03)
    assert lin_o.verdict.startswith("model agrees")
    assert lin_o.flags == []
    top = lin_o.points[-1]
    # the slowdown a user reads is against the unperturbed program: the layer's cost is in it
    assert top.slowdown == pytest.approx(1.2 + ARMED_COST_S, rel=0.01) and top.low <= 1.23 <= top.high * 1.005
    assert top.model == pytest.approx(1.2, rel=0.01)
    assert len(problems) == 1 and problems[0]["status"] == "unverified"
    assert baselines[("lin", 2, "S")]["n"] == ROUNDS


def test_the_armed_layers_cost_lands_on_no_slope_and_none_holding_zero_is_a_sensitivity():
    curves, *_ = analyze.analyse({}, synthetic_runs())
    hidden_L = next(c for c in curves if c.benchmark == "hidden" and c.knob == "L")
    assert not hidden_L.resolved and hidden_L.sensitivity is None
    assert hidden_L.slope_text().startswith("no effect resolved, below ")
    # without the armed baseline, the layer's 0.03 s per run lands on L: a resolved slope that is not L's
    unarmed, *_ = analyze.analyse({}, synthetic_runs(armed=False))
    against_zero = [dict(r, runtime_seconds=r["runtime_seconds"] + ARMED_COST_S * (r["sweep"] != "baseline"))
                    for r in synthetic_runs(armed=False)]
    blamed, *_ = analyze.analyse({}, against_zero)
    assert next(c for c in blamed if c.benchmark == "hidden" and c.knob == "L").resolved
    assert not next(c for c in unarmed if c.benchmark == "hidden" and c.knob == "L").resolved


def test_a_slope_says_the_precision_it_reached_against_the_studys_goal():
    curves, *_ = analyze.analyse({"precision": "2%"}, synthetic_runs())
    lin_o = next(c for c in curves if c.benchmark == "lin" and c.knob == "o")
    assert lin_o.goal.relative == 0.02 and "(goal 2%)" in lin_o.slope_text()
    reached = lin_o.slope.half_width / lin_o.sensitivity
    assert f"within {100 * reached:.2g} %" in lin_o.slope_text() and lin_o.precise == (reached <= 0.02)


def test_model_and_measurement_parting_ways_is_said():
    curves, *_ = analyze.analyse({}, synthetic_runs())
    hidden_o = next(c for c in curves if c.benchmark == "hidden" and c.knob == "o")
    assert "hides" in hidden_o.verdict and "no effect resolved, below" in hidden_o.verdict
    assert abs(hidden_o.fit.slope) < 0.1
    assert hidden_o.slope_low < 0 < hidden_o.slope_high


def test_a_resolved_slope_is_judged_by_itself_where_the_largest_setting_has_too_few_pairs(tmp_path):
    """Four rounds: o's slope pools the pairs of its four settings (16) and is resolved, but
    o = 10 us alone has 4 pairs, too few for an interval. The verdict comes from the slope,
    says why in words, and nothing the report writes holds an infinite bound."""
    runs = synthetic_runs(rounds=4)
    curves, *_ = analyze.analyse({}, runs)
    lin_o = next(c for c in curves if c.benchmark == "lin" and c.knob == "o")
    top = lin_o.points[-1]
    assert lin_o.resolved and not top.bounded and top.pairs == 4
    assert lin_o.verdict.startswith("model agrees"), lin_o.verdict
    assert f"too few pairs for an interval: 4 of the {precision.MIN_SAMPLES} needed" in lin_o.verdict
    assert "inf" not in lin_o.verdict
    results = str(tmp_path / "res")
    write_store(results, runs)
    page = re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", "", open(report.write(results)).read())
    assert not re.search(r"(?i)\binf\b|\bnan\b", page)
    for name in ("slowdown.csv", "sensitivity.csv"):
        with open(os.path.join(results, "report", name)) as f:
            cells = [v for row in csv.reader(f) for v in row]
        assert not [v for v in cells if v.lower() in ("inf", "-inf", "nan")], name


def test_pairs_broken_by_failed_runs_still_give_a_finite_interval_when_the_runs_allow():
    """Twelve rounds; three zero-knob runs and four o = 10 us runs failed in other rounds:
    5 pairs remain (too few), but 9 and 8 runs on the two sides bound the unpaired ratio."""
    runs = synthetic_runs(rounds=12)
    for r in runs:
        if r["benchmark"] == "lin" and ((r["sweep"] == "baseline" and r["round"] in (0, 1, 2)) or
                                        (r["o_s_ns"] == 10000.0 and r["round"] in (3, 4, 5, 6))):
            r.update(status="failed", runtime_seconds=None)
    curves, *_ = analyze.analyse({}, runs)
    top = next(c for c in curves if c.benchmark == "lin" and c.knob == "o").points[-1]
    assert top.bounded and top.pairs is None and top.low < top.slowdown < top.high
    assert top.low == pytest.approx(1.23, abs=0.02) and top.high == pytest.approx(1.23, abs=0.02)
    # with pairs enough they decide, as before
    paired_top = next(c for c in analyze.analyse({}, synthetic_runs(rounds=12))[0]
                      if c.benchmark == "lin" and c.knob == "o").points[-1]
    assert paired_top.bounded and paired_top.pairs == 12


def test_an_unresolved_slope_claims_no_precision_and_no_count():
    curves, *_ = analyze.analyse({"precision": "2%"}, synthetic_runs())
    hidden_L = next(c for c in curves if c.benchmark == "hidden" and c.knob == "L")
    assert hidden_L.slope.bounded and hidden_L.slope_low < 0 < hidden_L.slope_high
    # a precision reached is a sensitivity's, and an interval holding zero is none
    assert "within" not in hidden_L.slope_text() and "goal" not in hidden_L.slope_text()
    assert hidden_L.effective_count is None and not hidden_L.precise


def test_a_slope_of_too_few_pairs_has_no_bounds_and_is_not_compared():
    # one round: 4 and 2 pairs a slope, fewer than an interval needs
    curves, *_ = analyze.analyse({}, synthetic_runs(rounds=1))
    assert curves
    for c in curves:
        assert not c.slope.bounded and c.slope.n < precision.MIN_SAMPLES
        assert c.slope_low is None and c.slope_high is None and c.sensitivity is None
        assert c.model_slope is not None and c.verdict.endswith(": not compared"), c.verdict


def judged(slope, model_slope, top_low, top_high, top_model=None):
    """The verdict of an o curve whose slope (%/us) is the Interval slope, with a largest
    setting of 10 us whose slowdown's interval is [top_low, top_high]."""
    top = analyze.Point(10.0, 8, 1.0, (top_low + top_high) / 2, top_low, top_high, top_model, None, 8)
    curve = analyze.Curve("b", 2, None, "o", 1.0, [analyze.Point(0.0, 8, 1.0, 1.0, 0.99, 1.01), top],
                          slope=slope, model_slope=model_slope)
    return analyze.verdict(curve)


def test_the_model_agrees_within_the_tolerance_both_ends_included():
    at = analyze.AGREEMENT
    # the measured slope at 1.5x and at 1/1.5 of the model's: agreement, its edges included
    assert judged(precision.Interval(3.0, 2.9, 3.1, 8), 3.0 / at, 1.95, 2.05).startswith("model agrees")
    assert judged(precision.Interval(2.0, 1.9, 2.1, 8), 2.0 * at, 1.95, 2.05).startswith("model agrees")
    # just past either edge, and far below: the slopes part ways
    assert judged(precision.Interval(3.01, 2.9, 3.1, 8), 3.0 / at, 1.95, 2.05).startswith("measured 1.5x the model")
    assert judged(precision.Interval(1.99, 1.9, 2.1, 8), 2.0 * at, 1.95, 2.05).startswith("measured 0.66x the model")
    assert judged(precision.Interval(1.0, 0.9, 1.1, 8), 2.0, 1.95, 2.05).startswith("measured 0.50x the model")


def test_a_model_of_no_effect_against_a_resolved_slope_is_said():
    assert judged(precision.Interval(2.0, 1.9, 2.1, 8), 0.0, 1.15, 1.25) == \
        "the model predicts no effect but the runtime moved"


def test_an_unresolved_slope_bounds_the_effect_by_its_farther_end():
    # no effect resolved, below 3 %/us: a model of 2 %/us lies inside, on either side of zero
    for low, high in ((-3.0, 1.0), (-1.0, 3.0)):
        said = judged(precision.Interval(0.5, low, high, 8), 2.0, 0.9, 1.1)
        assert said.endswith("lies inside that bound: too noisy to tell"), (low, high, said)
    # a model exactly at the bound is not beyond it; one past it is
    assert judged(precision.Interval(0.5, -2.0, 1.0, 8), 2.0, 0.9, 1.1).endswith("too noisy to tell")
    assert judged(precision.Interval(0.5, -2.0, 1.0, 8), 2.01, 0.9, 1.1).endswith("the program hides the delay")


def test_a_largest_setting_whose_interval_touches_one_or_the_model_shows_no_effect_or_holds_it():
    resolved = precision.Interval(2.0, 1.9, 2.1, 8)
    # [1.0, 1.4] holds a slowdown of 1: no effect seen there, and the model's 1.2x inside it
    assert judged(resolved, 2.0, 1.0, 1.4).startswith("too noisy to tell: the model's 1.20x lies inside")
    # the model exactly at the interval's top is inside it too; just above, the program hides the delay
    assert judged(resolved, 2.0, 0.9, 1.2, top_model=1.2).startswith("too noisy to tell")
    assert judged(resolved, 2.0, 0.9, 1.2, top_model=1.21).endswith("the program hides the delay")


def test_unpaired_runs_bound_a_slowdown_from_the_smallest_sample_that_allows_it():
    enough = precision.MIN_SAMPLES
    assert analyze.unpaired_enough([1.0] * enough, [1.0] * enough)
    assert not analyze.unpaired_enough([1.0] * (enough - 1), [1.0] * 50)
    assert not analyze.unpaired_enough([1.0] * 50, [1.0] * (enough - 1))


def test_the_baseline_is_the_median_run_its_spread_the_sample_one_and_its_counts_the_median():
    import statistics
    runs = synthetic_runs()
    base = [r for r in runs if r["benchmark"] == "lin" and r["sweep"] == "baseline"]
    base[0]["runtime_seconds"] = 3.0          # one slow run moves a mean, not the median
    heavy = json.loads(base[1]["profile"])    # one run's profile counting ten times the messages
    for rank in heavy["ranks"]:
        rank["sent"]["messages"] *= 10
        rank["received"]["messages"] *= 10
    base[1]["profile"] = json.dumps(heavy)
    _, baselines, *_ = analyze.analyse({}, runs)
    times = [r["runtime_seconds"] for r in base]
    got = baselines[("lin", 2, "S")]
    assert got["median_s"] == pytest.approx(statistics.median(times), rel=1e-12)
    assert got["cv"] == pytest.approx(statistics.stdev(times) / statistics.mean(times), rel=1e-12)
    assert got["counts"]["network_messages"] == baselines[("hidden", 2, "S")]["counts"]["network_messages"]


# --- calibration -------------------------------------------------------------

def test_calibration_input(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"regimes": [
        {"m_min": 0, "m_max": 8192, "T0_us": 1.2, "B_bytes_per_us": 3000},
        {"m_min": 8193, "m_max": 4194304, "T0_us": 5.0, "B_bytes_per_us": 8000}]}))
    regimes = calibration.load(str(path))
    assert calibration.base_values(regimes) == (1.2, 8000)
    # 1/B' = 1/8000 + 0.5 ns/B = 0.000125 + 0.0005 us/B
    assert calibration.bandwidth(8000, 0.5) == pytest.approx(1 / 0.000625)
    assert calibration.added_T0_us("o", 3) == 6 and calibration.added_T0_us("G", 3) == 0
    # As `loggp calibrate` writes it: under "baseline", a flat regime with B = null.
    path.write_text(json.dumps({"schema": 1, "baseline": {"regimes": [
        {"m_min": 1, "m_max": 4096, "T0_us": 1.3, "B_bytes_per_us": 6000.0},
        {"m_min": 5120, "m_max": 14336, "T0_us": 1382.0, "B_bytes_per_us": 12000.0},
        {"m_min": 16384, "m_max": 1048576, "T0_us": 1264.0, "B_bytes_per_us": None}]}}))
    assert calibration.base_values(calibration.load(str(path))) == (1.3, 12000.0)
    # the folder `loggp calibrate --out DIR` wrote stands for its calibration.json
    assert calibration.base_values(calibration.load(str(tmp_path))) == (1.3, 12000.0)
    path.write_text('{"regimes": [{"m_min": 0, "m_max": 1, "T0_us": 1, "B_bytes_per_us": 0}]}')
    with pytest.raises(calibration.CalibrationError, match="B_bytes_per_us"):
        calibration.load(str(path))
    path.write_text('{"regimes": [{"m_min": 0, "T0_us": 1, "B_bytes_per_us": 2}]}')
    with pytest.raises(calibration.CalibrationError, match="'m_max'"):
        calibration.load(str(path))
    path.write_text("{not json")
    with pytest.raises(calibration.CalibrationError, match="not JSON"):
        calibration.load(str(path))
    # the verdict of a judged calibration; none for files without one
    path.write_text(json.dumps({"verdict": "unresolved", "sentence": "noise", "regimes": []}))
    assert calibration.verdict(str(tmp_path)) == {"verdict": "unresolved", "sentence": "noise",
                                                  "verdicts_txt": str(tmp_path / "verdicts.txt")}
    path.write_text(json.dumps({"pass": True}))
    assert calibration.verdict(str(path)) is None
    assert calibration.verdict(str(tmp_path / "absent.json")) is None
    # as `loggp calibrate --no-baseline` writes it: knobs judged, no baseline run to fit
    path.write_text(json.dumps({"schema": "loggp-calibration/1", "knobs": {"L": {}}, "pass": True}))
    with pytest.raises(calibration.CalibrationError, match="made with `loggp calibrate --no-baseline`; rerun"):
        calibration.load(str(path))


# --- the report --------------------------------------------------------------

def write_store(results_dir, runs):
    os.makedirs(results_dir, exist_ok=True)
    s = store.Store(os.path.join(results_dir, store.DB_NAME))
    s.set_facts({"name": "synthetic", "study_path": "synthetic.toml", "host": "h",
                 "mpi_version": "mpiexec 5.0.2", "loggp_version": "0.1.0"})
    for r in runs:
        s.conn.execute("INSERT INTO plan (id, round, position, setting_key, benchmark, np, class,"
                       " sweep, knobs) VALUES (?, 0, ?, ?, ?, 2, 'S', ?, ?)",
                       (r["plan_id"], r["plan_id"], f"k{r['plan_id']}", r["benchmark"],
                        r["sweep"], r["knobs"]))
        s.record({k: v for k, v in r.items() if k != "id"})
    s.close()


def test_report_writes_html_plots_and_csv(tmp_path):
    results = str(tmp_path / "res")
    runs = synthetic_runs()
    write_store(results, runs)
    with open(os.path.join(results, "calibration.json"), "w") as f:
        json.dump({"regimes": [{"m_min": 0, "m_max": 8192, "T0_us": 1.2, "B_bytes_per_us": 3000}],
                   "verdict": "missed", "sentence": "On this machine 1 of 2 readings <miss>."}, f)
    path = report.write(results)
    out = os.path.join(results, "report")
    assert path == os.path.join(out, "report.html")
    page = open(path).read()
    # the knobs' own verdict here, where the reader looks first
    assert "Calibration here: missed</b>. On this machine 1 of 2 readings &lt;miss&gt;." in page
    assert os.path.join(results, "verdicts.txt") in page
    assert page.count("data:image/png;base64,") >= 4
    assert "calibration.json" in page and "unverified" in page and "model agrees" in page
    assert "Martin's figure set" in page and "T0 + n/B: where the messages fall" in page
    for stem in ("sensitivity", "knob_o", "knob_L", "linear_model", "drift", "figure_set_1", "figure_set_2",
                 "t0_nb"):
        for ext in ("png", "svg"):
            assert os.path.getsize(os.path.join(out, f"{stem}.{ext}")) > 1000
    with open(os.path.join(out, "runs.csv")) as f:
        assert len(list(csv.DictReader(f))) == len(runs)
    with open(os.path.join(out, "slowdown.csv")) as f:
        slow = list(csv.DictReader(f))
    assert len(slow) == 2 * (5 + 3)       # two benchmarks x (o: 0 + 4 values, L: 0 + 2)
    assert not [n for n in os.listdir(out) if n.startswith(".tmp-")]


@pytest.mark.parametrize("keep", ["nothing_ok", "baseline_only", "one_value"])
def test_report_on_thin_results_does_not_crash(tmp_path, keep):
    runs = synthetic_runs()
    if keep == "nothing_ok":
        runs = [dict(r, status="failed", runtime_seconds=None, error="exit status 3") for r in runs]
    elif keep == "baseline_only":
        runs = [r for r in runs if r["sweep"] == "baseline"]
    else:
        runs = [r for r in runs if r["sweep"] in ("baseline", "armed") or r["o_s_ns"] == 5000.0]
    results = str(tmp_path / "res")
    write_store(results, runs)
    page = open(report.write(results)).read()
    out = os.path.join(results, "report")
    assert "loggp study: synthetic" in page
    assert f"{len(runs)} recorded" in page
    with open(os.path.join(out, "slowdown.csv")) as f:
        slow = list(csv.DictReader(f))
    with open(os.path.join(out, "runs.csv")) as f:
        assert len(list(csv.DictReader(f))) == len(runs)
    if keep == "nothing_ok":
        assert page.count("exit status 3") == len(runs)
        assert f"0 ok, {len(runs)} not ok" in page and slow == []
    elif keep == "baseline_only":
        assert f"{len(runs)} ok, 0 not ok" in page
        assert "No knob sweep has two settings with successful runs yet" in page and slow == []
        assert not os.path.exists(os.path.join(out, "knob_o.png"))
    else:
        # o = 5 us against the unperturbed program: lin slows by 2000 x 5 us / 1 s = 1.10x, plus the
        # armed layer's own 0.03 s; hidden by that alone
        assert "slows down under o = 5 us: 1.13x" in page
        assert "the program hides the delay" in page and "model agrees" in page
        by_bench = {(r["benchmark"], float(r["value"])): float(r["slowdown"]) for r in slow}
        assert set(by_bench) == {("lin", 0.0), ("lin", 5.0), ("hidden", 0.0), ("hidden", 5.0)}
        assert by_bench[("lin", 5.0)] == pytest.approx(1.13, abs=0.01)
        assert by_bench[("hidden", 5.0)] == pytest.approx(1.03, abs=0.01)
        assert os.path.getsize(os.path.join(out, "knob_o.png")) > 1000


def test_the_report_lists_where_runs_ran_when_nodes_differ():
    runs = [{"benchmark": "cg", "host": "n1,n2"}, {"benchmark": "cg", "host": "n3,n4"},
            {"benchmark": "mg", "host": "n1,n2"}]
    table = report_sections.nodes_table(runs)
    assert "<td>n1,n2</td><td>2</td><td>cg 1, mg 1</td>" in table
    assert "<td>n3,n4</td><td>1</td><td>cg 1</td>" in table
    # one host for every run: nothing to say
    assert report_sections.nodes_table([{"benchmark": "cg", "host": "laptop"}] * 3) == ""


def test_the_runs_table_names_the_armed_baseline_and_only_the_knob_a_setting_moved():
    runs = synthetic_runs()
    armed = next(r for r in runs if r["sweep"] == "armed")
    assert report_runs.run_setting(armed).startswith("armed baseline")
    # a knob setting keeps the others at the armed step: only its own knob is named
    o_run = next(r for r in runs if r["sweep"] == "o")
    o_run = dict(o_run, knobs=json.dumps({"o_s": "5us", "o_r": "5us", "g": "1ns", "G": "0.001ns/B", "L": "1ns"}))
    assert report_runs.run_setting(o_run) == "o_s=5us o_r=5us"
    assert report_runs.run_setting(next(r for r in runs if r["sweep"] == "baseline")) == "baseline"
