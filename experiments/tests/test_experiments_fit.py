"""The T0 + m/B fit on synthetic data with known parameters, a regime break and noise."""
import json

import numpy as np
import pytest

from loggp.experiments import fit
from loggp.knobs.params import LogGP
from exp_synthetic import synthetic_probe

SIZES = [2 ** i for i in range(0, 21)] + [3 * 2 ** i for i in range(8, 19)]


def two_regimes(m, noise=0.0, seed=3):
    """Eager: T0 1.2 us, 4000 B/us up to 8 KiB; rendezvous: T0 5 us, 12000 B/us."""
    m = np.asarray(sorted(m), dtype=float)
    t = np.where(m <= 8192, 1.2 + m / 4000.0, 5.0 + m / 12000.0)
    if noise:
        t = t * (1 + noise * np.random.default_rng(seed).standard_normal(len(t)))
    return m, t


def test_fit_line_recovers_exact_line():
    m = np.array([1, 10, 100, 1000.0])
    t0, s, sse = fit.fit_line(m, 2.0 + 0.01 * m)
    assert t0 == pytest.approx(2.0)
    assert s == pytest.approx(0.01)
    assert sse == pytest.approx(0, abs=1e-20)


def test_fit_line_keeps_parameters_physical():
    m = np.array([1, 2, 4, 8.0])
    t0, s, _ = fit.fit_line(m, np.array([1.05, 1.04, 1.02, 1.0]))  # falling: slope would be negative
    assert s == 0 and t0 == pytest.approx(1.0275, rel=1e-3)
    t0, s, _ = fit.fit_line(np.array([1000, 2000, 4000.0]), np.array([0.5, 1.5, 3.5]))  # T0 would be < 0
    assert t0 == 0 and s > 0


def test_segments_find_the_protocol_switch_with_noise():
    m, t = two_regimes(SIZES, noise=0.01)
    regimes = fit.segment_fit(m, t)
    assert len(regimes) == 2
    eager, rdv = regimes
    assert eager.m_max == 8192 and rdv.m_min == 12288
    assert eager.T0_us == pytest.approx(1.2, rel=0.05)
    assert eager.B_bytes_per_us == pytest.approx(4000, rel=0.05)
    assert rdv.T0_us == pytest.approx(5.0, rel=0.15)
    assert rdv.B_bytes_per_us == pytest.approx(12000, rel=0.05)
    for r in regimes:
        assert len(r.residuals_rel) == r.points
        assert r.rms_rel_residual < 0.03 and r.max_rel_residual < 0.06


def test_one_regime_is_not_split():
    m = np.array(SIZES, dtype=float)
    m.sort()
    t = (1.0 + m / 5000.0) * (1 + 0.005 * np.random.default_rng(7).standard_normal(len(m)))
    regimes = fit.segment_fit(m, t)
    assert len(regimes) == 1
    assert regimes[0].B_bytes_per_us == pytest.approx(5000, rel=0.03)


def test_noise_above_the_floor_rarely_buys_a_regime_and_never_hides_the_switch():
    # 3 % noise, above the fit's 2 % floor, where BIC's penalty alone decides: over 200
    # seeded samples a straight line stays one regime and the protocol switch is found in
    # most (172 and 161 here); a penalty of (2k - 1) log n instead of (3k - 1) log n, or
    # none on n, splits a straight line in over half of them
    m = np.array(sorted(SIZES), dtype=float)
    line = 1.2 + m / 4000.0
    kept = sum(len(fit.segment_fit(m, line * (1 + 0.03 * np.random.default_rng(seed).standard_normal(len(m))))) == 1
               for seed in range(200))
    found = sum(len(fit.segment_fit(*two_regimes(SIZES, noise=0.03, seed=seed))) == 2 for seed in range(200))
    assert kept >= 150 and found >= 140, (kept, found)


def test_bad_series_are_rejected():
    with pytest.raises(fit.FitError, match="at least 2"):
        fit.segment_fit([8], [1.0])
    with pytest.raises(fit.FitError, match="positive"):
        fit.segment_fit([1, 2, 4], [1.0, -2.0, 3.0])
    with pytest.raises(fit.FitError, match="increasing"):
        fit.segment_fit([4, 2, 8], [1.0, 2.0, 3.0])


def test_each_check_of_a_series_holds_at_its_edge():
    # 2 sizes are the fewest a line needs: one regime through both
    (one,) = fit.segment_fit([8, 4096], [1.0, 3.0])
    assert (one.m_min, one.m_max, one.points) == (8, 4096, 2)
    assert one.us_per_byte == pytest.approx(2.0 / 4088) and one.T0_us == pytest.approx(1.0 - 8 * 2.0 / 4088)
    # a size measured twice is not strictly increasing, however close its times
    with pytest.raises(fit.FitError, match="increasing"):
        fit.segment_fit([8, 8, 64], [1.0, 1.0, 2.0])
    # a time of exactly 0 is no time (a relative residual divides by it)
    with pytest.raises(fit.FitError, match=r"positive, got .*0\.0"):
        fit.segment_fit([1, 2, 4], [1.0, 0.0, 3.0])


def test_a_regime_measured_at_two_sizes_under_knobs_is_fitted_and_one_size_is_refused():
    m, t = two_regimes([1, 64, 1024, 4096, 8192, 16384, 65536, 262144])
    template = fit.segment_fit(m, t)
    assert [(r.m_min, r.m_max) for r in template] == [(1, 8192), (16384, 262144)]
    # the knobbed run measured the rendezvous regime at two of its sizes: a line through them
    km = np.array([1, 64, 4096, 16384, 65536], dtype=float)
    kt = np.where(km <= 8192, 2.2 + km / 4000.0, 6.0 + km / 12000.0)
    eager, rendezvous = fit.fit_in_regimes(km, kt, template)
    assert (rendezvous.m_min, rendezvous.m_max, rendezvous.points) == (16384, 65536, 2)
    assert rendezvous.T0_us == pytest.approx(6.0) and rendezvous.us_per_byte == pytest.approx(1 / 12000.0)
    with pytest.raises(fit.FitError, match="has 1 measured size"):
        fit.fit_in_regimes(km[:-1], kt[:-1], template)


def test_a_regime_takes_at_least_three_sizes_by_default():
    # two sizes always lie on a line: a regime of two would explain any pair off the trend, so
    # the last two sizes, off the line by 30 %, are no regime of their own (min_points = 3)
    m = np.array([8, 64, 512, 4096, 32768], dtype=float)
    t = 1.0 + m / 4000.0
    t[-2:] *= 1.3
    assert len(fit.segment_fit(m, t)) == 1
    # with three sizes each, two regimes are found
    m6 = np.array([8, 64, 512, 4096, 32768, 65536], dtype=float)
    t6 = np.where(m6 <= 512, 1.0 + m6 / 4000.0, 5.0 + m6 / 12000.0)
    assert [(r.m_min, r.m_max) for r in fit.segment_fit(m6, t6)] == [(8, 512), (4096, 65536)]


def test_knob_prediction_matches_knobbed_fit():
    base = synthetic_probe(SIZES)
    knobs = {"o_s": 2.0, "o_r": 2.0, "L": 5.0, "G": 0.5}
    knobbed = synthetic_probe(SIZES, knobs=knobs)
    bm, bt = fit.series(base)
    regimes = fit.segment_fit(bm, bt)
    m, t = fit.series(knobbed)
    measured = fit.fit_in_regimes(m, t, regimes)
    predicted = fit.predict_regimes(regimes, LogGP(o_s=2000.0, o_r=2000.0, L=5000.0, G=0.5))
    for row in fit.compare(predicted, measured):
        assert abs(row["T0_error_us"]) < 0.05 * row["T0_predicted_us"] + 0.1
        assert abs(row["G_error_ns_per_byte"]) < 0.02 * row["G_predicted_ns_per_byte"] + 0.005
    # A broken G (half) is visible in the comparison.
    half = synthetic_probe(SIZES, knobs=knobs, scale={"G": 0.5})
    m, t = fit.series(half)
    rows = fit.compare(predicted, fit.fit_in_regimes(m, t, regimes))
    assert rows[-1]["G_error_ns_per_byte"] < -0.2


def test_units():
    k = fit.knob_increments({"os": "250ns", "o": "1us", "L": "2ms", "G": "2us/KiB"})
    assert (k.o_s, k.o_r, k.L) == (250, 1000, 2_000_000)
    assert k.G == pytest.approx(2000 / 1024, abs=1e-3)  # loggp-knobs keeps whole ps per byte
    with pytest.raises(fit.FitError, match="'5 parsecs'"):
        fit.knob_increments({"L": "5 parsecs"})
    with pytest.raises(fit.FitError, match="'1us'"):
        fit.knob_increments({"G": "1us"})


def test_command_line_writes_plot_and_json(tmp_path, capsys):
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(synthetic_probe(SIZES)))
    out_png, out_json = tmp_path / "fit.png", tmp_path / "fit.json"
    assert fit.main([str(probe), "--plot", str(out_png), "--json", str(out_json)]) == 0
    assert out_png.read_bytes()[:4] == b"\x89PNG"
    assert out_png.with_suffix(".svg").read_text().lstrip().startswith("<?xml")
    regimes = json.loads(out_json.read_text())["regimes"]
    assert len(regimes) >= 2 and all(r["B_bytes_per_us"] > 0 and r["T0_us"] >= 0 for r in regimes)
    assert "T0 [us]" in capsys.readouterr().out
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def test_command_line_comparison(tmp_path, capsys):
    base, knobbed = tmp_path / "base.json", tmp_path / "knobbed.json"
    base.write_text(json.dumps(synthetic_probe(SIZES)))
    knobbed.write_text(json.dumps(synthetic_probe(SIZES, knobs={"L": 10.0})))
    assert fit.main([str(knobbed), "--baseline", str(base), "--L", "10us", "--json", str(tmp_path / "c.json")]) == 0
    rows = json.loads((tmp_path / "c.json").read_text())["comparison"]
    assert all(abs(r["T0_error_us"]) < 0.2 for r in rows)


@pytest.mark.parametrize("args, message", [
    (["missing.json"], "does not exist"),
    (["{probe}", "--L", "5us"], "--baseline"),
    (["{probe}", "--baseline", "{probe}", "--L", "5 lightyears"], "'5 lightyears'"),
    (["{probe}", "--plot", "out.pdf"], "out.pdf"),
    (["{notjson}"], "not valid JSON"),
    (["{probe}", "--max-regimes", "0"], "--max-regimes 0"),
])
def test_command_line_bad_input_exits_2(tmp_path, capsys, args, message):
    probe, notjson = tmp_path / "p.json", tmp_path / "n.json"
    probe.write_text(json.dumps(synthetic_probe([1, 8, 64])))
    notjson.write_text("{oops")
    argv = [a.format(probe=probe, notjson=notjson) for a in args]
    assert fit.main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_size_at_a_regimes_first_size_belongs_to_it_not_to_the_one_before():
    # both sides of the switch measured: 8191 B is eager, 8192 B the first of the next regime
    sizes = [1, 64, 1024, 4096, 8191, 8192, 8193, 16384, 65536]
    m = np.asarray(sizes, dtype=float)
    t = np.where(m < 8192, 1.2 + m / 4000.0, 5.0 + m / 12000.0)
    template = fit.segment_fit(m, t)
    assert [(r.m_min, r.m_max) for r in template] == [(1, 8191), (8192, 65536)]
    # the same sizes under knobs: each regime keeps its own sizes, and its line stays exact
    refit = fit.fit_in_regimes(m, t + 3.0, template)
    assert [(r.m_min, r.m_max, r.points) for r in refit] == [(1, 8191, 5), (8192, 65536, 4)]
    assert [r.T0_us for r in refit] == pytest.approx([4.2, 8.0])
    assert max(r.max_rel_residual for r in refit) < 1e-9


def _fitted(tmp_path, capsys, probe, *extra):
    path, out = tmp_path / "p.json", tmp_path / "fit.json"
    path.write_text(json.dumps(probe))
    assert fit.main([str(path), "--json", str(out), *extra]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def test_each_regime_has_its_intervals_from_the_rounds(tmp_path, capsys):
    probe = synthetic_probe(SIZES, rounds=8, round_noise_us=0.05, rng=np.random.default_rng(4))
    result, text = _fitted(tmp_path, capsys, probe)
    for r in result["regimes"]:
        assert r["interval_from"] == "rounds"
        low, high = r["T0_interval_us"]
        assert low <= r["T0_us"] <= high and 0 < high - low < 1.0
        low, high = r["G_interval_ns_per_byte"]
        assert low <= r["G_ns_per_byte"] <= high
    assert "T0 95 % [us]" in text and "bootstrap over the probe's 8 rounds" in text
    # the noisier the rounds, the wider the interval
    noisy, _ = _fitted(tmp_path, capsys, synthetic_probe(SIZES, rounds=8, round_noise_us=0.5,
                                                         rng=np.random.default_rng(4)))
    width = [r["T0_interval_us"][1] - r["T0_interval_us"][0] for r in result["regimes"]]
    noisy_width = [r["T0_interval_us"][1] - r["T0_interval_us"][0] for r in noisy["regimes"]]
    assert noisy_width[0] > 3 * width[0]


def test_without_rounds_the_sizes_are_resampled_and_too_few_give_none(tmp_path, capsys):
    result, text = _fitted(tmp_path, capsys, synthetic_probe(SIZES, noise=0.01))
    assert all(r["interval_from"] == "sizes" and r["T0_interval_us"][0] <= r["T0_us"] <= r["T0_interval_us"][1]
               for r in result["regimes"])
    assert "bootstrap over each regime's sizes" in text
    few = [1, 8, 64, 512, 4096, 16384, 65536, 262144]   # regimes of fewer than 6 sizes, no rounds
    result, text = _fitted(tmp_path, capsys, synthetic_probe(few))
    assert all(r["interval_from"] is None and r["T0_interval_us"] is None for r in result["regimes"])
    assert "no interval" in text and "fewer than 6 sizes" in text


def test_the_prediction_error_has_an_interval_that_sees_a_knob_doing_half_its_job(tmp_path, capsys):
    base, knobbed = tmp_path / "base.json", tmp_path / "knobbed.json"
    base.write_text(json.dumps(synthetic_probe(SIZES, rounds=8, round_noise_us=0.05)))
    for scale, holds_zero in ((1.0, True), (0.5, False)):
        knobbed.write_text(json.dumps(synthetic_probe(SIZES, knobs={"L": 10.0}, scale={"L": scale}, rounds=8,
                                                      round_noise_us=0.05, rng=np.random.default_rng(2))))
        assert fit.main([str(knobbed), "--baseline", str(base), "--L", "10us",
                         "--json", str(tmp_path / "c.json")]) == 0
        rows = json.loads((tmp_path / "c.json").read_text())["comparison"]
        for r in rows:
            low, high = r["T0_error_interval_us"]
            assert low <= r["T0_error_us"] <= high
            assert (low <= 0 <= high) == holds_zero, (scale, r)
    assert "T0 error 95 %" in capsys.readouterr().out


def test_fit_line_minimizes_the_relative_residuals():
    # T spans decades: each size's residual counts relative to its own time, so the line is the
    # least-squares solution of (T0 + s m) / y = 1, found here by a plain solver
    m = np.array([1, 16, 256, 4096, 65536.0])
    y = np.array([1.0, 1.3, 1.1, 2.5, 19.0])   # not on a line
    t0, s, _ = fit.fit_line(m, y)
    (want_t0, want_s), *_ = np.linalg.lstsq(np.column_stack([1 / y, m / y]), np.ones_like(y), rcond=None)
    assert want_t0 > 0 and want_s > 0
    assert (t0, s) == pytest.approx((want_t0, want_s), rel=1e-9)


def test_a_regimes_residuals_are_relative_to_the_measured_time():
    m = np.array([1, 2, 3, 4.0])
    y = np.array([2.0, 2.5, 2.0, 3.5])
    r, = fit.segment_fit(m, y, max_regimes=1)
    assert r.residuals_rel == pytest.approx(list((y - r.predict(m)) / y))
    assert r.max_rel_residual == pytest.approx(max(abs((y - r.predict(m)) / y)))


def test_curvature_within_the_noise_floor_buys_no_regime():
    # no noise at all, but a 1 % wiggle about one line: under the 2 % floor it is one regime
    m = np.array(sorted(SIZES), dtype=float)
    t = (1.0 + m / 5000.0) * (1 + 0.01 * np.sin(np.log2(m)))
    assert len(fit.segment_fit(m, t)) == 1
    # a real switch is still split
    m2, t2 = two_regimes(SIZES)
    assert len(fit.segment_fit(m2, t2)) == 2


def test_sizes_below_the_baselines_smallest_belong_to_the_first_regime():
    m, t = two_regimes([64, 256, 1024, 4096, 8192, 16384, 65536, 262144])
    template = fit.segment_fit(m, t)
    assert template[0].m_min == 64
    knobbed_m, knobbed_t = two_regimes([1, 8, 64, 256, 1024, 4096, 8192, 16384, 65536, 262144])
    refit = fit.fit_in_regimes(knobbed_m, knobbed_t + 1.0, template)
    assert (refit[0].m_min, refit[0].points) == (1, 7)
    assert refit[0].T0_us == pytest.approx(2.2)


def _probe_of(sizes, times, rounds=None):
    return {"sizes": [{"bytes": int(s), "T_us": {"median": float(t), **({"rounds_us": r} if r is not None else {})}}
                      for s, t, r in zip(sizes, times, rounds or [None] * len(sizes))]}


def test_a_regime_of_exactly_min_samples_sizes_from_its_first_to_its_last_is_resampled():
    from loggp.experiments import fit_intervals as fi
    from loggp.experiments.precision import MIN_SAMPLES
    m = np.array([2.0 ** i for i in range(MIN_SAMPLES)])
    y = 1.0 + m / 100.0
    regime = fit.Regime(int(m[0]), int(m[-1]), 1.0, 0.01, MIN_SAMPLES, 0.0, 0.0)
    (how, lines), = fi.draws(_probe_of(m, y), [regime], fit.fit_line, resamples=50)
    assert how == fi.SIZES and lines.shape == (50, 2)
    # exact data: every resampled line is the line
    assert lines[:, 0] == pytest.approx(1.0) and lines[:, 1] == pytest.approx(0.01)
    short = fit.Regime(int(m[1]), int(m[-1]), 1.0, 0.01, MIN_SAMPLES - 1, 0.0, 0.0)
    assert fi.draws(_probe_of(m, y), [short], fit.fit_line, resamples=50) == [(None, None)]


def test_rounds_are_resampled_from_min_samples_of_them_and_only_when_every_size_has_as_many():
    from loggp.experiments import fit_intervals as fi
    from loggp.experiments.precision import MIN_SAMPLES
    m = np.array([1.0, 2.0, 4.0])
    y = 1.0 + m / 100.0
    regime = fit.Regime(1, 4, 1.0, 0.01, 3, 0.0, 0.0)
    even = [[float(t)] * MIN_SAMPLES for t in y]
    (how, _), = fi.draws(_probe_of(m, y, even), [regime], fit.fit_line, resamples=20)
    assert how == fi.ROUNDS
    uneven = [[float(y[0])] * (MIN_SAMPLES + 1)] + even[1:]
    assert fi.draws(_probe_of(m, y, uneven), [regime], fit.fit_line, resamples=20) == [(None, None)]
    fewer = [r[:-1] for r in even]
    assert fi.draws(_probe_of(m, y, fewer), [regime], fit.fit_line, resamples=20) == [(None, None)]


def test_the_percentile_interval_cuts_two_and_a_half_percent_from_each_end():
    from loggp.experiments import fit_intervals as fi
    assert fi.bounds(np.arange(1001.0)) == pytest.approx([25.0, 975.0])
    assert fi.bounds(None) is None


def test_a_faithful_knobbed_run_has_a_prediction_error_of_zero_in_every_resample():
    from loggp.experiments import fit_intervals as fi
    knobs = LogGP(o_s=1000.0, o_r=2000.0, L=4000.0, G=0.5)   # ns, ns/B
    rng = np.random.default_rng(1)
    base = np.column_stack([1.0 + rng.random(100), 0.001 * rng.random(100)])
    # LogGP: T0 + o_s + L + o_r (us), 1/B + G (us per byte)
    measured = base + [7.0, 0.0005]
    (errors,) = fi.error_intervals([(fi.ROUNDS, base)], [(fi.ROUNDS, measured)], knobs)
    assert errors["T0_error_us"] == pytest.approx([0.0, 0.0], abs=1e-9)
    assert errors["G_error_ns_per_byte"] == pytest.approx([0.0, 0.0], abs=1e-9)
