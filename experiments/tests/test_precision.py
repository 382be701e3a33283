"""Medians with order-statistic intervals, paired differences, slopes, the repeat-to-precision
loop and the three verdicts, on synthetic apparatus and machines (no timing of this one)."""
import math
import random

import pytest

from loggp.experiments import precision as pr
from tests import testkit


def test_median_interval_uses_the_order_statistics_around_the_median():
    values = list(range(1, 101))  # n = 100: ranks floor(50 - 9.8) = 40 and ceil(1 + 50 + 9.8) = 61
    interval = pr.median_interval(reversed(values))
    assert interval.estimate == 50.5
    assert (interval.low, interval.high, interval.n) == (40, 61, 100)
    assert interval.half_width == pytest.approx(10.5)


def test_too_few_samples_give_no_interval_and_never_a_verdict():
    assert pr.MIN_SAMPLES == 6  # 1 - 2 / 2**n >= 95 % first at n = 6: [min, max] of 5 covers 93.75 %
    short = pr.median_interval([1.0] * (pr.MIN_SAMPLES - 1))
    assert not short.bounded and short.as_dict()["low"] is None
    assert pr.verdict(short, pr.Goal(1.0, 0.5)) == pr.UNRESOLVED
    enough = pr.median_interval([1.0] * pr.MIN_SAMPLES)
    assert enough.bounded and pr.verdict(enough, pr.Goal(1.0, 0.5)) == pr.MET


def _coverage(n, j):
    """P(x_(j) <= median <= x_(n-j+1)) for n values: 1 - 2 P(Binomial(n, 1/2) < j)."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2 ** n


def test_small_samples_get_the_exact_binomial_ranks():
    values = list(range(1, 10))  # n = 9: P(B < 2) = 10/512 < 2.5 %, so [x_2, x_8], not the range
    interval = pr.median_interval(values)
    assert (interval.estimate, interval.low, interval.high) == (5, 2, 8)
    six = pr.median_interval([6, 1, 5, 2, 4, 3])
    assert (six.low, six.high) == (1, 6)
    assert not pr.median_interval([1, 2, 3, 4, 5]).bounded


def test_every_interval_covers_95_percent_and_one_rank_narrower_would_not():
    for n in range(pr.MIN_SAMPLES, 120):
        interval = pr.median_interval(range(1, n + 1))
        j = int(interval.low)
        assert interval.high == n - j + 1
        assert _coverage(n, j) >= 0.95 > _coverage(n, j + 1), n


def test_a_large_sample_gets_ranks_near_the_normal_approximation():
    n = 200_001   # far past where 0.5 ** n underflows
    interval = pr.median_interval(range(n))
    half = 1.96 * math.sqrt(n) / 2
    assert abs(interval.low - (n / 2 - half)) <= 2 and abs(interval.high - (n / 2 + half)) <= 2


def _c_ranks(first, last):
    """{n: j} from the C definition (loggp-knobs/core/order.c) the probe and loggp-layer-cost use."""
    proc = testkit.run([testkit.built("loggp-knobs/loggp-test-median-ranks"), first, last])
    assert proc.returncode == 0, proc.stderr
    return {int(n): int(j) for n, j in (line.split() for line in proc.stdout.splitlines())}


@pytest.mark.parametrize("first,last", [(0, 5000), (199_990, 200_010), (10**7 - 3, 10**7 + 3)])
def test_the_c_median_interval_has_these_ranks_for_every_n(first, last):
    c = _c_ranks(first, last)
    assert sorted(c) == list(range(first, last + 1))
    for n, j in c.items():
        ranks = pr._median_ranks(n)
        expected = 0 if ranks is None else ranks[0]   # 0: no interval, below MIN_SAMPLES
        assert j == expected, (n, j, ranks)


def test_the_c_median_ranks_refuse_a_bad_range():
    proc = testkit.run([testkit.built("loggp-knobs/loggp-test-median-ranks"), 5, "x"])
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_median_interval_covers_the_true_median_about_95_percent_of_the_time():
    rng = random.Random(3)
    covered = 0
    trials = 2000
    for _ in range(trials):
        # skewed: exponential with median ln 2
        sample = [rng.expovariate(1.0) for _ in range(40)]
        covered += pr.median_interval(sample).contains(math.log(2))
    assert 0.93 <= covered / trials <= 0.99


def test_median_interval_refuses_empty_or_nan():
    with pytest.raises(ValueError):
        pr.median_interval([])
    with pytest.raises(ValueError):
        pr.median_interval([1.0, math.nan])


def test_paired_differences_are_setting_minus_its_own_baseline():
    assert pr.paired_differences([10, 20, 30], [11, 25, 29]) == [1, 5, -1]
    with pytest.raises(ValueError, match="pairs need both"):
        pr.paired_differences([1, 2], [1])


def test_pairing_cancels_a_drift_that_unpaired_medians_keep():
    # the machine slows down run after run; each setting run beside its baseline
    drift = [0.5 * i for i in range(30)]
    baselines = [100 + d for d in drift]
    settings = [100 + d + 2.0 for d in drift]
    interval = pr.paired_interval(baselines, settings)
    assert interval.low == interval.high == 2.0


def test_theil_sen_slope_with_sen_interval_on_repeated_settings():
    rng = random.Random(5)
    xs, ds = [], []
    for x in (1.0, 2.0, 5.0, 10.0):
        for _ in range(12):
            xs.append(x)
            ds.append(0.3 + 1.5 * x + rng.gauss(0, 0.2))
    interval = pr.slope_interval(xs, ds)
    assert interval.contains(1.5)
    assert interval.half_width < 0.1
    # a constant cost lands in the intercept, not in the slope
    shifted = pr.slope_interval(xs, [d + 7 for d in ds])
    assert shifted.estimate == pytest.approx(interval.estimate)
    assert (shifted.low, shifted.high) == pytest.approx((interval.low, interval.high))


def test_sen_interval_covers_the_true_slope_about_95_percent_of_the_time():
    rng = random.Random(7)
    covered = 0
    trials = 600
    for _ in range(trials):
        xs = [x for x in (1.0, 2.0, 4.0) for _ in range(8)]
        ds = [2.0 * x + rng.expovariate(1.0) for x in xs]  # skewed noise
        covered += pr.slope_interval(xs, ds).contains(2.0)
    assert 0.92 <= covered / trials <= 0.995


def test_sen_interval_at_two_settings_has_the_rank_sum_ranks_symmetric_about_the_median():
    # Two settings: the slopes are the n1 n2 differences between the groups over dx, and
    # Kendall's S is 2U - n1 n2 with U the Mann-Whitney statistic, whose variance with the
    # settings' ties taken out is n1 n2 (n1 + n2 + 1) / 12. The interval's ends lie about
    # 1.96 sd(S) / 2 ranks either side of the middle, as many ranks from each end.
    rng = random.Random(11)
    n1 = n2 = 10
    xs = [1.0] * n1 + [3.0] * n2
    ds = [1.5 * x + rng.gauss(0, 1) for x in xs]
    interval = pr.slope_interval(xs, ds)
    slopes = [(ds[j] - ds[i]) / 2.0 for i in range(n1) for j in range(n1, n1 + n2)]
    below = sum(s < interval.low for s in slopes)
    above = sum(s > interval.high for s in slopes)
    assert below == above
    half_ranks = 1.96 * 2 * math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12) / 2
    assert abs((below + 1) - (len(slopes) / 2 - half_ranks)) <= 1, (below, half_ranks)



def _two_setting_slopes(n1, n2):
    """Differences at settings 0 (n1 of them) and 1 (n2): every slope between the groups is
    distinct and known, so the ranks of the interval's ends can be read off."""
    xs = [0.0] * n1 + [1.0] * n2
    ds = [0.0] * n1 + [float(10 * j) for j in range(n2)]
    ds[:n1] = [float(i) for i in range(n1)]
    return xs, ds, sorted(d1 - d0 for d0 in ds[:n1] for d1 in ds[n1:])


def test_sen_interval_is_bounded_exactly_where_its_ranks_reach_the_first_and_last_slope():
    # Two settings of n1 and n2: Var(S) = n1 n2 (n1 + n2 + 1) / 3 (4 Var(U), Mann-Whitney); the
    # interval runs from rank floor((N - 1.96 sd) / 2) to ceil((N + 1.96 sd) / 2) + 1 of N = n1 n2.
    # 4 + 4: Var 48, sd 6.93, ranks 1 and 16 of 16: [min, max], bounded at both ends at once
    xs, ds, slopes = _two_setting_slopes(4, 4)
    interval = pr.slope_interval(xs, ds)
    assert interval.bounded and (interval.low, interval.high) == (slopes[0], slopes[15])
    # 3 + 6: Var 60, sd 7.75, ranks 1 and 18 of 18: again [min, max]
    xs, ds, slopes = _two_setting_slopes(3, 6)
    interval = pr.slope_interval(xs, ds)
    assert interval.bounded and (interval.low, interval.high) == (slopes[0], slopes[17])
    # 3 + 4: Var 32, sd 5.66, rank 0 of 12 below the first: no interval
    xs, ds, _ = _two_setting_slopes(3, 4)
    assert not pr.slope_interval(xs, ds).bounded
    # 4 + 6: Var 88, sd 9.38, ranks 2 and 23 of 24: one slope in from each end
    xs, ds, slopes = _two_setting_slopes(4, 6)
    interval = pr.slope_interval(xs, ds)
    assert (interval.low, interval.high) == (slopes[1], slopes[22])

def test_theil_sen_is_robust_to_a_few_outlier_runs_a_least_squares_fit_is_not():
    xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] * 2
    ds = [2.0 * x for x in xs]
    ds[3] += 500  # one run the host took the CPU from
    assert pr.slope_interval(xs, ds).estimate == pytest.approx(2.0)


def test_slope_needs_two_settings_and_ratio_a_nonzero_one():
    with pytest.raises(ValueError, match="two settings"):
        pr.slope_interval([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="nonzero"):
        pr.ratio_interval(0, [1, 2])
    assert pr.ratio_interval(4.0, [8.0] * 10).estimate == 2.0


def test_precision_is_the_larger_of_its_parts():
    assert pr.KNOB_PRECISION.allowed(10_000) == pytest.approx(100)     # 1 % of 10 us, in ns
    assert pr.KNOB_PRECISION.allowed(500) == 20                         # 20 ns floor
    assert pr.KNOB_PRECISION.allowed(10.0, unit_ns=1000) == pytest.approx(0.1)  # in us
    assert pr.KNOB_PRECISION.allowed(0.0, unit_ns=1000) == pytest.approx(0.02)
    assert pr.SLOPE_PRECISION.allowed(-2.0) == pytest.approx(0.1)
    assert pr.KNOB_PRECISION.text() == "max(1%, 20ns)"
    with pytest.raises(ValueError):
        pr.Precision(0.0, 0.0)
    with pytest.raises(ValueError):
        pr.Precision(-0.01)


def test_parse_precision_and_budget():
    ns = {"20ns": 20.0, "1us": 1000.0}
    assert pr.parse_precision("1%", ns.__getitem__) == pr.Precision(0.01)
    assert pr.parse_precision("20ns", ns.__getitem__) == pr.Precision(0.0, 20.0)
    assert pr.parse_precision("2.5%,1us", ns.__getitem__) == pr.Precision(0.025, 1000.0)
    for bad in ("", "1", "1%,2%", "0%", "fast", "1 %"):
        with pytest.raises(ValueError, match="precision"):
            pr.parse_precision(bad, lambda t: (_ for _ in ()).throw(ValueError("no unit")))
    assert pr.parse_budget("90s") == 90
    assert pr.parse_budget("5min") == 300
    assert pr.parse_budget("1.5h") == 5400
    # the limits: at most 7 days, so 7 days itself and not a second more
    assert pr.parse_budget("168h") == 7 * 86400 and pr.parse_budget("604799s") == 604799
    with pytest.raises(ValueError, match="budget"):
        pr.parse_budget("604801s")
    for bad in ("5", "5 min", "0s", "-1s", "5m", None):
        with pytest.raises(ValueError, match="budget"):
            pr.parse_budget(bad)


def test_parse_precision_uses_the_knob_grammar_for_times():
    assert pr.parse_precision("1%,20ns") == pr.Precision(0.01, 20.0)
    with pytest.raises(ValueError, match="20NS"):
        pr.parse_precision("20NS")


def test_three_verdicts_at_both_sides_of_every_edge():
    goal = pr.Goal(10.0, 0.1)
    assert pr.verdict(pr.Interval(10.0, 9.95, 10.05, 20), goal) == pr.MET
    assert pr.verdict(pr.Interval(10.0, 9.9, 10.1, 20), goal) == pr.MET           # edges inclusive
    assert pr.verdict(pr.Interval(10.1, 10.05, 10.15, 20), goal) == pr.UNRESOLVED  # straddles the top
    assert pr.verdict(pr.Interval(9.9, 9.85, 9.95, 20), goal) == pr.UNRESOLVED     # straddles the bottom
    assert pr.verdict(pr.Interval(10.0, 9.0, 11.0, 20), goal) == pr.UNRESOLVED     # wider than the goal
    assert pr.verdict(pr.Interval(10.2, 10.11, 10.3, 20), goal) == pr.MISSED
    assert pr.verdict(pr.Interval(9.0, 8.8, 9.89, 20), goal) == pr.MISSED
    assert "above" in pr.reason(pr.Interval(10.2, 10.11, 10.3, 20), goal, "us")
    assert "below" in pr.reason(pr.Interval(9.0, 8.8, 9.89, 20), goal, "us")


def test_an_interval_touching_the_goal_at_one_point_is_unresolved_not_missed():
    goal = pr.Goal(10.0, 0.5)   # [9.5, 10.5], exact in binary
    # sharing the goal's edge, the interval is not disjoint from it: neither met nor missed
    assert pr.verdict(pr.Interval(9.25, 9.0, 9.5, 20), goal) == pr.UNRESOLVED
    assert pr.verdict(pr.Interval(10.75, 10.5, 11.0, 20), goal) == pr.UNRESOLVED
    # a hair beyond the edge, it is
    assert pr.verdict(pr.Interval(9.25, 9.0, math.nextafter(9.5, 0), 20), goal) == pr.MISSED
    assert pr.verdict(pr.Interval(10.75, math.nextafter(10.5, 11), 11.0, 20), goal) == pr.MISSED
    ceiling = pr.Ceiling(0.5, 0.25)
    assert pr.verdict(pr.Interval(0.75, 0.5, 1.0, 20), ceiling) == pr.UNRESOLVED


def test_several_readings_are_missed_over_unresolved_over_met_in_any_order():
    for verdicts in ([pr.MISSED, pr.UNRESOLVED], [pr.UNRESOLVED, pr.MISSED], [pr.MET, pr.UNRESOLVED, pr.MISSED]):
        assert pr.worst(verdicts) == pr.MISSED, verdicts
    assert pr.worst([pr.MET, pr.UNRESOLVED]) == pr.worst([pr.UNRESOLVED, pr.MET]) == pr.UNRESOLVED
    assert pr.worst([pr.MET, pr.MET]) == pr.MET and pr.worst([]) == pr.UNRESOLVED


def test_a_spread_is_the_interval_from_min_samples_values_and_no_effect_names_its_largest_bound():
    assert pr.spread([6, 1, 5, 2, 4, 3]) == ("95 %", 1, 6)
    assert pr.spread([5, 1, 4, 2, 3]) == ("min-max", 1, 5)
    text = pr.describe_effect(pr.Interval(-0.5, -3.0, 1.0, 30), "us")
    assert text == "no effect resolved, below 3 us"


def test_only_a_missed_verdict_makes_a_measuring_command_exit_3():
    assert pr.exit_status([pr.MET, pr.MISSED, pr.UNRESOLVED]) == pr.exit_status(iter([pr.MISSED])) == 3
    assert pr.exit_status([pr.MET, pr.UNRESOLVED, pr.UNRESOLVED]) == 0   # the noise hid it: not a failure
    assert pr.exit_status([pr.MET, "no goal", ""]) == pr.exit_status([]) == 0


def test_an_interval_holding_zero_never_has_a_sign():
    for low, high in ((-1.0, 1.0), (0.0, 3.0), (-3.0, 0.0), (-1e-12, 5.0)):
        interval = pr.Interval((low + high) / 2, low, high, 30)
        assert pr.sign(interval) == 0
        text = pr.describe_effect(interval, "us")
        assert text.startswith("no effect resolved") and "+" not in text and "-" not in text
    assert pr.sign(pr.Interval(1.0, 0.5, 1.5, 30)) == 1
    assert pr.sign(pr.Interval(-1.0, -1.5, -0.5, 30)) == -1
    assert pr.sign(pr.Interval(1.0, -math.inf, math.inf, 3)) == 0
    assert pr.describe_effect(pr.Interval(1.0, 0.5, 1.5, 30), "us").startswith("+1")


# ------------------------------------------------------------------ synthetic apparatus

class FakeClock:
    """Each measured pair costs one second of this clock."""
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class SyntheticApparatus:
    """An interleaved pair of runs: the armed baseline and the setting with `knob_us` on L.
    `scale` is the share of the knob the apparatus really adds, `leak` the share that shows
    up in o_r; `noise_us` the machine's run-to-run spread (heavy tailed: detours)."""
    def __init__(self, knob_us, scale=1.0, leak=0.0, noise_us=0.005, clock=None, seed=1):
        self.knob, self.scale, self.leak, self.noise = knob_us, scale, leak, noise_us
        self.rng = random.Random(seed)
        self.clock = clock
        self.calls = 0

    def _noise(self):
        jitter = self.rng.gauss(0, self.noise)
        if self.rng.random() < 0.05:
            jitter += self.rng.expovariate(1 / (20 * self.noise))
        return jitter

    def __call__(self):
        self.calls += 1
        if self.clock is not None:
            self.clock.now += 1.0
        armed_cost = 0.08  # the layer's own cost: on both sides of the pair, it cancels
        base = {"L": 1.0 + armed_cost, "o_r": 0.9 + armed_cost}
        setting = {"L": base["L"] + self.scale * self.knob, "o_r": base["o_r"] + self.leak * self.knob}
        return {k: (base[k] + self._noise(), setting[k] + self._noise()) for k in base}


def goals(knob_us):
    return {"L": pr.Goal.around(knob_us, pr.KNOB_PRECISION, unit_ns=1000),
            "o_r": pr.Goal.around(0.0, pr.KNOB_PRECISION, unit_ns=1000)}


def run(apparatus, budget_s, clock):
    return pr.repeat_to_precision(apparatus, goals(apparatus.knob), budget_s, clock=clock)


def test_a_faithful_apparatus_on_a_quiet_machine_is_met_and_stops_early():
    clock = FakeClock()
    outcomes, pairs = run(SyntheticApparatus(10.0, clock=clock), 300, clock)
    assert outcomes["L"].verdict == pr.MET and outcomes["o_r"].verdict == pr.MET
    assert pairs < 100 and not outcomes["L"].budget_ran_out
    assert outcomes["L"].as_dict("us")["precision_reached"] <= outcomes["L"].goal.tolerance


def test_an_apparatus_adding_nine_tenths_of_its_knob_is_missed():
    clock = FakeClock()
    outcomes, pairs = run(SyntheticApparatus(10.0, scale=0.9, clock=clock), 300, clock)
    assert outcomes["L"].verdict == pr.MISSED
    assert "below" in outcomes["L"].reason("us")
    assert outcomes["o_r"].verdict == pr.MET
    assert pairs < 300  # decided before the budget


def test_an_apparatus_leaking_a_fifth_of_its_knob_into_another_parameter_is_missed():
    clock = FakeClock()
    outcomes, _ = run(SyntheticApparatus(10.0, leak=0.2, clock=clock), 300, clock)
    assert outcomes["o_r"].verdict == pr.MISSED
    assert outcomes["L"].verdict == pr.MET


@pytest.mark.parametrize("scale,leak", [(0.9, 0.0), (1.0, 0.2), (1.0, 0.0)])
def test_on_a_noisy_machine_the_same_apparatus_is_unresolved_never_met(scale, leak):
    for seed in range(5):
        clock = FakeClock()
        # noise of 20 us against a 10 us knob, and a budget of 40 pairs
        apparatus = SyntheticApparatus(10.0, scale=scale, leak=leak, noise_us=20.0, clock=clock, seed=seed)
        outcomes, pairs = run(apparatus, 40, clock)
        assert pairs == 40
        for key, outcome in outcomes.items():
            assert outcome.verdict == pr.UNRESOLVED, (seed, key, outcome.reason("us"))
            assert outcome.budget_ran_out and "budget ran out" in outcome.reason("us")


def test_the_budget_is_never_overrun_by_a_new_pair():
    clock = FakeClock()
    apparatus = SyntheticApparatus(10.0, noise_us=20.0, clock=clock)
    pr.repeat_to_precision(apparatus, goals(10.0), 7.5, clock=clock)
    assert apparatus.calls == 8 and clock.now == 8.0  # started at 0..7 s, none at 8 s


def test_repeats_stop_at_the_pairs_asked_and_not_one_later():
    clock = FakeClock()
    apparatus = SyntheticApparatus(10.0, noise_us=20.0, clock=clock)
    outcomes, pairs = pr.repeat_to_precision(apparatus, goals(10.0), 300, clock=clock, max_pairs=7)
    assert pairs == apparatus.calls == 7 and outcomes["L"].budget_ran_out


def test_a_reading_settles_from_the_fewest_pairs_with_an_interval_and_at_exactly_its_tolerance():
    goal = pr.Goal(1.0, 0.5)
    six = pr.Reading(goal, [1.0, 1.1, 0.9, 1.05, 0.95, 1.0])   # [min, max] inside the goal
    assert len(six.differences) == pr.MIN_SAMPLES and six.settled()
    assert not pr.Reading(goal, six.differences[:-1]).settled()
    # across the goal's top edge, its half-width exactly the tolerance: more pairs would not
    # make it narrower than asked, so it is settled (unresolved)
    edge = pr.Reading(pr.Goal(0.0, 0.5), [0.5, 0.0, 1.0, 0.5, 0.5, 0.5])
    assert pr.verdict(edge.interval(), edge.goal) == pr.UNRESOLVED
    assert edge.interval().half_width == 0.5 and edge.settled()


def test_the_budget_ran_out_only_for_the_readings_it_left_unsettled():
    import itertools
    wide = itertools.cycle([0.0, 20.0, -20.0, 40.0, -40.0])
    clock = FakeClock()

    def measure_pair():   # "quiet" settles at once; "noisy" never narrows to its goal
        clock.now += 1.0
        return {"quiet": (1.0, 11.0), "noisy": (0.0, next(wide))}
    goal = {"quiet": pr.Goal(10.0, 0.5), "noisy": pr.Goal(10.0, 0.5)}
    outcomes, pairs = pr.repeat_to_precision(measure_pair, goal, 20, clock=clock)
    assert pairs == 20
    assert outcomes["quiet"].verdict == pr.MET and not outcomes["quiet"].budget_ran_out
    assert outcomes["noisy"].verdict == pr.UNRESOLVED and outcomes["noisy"].budget_ran_out
    assert "budget ran out" not in outcomes["quiet"].reason()
    # the same for a fixed set judged after the caller's budget ended
    assert not pr.judge_differences([10.0] * 10, 10.0, 0.5, budget_ran_out=True)["budget_ran_out"]


def test_a_pair_without_a_reading_is_an_error_not_a_silent_gap():
    with pytest.raises(ValueError, match="o_r"):
        pr.repeat_to_precision(lambda: {"L": (1.0, 2.0)}, goals(1.0), 10, clock=FakeClock())


def test_a_ceiling_is_met_below_it_missed_wholly_above_and_unresolved_across():
    ceiling = pr.Ceiling(0.01, 0.005)
    assert pr.verdict(pr.Interval(-0.5, -0.9, 0.01, 20), ceiling) == pr.MET        # any cost below, edge included
    assert pr.verdict(pr.Interval(0.02, 0.011, 0.03, 20), ceiling) == pr.MISSED
    assert pr.verdict(pr.Interval(0.01, 0.005, 0.015, 20), ceiling) == pr.UNRESOLVED
    assert pr.verdict(pr.Interval(0.0, -math.inf, math.inf, 3), ceiling) == pr.UNRESOLVED
    assert "wholly above the goal at most" in pr.reason(pr.Interval(0.02, 0.011, 0.03, 20), ceiling)


def test_judged_differences_say_whether_more_pairs_would_change_them():
    far_below = [0.001 * (i % 5) - 0.1 for i in range(20)]
    out = pr.judge_at_most(far_below, 0.01, 0.005)
    assert out["verdict"] == pr.MET and out["settled"] and not out["budget_ran_out"]
    across = [0.01 + 0.02 * ((-1) ** i) * (i % 7) for i in range(20)]  # wide, across the ceiling
    out = pr.judge_at_most(across, 0.01, 0.005)
    assert out["verdict"] == pr.UNRESOLVED and not out["settled"] and out["budget_ran_out"]
    # the caller says its budget did not end the repeats: the reason must not claim it did
    out = pr.judge_differences(across, 0.01, 0.005, budget_ran_out=False)
    assert out["verdict"] == pr.UNRESOLVED and not out["budget_ran_out"] and "budget" not in out["reason"]
    assert not pr.judge_differences([1.0] * 3, 1.0, 0.1)["settled"]  # too few pairs for an interval
