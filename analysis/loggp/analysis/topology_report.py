"""Slowdown against the inter-node L or G (a study's [topology] table,
npb-harness/loggp/harness/topology_sweep.py): one curve per benchmark and swept key,
x the value between nodes (pairs on one node unchanged), y the slowdown over
the zero-knob baseline with its 95 % bootstrap interval."""
import json

import numpy as np

from loggp.harness.topology_sweep import RANKS_PER_NODE, SWEEPS, value_ns

from . import groups, stats

HEADER = ["benchmark", "np", "class", "swept", "ranks_per_node", "value", "value_ns", "runs", "median_s", "slowdown",
          "low", "high"]


def topology_curves(runs, rng_seed=0):
    """{(benchmark, np, class, sweep): {"ranks_per_node": n or None, "points": [dict...]}}."""
    rng = np.random.default_rng(rng_seed)
    out = {}
    for key, rows, base in groups.by_application(runs):
        for sweep in SWEEPS:
            by_text, rpn = {}, None
            for r in rows:
                if r["sweep"] != sweep:
                    continue
                knobs = json.loads(r["knobs"])
                rpn = knobs.get(RANKS_PER_NODE)
                by_text.setdefault(knobs[sweep], []).append(r["runtime_seconds"])
            if not by_text:
                continue
            points = []
            for text, times in sorted(by_text.items(), key=lambda kv: value_ns(sweep, kv[0])):
                s, lo, hi = stats.slowdown(times, base, rng)
                points.append({"value": text, "value_ns": value_ns(sweep, text), "runs": len(times),
                               "median_s": float(np.median(times)), "slowdown": s, "low": lo, "high": hi,
                               "baseline_runs": len(base)})
            out[key + (sweep,)] = {"ranks_per_node": rpn, "points": points}
    return out


def rows(curves, words=False):
    """Table rows; a point with no interval has empty low and high cells, or with words=True
    the reason in the low cell."""
    return [[k[0], k[1], k[2] or "", k[3], c["ranks_per_node"] or "hosts", p["value"], p["value_ns"], p["runs"],
             p["median_s"], p["slowdown"], *stats.interval_cells(p, words)]
            for k, c in curves.items() for p in c["points"]]


def figure(curves, plt):
    """One panel per swept key: slowdown against the value between nodes, a line per benchmark."""
    swept = sorted({k[3] for k in curves})
    fig, axes = plt.subplots(1, len(swept), figsize=(6.5 * len(swept), 4.2), squeeze=False)
    for ax, sweep in zip(axes[0], swept):
        for (bench, np_, klass, s), c in curves.items():
            if s != sweep:
                continue
            pts = c["points"]
            x = [0.0] + [p["value_ns"] / (1.0 if sweep == "G_inter" else 1000.0) for p in pts]
            y = [1.0] + [p["slowdown"] for p in pts]
            below, above = zip(*(stats.error_lengths(p["slowdown"], p["low"], p["high"]) for p in pts))
            err = [[0.0, *below], [0.0, *above]]
            nodes = f"{c['ranks_per_node']} ranks per node" if c["ranks_per_node"] else "nodes = hosts"
            ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=3, lw=1.6,
                        label=f"{bench}{' class ' + klass if klass else ''} np={np_} ({nodes})")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("G between nodes (ns/B)" if sweep == "G_inter" else "L between nodes (us)")
        ax.set_ylabel("slowdown T / T(0)")
        ax.set_title(f"Sensitivity to {'G' if sweep == 'G_inter' else 'L'} between nodes only\n"
                     "pairs on one node unchanged; error bars: 95 % bootstrap CI", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    return fig
