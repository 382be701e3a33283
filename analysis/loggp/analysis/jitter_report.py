"""Slowdown against L's jitter at a fixed mean (a study's [jitter] table,
npb-harness/loggp/harness/jitter_sweep.py): one curve per benchmark, x the spread
(standard deviation of L per message), y the slowdown over the zero-knob
baseline; the spread-0 point is the constant L. Set beside the L curve it
answers whether the variance of latency or its mean slows a program more."""
import json

import numpy as np

from loggp.harness.jitter_sweep import SWEEP, spread_ns

from . import groups, stats

HEADER = ["benchmark", "np", "class", "L", "jitter", "spread_us", "runs", "median_s", "slowdown", "low", "high",
          "over_constant_L"]


def jitter_curves(runs, rng_seed=0):
    """{(benchmark, np, class): {"L": text, "points": [dict...]}} from the
    successful runs: per spread, the slowdown over the baseline with its
    95 % bootstrap interval, and the ratio to the constant-L runs."""
    rng = np.random.default_rng(rng_seed)
    out = {}
    for key, rows, base in groups.by_application(runs):
        jit = [r for r in rows if r["sweep"] == SWEEP]
        if not jit:
            continue
        by_text = {}
        for r in jit:
            knobs = json.loads(r["knobs"])
            by_text.setdefault(knobs.get(SWEEP, "none"), []).append(r["runtime_seconds"])
        constant = by_text.get("none")
        points = []
        for text, times in sorted(by_text.items(), key=lambda kv: spread_ns(kv[0])):
            s, lo, hi = stats.slowdown(times, base, rng)
            over = float(np.median(times) / np.median(constant)) if constant else None
            points.append({"jitter": text, "spread_us": spread_ns(text) / 1000.0, "runs": len(times),
                           "median_s": float(np.median(times)), "slowdown": s, "low": lo, "high": hi,
                           "baseline_runs": len(base),
                           "over_constant_L": over})
        out[key] = {"L": json.loads(jit[0]["knobs"]).get("L"), "points": points}
    return out


def rows(curves, words=False):
    """Table rows; a point with no interval has empty low and high cells, or with words=True
    the reason in the low cell (for a page a reader reads)."""
    return [[k[0], k[1], k[2] or "", c["L"], p["jitter"], p["spread_us"], p["runs"], p["median_s"], p["slowdown"],
             *stats.interval_cells(p, words), p["over_constant_L"]] for k, c in curves.items() for p in c["points"]]


def figure(curves, plt):
    """Slowdown against the spread, one line per benchmark (error bars: 95 % CI)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (bench, np_, klass), c in curves.items():
        pts = c["points"]
        x = [p["spread_us"] for p in pts]
        y = [p["slowdown"] for p in pts]
        err = [list(e) for e in zip(*(stats.error_lengths(p["slowdown"], p["low"], p["high"]) for p in pts))]
        label = f"{bench}{' class ' + klass if klass else ''} np={np_} (L = {c['L']})"
        ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=3, lw=1.6, label=label)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("spread of L per message: standard deviation (us), mean L fixed")
    ax.set_ylabel("slowdown T / T(0)")
    ax.set_title("Sensitivity to latency jitter at a fixed mean\n"
                 "spread 0: the constant L; error bars: 95 % bootstrap CI", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig
