"""What `loggp calibrate` reads from probe results: each parameter per size, the increase
of one run over another, and every round's readings of a run, pooled over runs (`Collected`).

What is read, per round (see experiments/README.md for the probe's methods):
  o_s, o_r   send and receive overhead at the small sizes
  g          gap at the small sizes
  g_excess   g - max(o_s, o_r): in LogP a burst cannot go faster than its overhead, so
             the o knob raises g itself; its cross-talk on the gap is judged on g_excess
  L          T - o_s - o_r at the small sizes
  G          slope of g(m) against m for m >= 8 KiB (ns/B), relative to the baseline
  G_T        the same slope taken from T(m): the transfer time a message sees
"""
import numpy as np

from loggp.experiments import fit as fitmod
from loggp.experiments.calibration_plan import (BULK_MIN_BYTES, CROSSTALK, PARAMS, PRIMARY, QUANTITIES,
                                                CalibrationError, armed_step, sweep_points)


def _by_size(run):
    fitmod.check_probe(run)
    sizes = sorted(run["sizes"], key=lambda e: e["bytes"])
    m = np.array([e["bytes"] for e in sizes], dtype=float)
    med = {k: np.array([e[k]["median"] for e in sizes], dtype=float) for k in ("T_us", "o_s_us", "o_r_us", "g_us")}
    return m, med


def per_size(run):
    """Sizes and every parameter of one probe run, per size."""
    m, med = _by_size(run)
    o_s, o_r, g, t = med["o_s_us"], med["o_r_us"], med["g_us"], med["T_us"]
    return m, {"o_s": o_s, "o_r": o_r, "g": g, "g_excess": g - np.maximum(o_s, o_r), "L": t - o_s - o_r, "T": t}


def _small(m):
    """Sizes below the bulk range: o, g and L are read there, as a median over sizes so
    that one size hit by a burst of machine noise cannot decide the value."""
    keep = m < BULK_MIN_BYTES
    return keep if keep.any() else m == m.min()


def point_parameters(run):
    """Parameters of one probe run: medians over its small sizes."""
    m, p = per_size(run)
    small = _small(m)
    out = {k: float(np.median(p[k][small])) for k in ("o_s", "o_r", "g", "g_excess", "L")}
    out["sizes"] = m[small].astype(int).tolist()
    return out


def _bulk_slope(m, y):
    keep = m >= BULK_MIN_BYTES
    if keep.sum() < 2:
        raise CalibrationError(f"need at least two probed sizes >= {BULK_MIN_BYTES} B to measure G, "
                               f"got {m[keep].astype(int).tolist()}")
    return float(np.polyfit(m[keep] - 1, y[keep], 1)[0]) * 1000.0  # us/B -> ns/B


def spacing_residual(increase, per_byte_us, natural_us):
    """What is left of a stream interval's increase once the (m-1)G a set G owes is
    accounted for as LogP's minimum spacing: the stream runs at max(natural,
    g_machine + (m-1)G) with g_machine between 0 and the natural interval, so any
    increase from (m-1)G - natural to (m-1)G (never below 0) is exactly G's; the
    residual is the distance from that range."""
    low = np.maximum(per_byte_us - np.maximum(natural_us, 0.0), 0.0)
    return np.where(increase < low, increase - low, np.maximum(increase - per_byte_us, 0.0))


def increases(run, reference, G_set=0.0):
    """Measured increase of every parameter of `run` over `reference` (same sizes), and
    the run's absolute values. LogGP expects g(m) and T(m) to grow by (m-1)G, so with a
    set G that share is taken out of g, g_excess and L before they count as cross-talk."""
    m, p = per_size(run)
    m0, p0 = per_size(reference)
    if not np.array_equal(m, m0):
        raise CalibrationError(f"probe sizes differ from the reference run: {m.astype(int).tolist()} vs "
                               f"{m0.astype(int).tolist()}")
    small = _small(m)
    per_byte_us = (m - 1) * G_set / 1000.0
    out, absolute = {}, {}
    for k in ("o_s", "o_r", "g", "g_excess", "L"):
        d = p[k] - p0[k]
        if k == "g":
            d = spacing_residual(d, per_byte_us, p0[k])
        elif k in ("g_excess", "L"):
            d = d - per_byte_us
        out[k] = float(np.median(d[small]))
        absolute[k] = float(np.median(p[k][small]))
    out["G"] = _bulk_slope(m, p["g"] - p0["g"])
    out["G_T"] = _bulk_slope(m, p["T"] - p0["T"])
    absolute["G"] = _bulk_slope(m, p["g"])
    absolute["G_T"] = _bulk_slope(m, p["T"])
    return out, absolute


def median_run(runs):
    """Element-wise median of several probe results of the same sizes: a run disturbed as
    a whole by other work on the machine is outvoted by the others."""
    if len(runs) == 1:
        return runs[0]
    sizes = [sorted(r["sizes"], key=lambda e: e["bytes"]) for r in runs]
    ref_bytes = [e["bytes"] for e in sizes[0]]
    for s in sizes[1:]:
        if [e["bytes"] for e in s] != ref_bytes:
            raise CalibrationError("cannot combine probe runs of different sizes")
    combined = dict(runs[0])
    combined["sizes"] = []
    for i, b in enumerate(ref_bytes):
        entry = {"bytes": b, "refined": False, "combined_runs": len(runs)}
        for k in QUANTITIES:
            vals = [s[i][k]["median"] for s in sizes]
            entry[k] = {"median": float(np.median(vals)), "runs": vals}
        combined["sizes"].append(entry)
    return combined


def split_rounds(result):
    """One probe result per interleaved round of a --knob-set run (each quantity's round
    median); a result without per-round medians (one round) is its own single round."""
    sizes = sorted(result["sizes"], key=lambda e: e["bytes"])
    counts = [len(e[q].get("rounds_us") or ()) for e in sizes for q in QUANTITIES]
    if not counts or min(counts) < 2:
        return [result]
    common = {k: v for k, v in result.items() if k != "sizes"}
    return [{**common, "sizes": [{"bytes": e["bytes"], **{q: {"median": e[q]["rounds_us"][r]} for q in QUANTITIES}}
                                 for e in sizes]}
            for r in range(min(counts))]
def _round_pairs(results):
    rounds = [split_rounds(r) for r in results]
    n = min(len(r) for r in rounds)
    return [[r[i] for r in rounds] for i in range(n)]


def noise_readings(results):
    """Per round, the second zero-knob set minus the first: the machine's own run-to-run
    difference, nothing being set."""
    out = {p: [] for p in PARAMS}
    for first, second in _round_pairs(results[:2]):
        moved, _ = increases(second, first)
        for p in PARAMS:
            out[p].append(moved[p])
    return out


def run_readings(knob, results, values):
    """One run of sweep_sets(knob, values): per round, the armed layer's cost (armed minus
    zero knobs) of every parameter, and every setting's increase over the armed baseline."""
    points = sweep_points(values)
    if len(results) != 2 + len(points):
        raise CalibrationError(f"a {knob} run returned {len(results)} knob sets for {2 + len(points)}")
    cost = {p: [] for p in PARAMS}
    read = {v: {p: [] for p in PRIMARY[knob] + CROSSTALK[knob]} for v in points}
    for rnd in _round_pairs(results):
        armed, zero, settings = rnd[0], rnd[1], rnd[2:]
        armed_cost, _ = increases(armed, zero)
        for p in PARAMS:
            cost[p].append(armed_cost[p])
        for v, run in zip(points, settings):
            delta = v - armed_step(knob)
            inc, _ = increases(run, armed, G_set=delta if knob == "G" else 0.0)
            for p in read[v]:
                read[v][p].append(inc[p])
    return cost, read


class Collected:
    """Everything measured so far, pooled over runs: per-round differences."""
    def __init__(self, sweeps):
        self.sweeps = sweeps
        self.noise = {p: [] for p in PARAMS}
        self.armed_cost = {p: [] for p in PARAMS}
        self.points = {k: {v: {p: [] for p in PRIMARY[k] + CROSSTALK[k]} for v in sweep_points(vals)}
                       for k, vals in sweeps.items()}
        self.runs = {k: 0 for k in sweeps}
        # per knob, how many rounds each run added: a miss must show in the runs apart
        self.run_rounds = {k: [] for k in sweeps}
        self.armed_results, self.zero_results = [], []

    def add_noise(self, results):
        for p, values in noise_readings(results).items():
            self.noise[p] += values
        self.zero_results += results[:2]

    def add_run(self, knob, results):
        cost, read = run_readings(knob, results, self.sweeps[knob])
        self.run_rounds[knob].append(len(next(iter(cost.values()))))
        for p, values in cost.items():
            self.armed_cost[p] += values
        for v, params in read.items():
            for p, values in params.items():
                self.points[knob][v][p] += values
        self.armed_results.append(results[0])
        self.zero_results.append(results[1])
        self.runs[knob] += 1

