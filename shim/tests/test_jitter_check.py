"""The statistics behind `loggp bench knobs --L-jitter` (pure functions)."""
import math
import random

import pytest

from loggp.shim import jitter_check as jc


def test_percentiles_interpolate_and_summary_is_exact():
    s = jc.summary([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s["mean"] == 3.0 and s["var"] == 2.0 and s["p50"] == 3.0
    assert s["p10"] == pytest.approx(1.4) and s["p90"] == pytest.approx(4.6)


@pytest.mark.parametrize("kind, shape", [("normal", None), ("exp", None), ("lognormal", 0.7), ("pareto", 4.0)])
def test_each_offset_has_mean_zero_and_the_set_spread(kind, shape):
    rng = random.Random(3)
    xs = [jc.offset(kind, 1000.0, shape, rng) for _ in range(200000)]
    s = jc.summary(xs, trim=0.0)
    assert abs(s["mean"]) < 20
    assert s["sd"] == pytest.approx(1000.0, rel=0.1 if kind == "pareto" else 0.03)


def test_the_longest_samples_are_left_out_of_mean_and_variance_only():
    s = jc.summary([1.0] * 999 + [1e9], trim=0.001)
    assert s["mean"] == 1.0 and s["var"] == 0.0 and s["p99"] == 1.0
    assert jc.summary([1.0] * 999 + [1e9], trim=0.0)["mean"] > 1e5


def test_exp_percentiles_match_the_closed_form():
    rng = random.Random(5)
    s = jc.summary([jc.offset("exp", 1000.0, None, rng) for _ in range(200000)])
    # Exp(mean 1000) - 1000: p-th percentile = -1000 ln(1 - p) - 1000
    assert s["p90"] == pytest.approx(-1000 * math.log(0.1) - 1000, rel=0.03)
    assert s["p50"] == pytest.approx(-1000 * math.log(0.5) - 1000, abs=15)


def test_draws_are_truncated_at_zero():
    rng = random.Random(1)
    draws = [jc.draw(500.0, "normal", 2000.0, None, rng) for _ in range(10000)]
    assert min(draws) == 0.0 and sum(d == 0.0 for d in draws) > 3000


def test_a_round_trip_holds_two_draws():
    base = [10000.0] * 50000
    s = jc.summary(jc.predicted_round_trips(base, 5000.0, "normal", 1000.0, None), trim=0.0)
    assert s["mean"] == pytest.approx(20000.0, abs=30)
    assert s["var"] == pytest.approx(2 * 1000.0 ** 2, rel=0.05)


def test_compare_flags_a_figure_off_its_prediction():
    predicted = jc.summary([float(x) for x in range(0, 100000, 10)])
    measured = dict(predicted, p90=predicted["p90"] * 1.5)
    verdicts = {name: ok for name, _, _, ok in jc.compare(measured, predicted)}
    assert not verdicts["p90"] and verdicts["mean"] and verdicts["p50"]


@pytest.mark.parametrize("text", ["gauss:1us", "normal", "normal:1us:2", "pareto:1us:x"])
def test_bad_settings_are_refused(text):
    with pytest.raises(ValueError, match=text.split(":")[0] if text != "normal" else "normal"):
        jc.split_jitter(text)


def test_bench_refuses_a_bad_jitter_before_running_anything():
    from tests.testkit import installed, run
    proc = run([installed("loggp"), "bench", "knobs", "--L-jitter", "gauss:1us"])
    assert proc.returncode == 2
    assert "--L-jitter 'gauss:1us'" in proc.stderr


# The whole law of each offset, not only its mean and sd: every kind keeps
# mean 0 and sd S whatever its shape, so only the distribution function tells
# a wrong family, sigma or alpha apart.
def _phi(z):
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _exact_cdf(kind, s, shape):
    if kind == "normal":
        return lambda x: _phi(x / s)
    if kind == "exp":
        return lambda x: 0.0 if x <= -s else -math.expm1(-(x + s) / s)
    if kind == "lognormal":
        m = s / math.sqrt(math.expm1(shape * shape))
        return lambda x: 0.0 if x <= -m else _phi((math.log((x + m) / m) + shape * shape / 2) / shape)
    xm = s * (shape - 1) * math.sqrt((shape - 2) / shape)
    mu = shape * xm / (shape - 1)
    return lambda x: 0.0 if x + mu <= xm else 1.0 - (xm / (x + mu)) ** shape


def _ks(sorted_xs, cdf):
    n = len(sorted_xs)
    return max(max((i + 1) / n - cdf(x), cdf(x) - i / n) for i, x in enumerate(sorted_xs))


SHAPES = [("normal", None), ("exp", None), ("lognormal", 0.5), ("lognormal", 1.0), ("lognormal", 2.0),
          ("pareto", 2.5), ("pareto", 3.0), ("pareto", 6.0)]
N_SHAPE = 40000
KS_LIMIT = 1.95 / math.sqrt(N_SHAPE)  # the KS test's 0.1 % critical value


@pytest.mark.parametrize("kind, shape", SHAPES)
def test_each_offset_follows_its_exact_law_and_no_other(kind, shape):
    rng = random.Random(11)
    xs = sorted(jc.offset(kind, 1000.0, shape, rng) for _ in range(N_SHAPE))
    assert _ks(xs, _exact_cdf(kind, 1000.0, shape)) < KS_LIMIT
    for other_kind, other_shape in SHAPES:
        if (other_kind, other_shape) != (kind, shape):
            d = _ks(xs, _exact_cdf(other_kind, 1000.0, other_shape))
            assert d > 3 * KS_LIMIT, f"draws near the law of {other_kind}:{other_shape} (KS {d:.4f})"
    # right skew: the median sits below the mean 0 for all but the normal
    median = xs[N_SHAPE // 2]
    assert abs(median) < 20 if kind == "normal" else median < -50


@pytest.mark.parametrize("kind, shape", [("lognormal", 0.5), ("pareto", 2.5), ("pareto", 6.0)])
def test_split_jitter_passes_the_shape_on_to_the_draws(kind, shape):
    got_kind, spread, got_shape = jc.split_jitter(f"{kind}:1us:{shape}")
    assert (got_kind, got_shape) == (kind, shape)


def test_split_jitter_defaults_match_the_docs():
    # docs/jitter.md: lognormal's SIGMA defaults to 1, pareto's ALPHA to 3
    assert jc.split_jitter("lognormal:1us")[2] == 1.0 and jc.split_jitter("pareto:1us")[2] == 3.0
    assert jc.split_jitter("exp:1us")[2] is None


@pytest.mark.parametrize("predicted, off, ok", [
    (20000.0, 3000.0, True), (20000.0, 3000.5, False),     # 15 % of the prediction, both sides
    (4000.0, 1000.0, True), (4000.0, 1000.5, False),       # below 6.67 us the 1 us floor applies
    (20000.0, -3000.0, True), (20000.0, -3000.5, False),   # and below the prediction alike
])
def test_a_figure_is_within_max_15_percent_or_1us_of_its_prediction(predicted, off, ok):
    predicted_summary = {name: predicted for name in ("mean", "sd", *(f"p{p}" for p in jc.PERCENTILES))}
    measured = dict(predicted_summary, p50=predicted + off)
    verdicts = {name: good for name, _, _, good in jc.compare(measured, predicted_summary)}
    assert verdicts["p50"] is ok and verdicts["mean"]


@pytest.mark.parametrize("off, ok", [(5000.0, True), (5000.5, False)])
def test_the_spread_is_within_25_percent(off, ok):
    predicted_summary = {name: 20000.0 for name in ("mean", "sd", *(f"p{p}" for p in jc.PERCENTILES))}
    measured = dict(predicted_summary, sd=20000.0 + off)
    assert {name: good for name, _, _, good in jc.compare(measured, predicted_summary)}["sd"] is ok


def test_percentiles_interpolate_between_the_two_nearest_samples():
    values = [0.0, 10.0, 20.0, 30.0]
    # k = 3 p / 100: both sides of each sample
    assert [jc.percentile(values, p) for p in (0, 33, 100 / 3, 34, 99, 100)] == \
        pytest.approx([0.0, 9.9, 10.0, 10.2, 29.7, 30.0])
