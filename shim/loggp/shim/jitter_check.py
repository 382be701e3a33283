"""`loggp bench knobs --L-jitter`: is L drawn from the distribution set?

A ping-pong's round trips (loggp-rtt-samples) at zero knobs and with L and
its jitter, in one invocation; each jittered round trip holds two draws (one
per direction). The prediction adds two draws, made here from the same
definitions as libloggp.so (docs/jitter.md), to each baseline round trip, so
the machine's own spread is in both; mean, standard deviation and percentiles
are then compared: each figure's measured - predicted difference gets a 95 %
bootstrap interval (both samples resampled), judged met, missed or unresolved
against the figure's tolerance. The statistics are pure functions
(shim/tests/test_jitter_check.py)."""
import math
import os
import random
import subprocess
import tempfile

from loggp.knobs import parse
from loggp.knobs.programs import find_program

PERCENTILES = (10, 50, 90, 99)
KINDS = {"normal": None, "exp": None, "lognormal": 1.0, "pareto": 3.0}
# a figure matches its prediction within max(REL x prediction, ABS_NS)
REL, ABS_NS = 0.15, 1000.0
SD_REL = 0.25
# the share of the longest round trips left out of the mean and variance
TRIM = 0.005
FIGURES = ("mean", "sd", *(f"p{p}" for p in PERCENTILES))
# resamples of the bootstrap that bounds each figure's difference
RESAMPLES = 200


def split_jitter(text):
    """'normal:2us' -> ('normal', '2us', shape or None). Only splits: the
    spread goes through the knob parser and libloggp.so validates it all."""
    kind, _, rest = text.partition(":")
    spread, _, shape = rest.partition(":")
    if kind not in KINDS or not spread:
        raise ValueError(f"'{text}': expected normal:S, exp:S, lognormal:S[:SIGMA] or pareto:S[:ALPHA]")
    try:
        value = float(shape) if shape else KINDS[kind]
    except ValueError:
        raise ValueError(f"'{text}': bad shape '{shape}'") from None
    if shape and KINDS[kind] is None:
        raise ValueError(f"'{text}': {kind} takes only a spread")
    return kind, spread, value


def offset(kind, spread_ns, shape, rng):
    """One zero-mean offset with standard deviation spread_ns (jitter.c's definitions)."""
    s = spread_ns
    if kind == "normal":
        return rng.gauss(0.0, s)
    if kind == "exp":
        return rng.expovariate(1.0 / s) - s
    if kind == "lognormal":
        m = s / math.sqrt(math.expm1(shape * shape))
        return m * math.exp(rng.gauss(0.0, shape) - shape * shape / 2) - m
    if kind == "pareto":
        xm = s * (shape - 1) * math.sqrt((shape - 2) / shape)
        return xm * rng.paretovariate(shape) - shape * xm / (shape - 1)
    raise ValueError(f"unknown distribution {kind!r}")


def draw(L_ns, kind, spread_ns, shape, rng):
    """L for one message: L + offset, truncated at 0."""
    return max(0.0, L_ns + offset(kind, spread_ns, shape, rng))


def percentile(sorted_values, p):
    """Linear-interpolated p-th percentile of sorted values."""
    if not sorted_values:
        raise ValueError("no samples")
    k = (len(sorted_values) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def summary(samples, trim=TRIM):
    """Mean and variance (population) of samples without their highest
    `trim` share (a descheduled rank's stalls, not the network's), and
    PERCENTILES of them all."""
    values = sorted(samples)
    kept = values[:len(values) - math.floor(len(values) * trim)]
    n = len(kept)
    mean = sum(kept) / n
    var = sum((v - mean) ** 2 for v in kept) / n
    out = {"mean": mean, "var": var, "sd": math.sqrt(var)}
    for p in PERCENTILES:
        out[f"p{p}"] = percentile(values, p)
    return out


def predicted_round_trips(base, L_ns, kind, spread_ns, shape, seed=1):
    """Each baseline round trip plus two draws of L."""
    rng = random.Random(seed)
    return [b + draw(L_ns, kind, spread_ns, shape, rng) + draw(L_ns, kind, spread_ns, shape, rng) for b in base]


def tolerance(name, predicted_ns):
    """How far a figure may lie from its prediction: max(REL x it, ABS_NS); SD_REL for the sd."""
    return max((SD_REL if name == "sd" else REL) * abs(predicted_ns), ABS_NS)


def difference_intervals(measured_samples, predicted_samples, seed=1, resamples=RESAMPLES):
    """{figure: (low, high)}: the 95 % percentile-bootstrap interval of summary(measured)
    - summary(predicted) per figure, each sample resampled on its own."""
    rng = random.Random(seed)
    differences = {name: [] for name in FIGURES}
    for _ in range(resamples):
        m = summary(rng.choices(measured_samples, k=len(measured_samples)))
        p = summary(rng.choices(predicted_samples, k=len(predicted_samples)))
        for name in FIGURES:
            differences[name].append(m[name] - p[name])
    return {name: (percentile(sorted(d), 2.5), percentile(sorted(d), 97.5)) for name, d in differences.items()}


def compare(measured, predicted, intervals, judge_bounds):
    """[row] per figure (mean, sd, percentiles): measured, predicted, the interval of their
    difference, the tolerance and the verdict judge_bounds(low, high, 0, tolerance) gives
    (loggp.experiments.precision's, handed down)."""
    rows = []
    for name in FIGURES:
        m, p = measured[name], predicted[name]
        low, high = intervals[name]
        tol = tolerance(name, p)
        rows.append({"figure": name, "measured_ns": m, "predicted_ns": p, "difference_low_ns": low,
                     "difference_high_ns": high, "tolerance_ns": tol, "verdict": judge_bounds(low, high, 0.0, tol)})
    return rows


def round_trips(knob_flags, count, bytes_, timeout=600):
    """Round trips in ns of one loggp-rtt-samples run under `loggp run` flags."""
    with tempfile.TemporaryDirectory(prefix="loggp-bench-") as private:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LOGGP_")}
        env["LOGGP_KNOB_FILE"] = os.path.join(private, "knobs")
        cmd = [find_program("loggp"), "run", "-n", "2", "--quiet", "--engine", "libfabric", *knob_flags, "--",
               find_program("loggp-rtt-samples"), str(count), str(bytes_)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return [float(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("rtt_ns ")]


def check(L_text, jitter_text, seed, count=3000, bytes_=8, rounds=3, judge_bounds=None):
    """Baseline and jittered round trips in interleaved rounds (B J B J ...,
    so both see the same load), pooled, and their comparison with the
    prediction, each figure judged by judge_bounds."""
    if judge_bounds is None:
        raise ValueError("the jitter check needs a judge of intervals (loggp.experiments.precision)")
    kind, spread, shape = split_jitter(jitter_text)
    L_ns = parse({"L": L_text})["L"]
    spread_ns = parse({"L": spread})["L"]
    base, jittered = [], []
    for r in range(rounds):
        base += round_trips([], count, bytes_)
        jittered += round_trips(["--L", L_text, "--L-jitter", jitter_text, "--seed", str(seed + r)], count, bytes_)
    predicted_samples = predicted_round_trips(base, L_ns, kind, spread_ns, shape, seed)
    predicted, measured = summary(predicted_samples), summary(jittered)
    intervals = difference_intervals(jittered, predicted_samples, seed)
    return {"L": L_text, "jitter": jitter_text, "seed": seed, "count": count * rounds, "bytes": bytes_,
            "base": summary(base), "measured": measured, "predicted": predicted,
            "rows": compare(measured, predicted, intervals, judge_bounds)}


def print_check(result):
    print(f"L {result['L']} jitter {result['jitter']} seed {result['seed']}: {result['count']} round trips of "
          f"{result['bytes']} B, each holding two draws; prediction = baseline round trip + two draws")
    print(f"mean and sd leave out the longest {TRIM:.1%} of round trips in both")
    print(f"{'figure':>8} {'measured us':>12} {'predicted us':>13} {'difference [95 % interval]':>27} "
          f"{'tolerance':>10}  verdict")
    for row in result["rows"]:
        difference = (f"{(row['measured_ns'] - row['predicted_ns']) / 1000:+.2f} "
                      f"[{row['difference_low_ns'] / 1000:+.2f}, {row['difference_high_ns'] / 1000:+.2f}]")
        print(f"{row['figure']:>8} {row['measured_ns'] / 1000:12.2f} {row['predicted_ns'] / 1000:13.2f} "
              f"{difference:>27} {row['tolerance_ns'] / 1000:10.2f}  {row['verdict']}")
    count = {v: sum(row["verdict"] == v for row in result["rows"]) for v in ("met", "missed", "unresolved")}
    print(f"{count['met']} of {len(result['rows'])} figures met, {count['missed']} missed, "
          f"{count['unresolved']} unresolved (us; the interval is of measured - predicted, bootstrap over both "
          f"samples; met: inside +- tolerance, missed: wholly outside, unresolved: across its edge)")
