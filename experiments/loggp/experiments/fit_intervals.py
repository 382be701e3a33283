"""95 % intervals for `loggp fit`: each regime's T0 and 1/B, and the error of LogGP's
prediction, from a percentile bootstrap with the regimes' bounds held fixed.

What is resampled: the probe's rounds when every size has at least MIN_SAMPLES of them
(`rounds_us`; a resample draws whole rounds, so one round's sizes stay together, and
takes each size's median over the drawn rounds), else the sizes of each regime when it
has at least MIN_SAMPLES. With neither there is no interval, and the output says so
rather than printing a bare figure as if it were exact."""
import numpy as np

from .precision import MIN_SAMPLES

RESAMPLES = 1000
ROUNDS, SIZES = "rounds", "sizes"
LEVEL = 0.95


def _rounds(data, key="T_us"):
    """(sizes, rounds x sizes matrix of per-round medians), sorted by size, or None when
    a size lacks rounds or they are fewer than MIN_SAMPLES or unequal in number."""
    entries = sorted(data["sizes"], key=lambda e: e["bytes"])
    rows = [e[key].get("rounds_us") for e in entries]
    if any(not isinstance(r, list) for r in rows) or len({len(r) for r in rows}) != 1:
        return None
    if len(rows[0]) < MIN_SAMPLES:
        return None
    return (np.array([e["bytes"] for e in entries], dtype=float),
            np.array(rows, dtype=float).T)


def _span(m, regime):
    return np.nonzero((m >= regime.m_min) & (m <= regime.m_max))[0]


def draws(data, regimes, fit_line, rng=None, resamples=RESAMPLES):
    """Per regime: (how, resampled (T0 us, 1/B us per byte) as a resamples x 2 array), or
    (None, None) where there is nothing to resample. fit_line: fit.fit_line."""
    rng = np.random.default_rng(0) if rng is None else rng
    by_rounds = _rounds(data)
    out = []
    if by_rounds is not None:
        m, per_round = by_rounds
        spans = [_span(m, r) for r in regimes]
        lines = np.empty((len(regimes), resamples, 2))
        for b in range(resamples):
            y = np.median(per_round[rng.integers(0, len(per_round), len(per_round))], axis=0)
            for i, idx in enumerate(spans):
                t0, s, _ = fit_line(m[idx], y[idx])
                lines[i, b] = t0, s
        return [(ROUNDS, lines[i]) for i in range(len(regimes))]
    entries = sorted(data["sizes"], key=lambda e: e["bytes"])
    m = np.array([e["bytes"] for e in entries], dtype=float)
    y = np.array([e["T_us"]["median"] for e in entries], dtype=float)
    for regime in regimes:
        idx = _span(m, regime)
        if len(idx) < MIN_SAMPLES:
            out.append((None, None))
            continue
        lines = []
        while len(lines) < resamples:
            pick = idx[rng.integers(0, len(idx), len(idx))]
            if len(set(m[pick])) < 2:   # one size: no line through it
                continue
            t0, s, _ = fit_line(m[pick], y[pick])
            lines.append((t0, s))
        out.append((SIZES, np.array(lines)))
    return out


def bounds(values):
    """The percentile interval [low, high] of resampled values, or None without them."""
    if values is None:
        return None
    alpha = (1 - LEVEL) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return [float(low), float(high)]


def regime_intervals(regime_draws):
    """Per regime: {"from", "T0_us", "G_ns_per_byte"} with [low, high] or None."""
    out = []
    for how, lines in regime_draws:
        out.append({"from": how, "T0_us": bounds(None if lines is None else lines[:, 0]),
                    "G_ns_per_byte": bounds(None if lines is None else lines[:, 1] * 1000.0)})
    return out


def error_intervals(base_draws, measured_draws, knobs):
    """Per regime: the interval of measured minus predicted (baseline + knobs; knobs in ns,
    ns/B) for T0 (us) and 1/B (ns/B), pairing the two probes' independent resamples; None
    where either probe has no resamples."""
    shift_t0 = (knobs.o_s + knobs.L + knobs.o_r) / 1000.0
    out = []
    for (_, base), (_, measured) in zip(base_draws, measured_draws):
        if base is None or measured is None:
            out.append({"T0_error_us": None, "G_error_ns_per_byte": None})
            continue
        n = min(len(base), len(measured))
        t0 = measured[:n, 0] - (base[:n, 0] + shift_t0)
        g = (measured[:n, 1] - base[:n, 1]) * 1000.0 - knobs.G
        out.append({"T0_error_us": bounds(t0), "G_error_ns_per_byte": bounds(g)})
    return out


def interval_text(pair, places):
    return "no interval" if pair is None else f"[{pair[0]:.{places}f}, {pair[1]:.{places}f}]"


def source_text(data, intervals):
    """One line: what the intervals come from, or why there are none."""
    hows = {i["from"] for i in intervals}
    rounds = {len(e["T_us"].get("rounds_us") or []) for e in data["sizes"]}
    if hows == {ROUNDS}:
        return f"95 % intervals: percentile bootstrap over the probe's {max(rounds)} rounds"
    if None not in hows:
        return "95 % intervals: percentile bootstrap over each regime's sizes"
    why = (f"no interval where a regime has fewer than {MIN_SAMPLES} sizes and the probe fewer than "
           f"{MIN_SAMPLES} rounds")
    if SIZES in hows:
        return "95 % intervals: percentile bootstrap over each regime's sizes; " + why
    return why
