"""Martin's figure set: per application, slowdown against o,
g, L and G on one page, four panels with the measured points (95 % intervals),
the linear fit and the count x delta model drawn in; and the "T0 + n/B" view,
where the application's messages fall on the machine's calibrated T(m): a
histogram of message sizes over the protocol regimes, with T(m) beside it.
Pure parts (panel choice, regime split) are functions of their own, tested on
synthetic input; the drawing takes matplotlib's pyplot as an argument."""
import json
import math

from . import analyze

PANELS = ("o", "g", "L", "G")  # Martin's four, in the thesis's order


def panels_for(curves, label):
    """{knob: curve or None} for one application: o is "o" or, where only one
    overhead was swept, o_s or o_r; None where the study swept nothing."""
    mine = {c.knob: c for c in curves if c.label == label}
    out = {}
    for knob in PANELS:
        if knob == "o":
            out[knob] = mine.get("o") or mine.get("o_s") or mine.get("o_r")
        else:
            out[knob] = mine.get(knob)
    return out


def applications(curves):
    """Labels of the applications with at least one of the four swept, in order."""
    return sorted({c.label for c in curves if c.knob in PANELS + ("o_s", "o_r")})


def figure(curves, label, plt):
    """The four panels of one application."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2))
    for ax, (knob, curve) in zip(axes.flat, panels_for(curves, label).items()):
        title = analyze.KNOB_TITLE.get(knob, knob)
        if curve is None:
            ax.text(0.5, 0.5, f"{knob}: not swept in this study", ha="center", va="center",
                    transform=ax.transAxes, color="grey")
            ax.set_title(title, fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        x = [p.value for p in curve.points]
        y = [p.slowdown for p in curve.points]
        # no bar where too few rounds bound an interval
        err = [[w if math.isfinite(w) else 0.0 for w in (p.slowdown - p.low for p in curve.points)],
               [w if math.isfinite(w) else 0.0 for w in (p.high - p.slowdown for p in curve.points)]]
        ax.errorbar(x, y, yerr=err, marker="o", ms=4, capsize=3, lw=0, elinewidth=1.2, label="measured (95 % CI)")
        if curve.fit:
            fit = curve.fit  # in % slowdown: intercept + slope x
            ax.plot([0, max(x)], [1.0 + fit.intercept / 100.0, 1.0 + (fit.intercept + fit.slope * max(x)) / 100.0], lw=1.4,
                    label=f"linear fit, paired slope {curve.sensitivity:+.3g} %/{curve.unit}" if curve.resolved
                    else "linear fit, no effect resolved")
        model = [(p.value, p.model) for p in curve.points if p.model is not None]
        if model:
            ax.plot(*zip(*model), ls="--", lw=1.2, label="count x delta model")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel(f"added {title} ({curve.unit})")
        ax.set_ylabel("slowdown T / T(0)")
        ax.set_title(f"{title} ({curve.knob})", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{label}: sensitivity to LogGP's parameters", fontsize=11)
    fig.tight_layout()
    return fig


def size_histogram(profile):
    """[(min_bytes, max_bytes, messages, bytes)] sent by all ranks, summed per
    power-of-two size range, from a merged profile."""
    sums = {}
    for rank in (profile or {}).get("ranks", []):
        for b in ((rank.get("sent") or {}).get("by_size") or []):
            key = (b["min_bytes"], b["max_bytes"])
            m, n = sums.get(key, (0, 0))
            sums[key] = (m + b["messages"], n + b["bytes"])
    return [(lo, hi, m, n) for (lo, hi), (m, n) in sorted(sums.items())]


def no_point_to_point(profile):
    """What to say of an application that sent no point-to-point message: its
    collectives (the profile counts their calls and bytes, not their messages)."""
    calls = nbytes = 0
    for rank in (profile or {}).get("ranks", [])[:1]:
        for c in (rank.get("collectives") or {}).values():
            calls += c.get("calls", 0)
            nbytes += c.get("bytes", 0)
    if not calls:
        return "no messages in the profile"
    return (f"collectives only: {calls} calls on rank 0, {nbytes / calls:.0f} bytes per call on average "
            f"(the profile does not size the messages inside them)")


def regime_of(size, regimes):
    """Index of the calibrated regime a message of `size` bytes falls in (the
    first whose range holds it; past the last, the last)."""
    for i, r in enumerate(sorted(regimes, key=lambda r: r["m_min"])):
        if size <= r["m_max"]:
            return i
    return len(regimes) - 1


def mean_size(lo, m, n):
    """The mean message size of a size range (its smallest size if empty)."""
    return n / m if m else max(lo, 1)


def split_by_regime(histogram, regimes):
    """Messages and bytes per regime: [(regime index, messages, bytes)]; a size
    range counts where its mean message size falls (ranges are powers of two,
    regimes need not be)."""
    out = [[i, 0, 0] for i in range(len(regimes))]
    for lo, _hi, m, n in histogram:
        i = regime_of(mean_size(lo, m, n), regimes)
        out[i][1] += m
        out[i][2] += n
    return [tuple(r) for r in out]


def T_us(size, regimes):
    r = sorted(regimes, key=lambda r: r["m_min"])[regime_of(size, regimes)]
    return r["T0_us"] + (size / r["B_bytes_per_us"] if r["B_bytes_per_us"] else 0.0)


def baseline_profile(runs, label_of):
    """{label: a baseline run's merged profile} (the first successful one)."""
    out = {}
    for r in runs:
        if r.get("sweep") == "baseline" and r.get("status") == "ok" and r.get("profile"):
            out.setdefault(label_of(r), json.loads(r["profile"]))
    return out


def t0_nb_figure(profiles, regimes, plt):
    """One panel per application: messages per size range (bars, log-2 axis),
    coloured by the calibrated regime they fall in, with T(m) on a second axis;
    without a calibration, the histogram alone."""
    labels = sorted(profiles)
    fig, axes = plt.subplots(len(labels), 1, figsize=(8, 2.6 * len(labels) + 0.6), squeeze=False)
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for ax, label in zip(axes[:, 0], labels):
        hist = size_histogram(profiles[label])
        if not hist:
            ax.text(0.5, 0.5, f"{label}: {no_point_to_point(profiles[label])}", ha="center", va="center",
                    transform=ax.transAxes, color="grey")
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        for lo, hi, m, n in hist:
            i = regime_of(mean_size(lo, m, n), regimes) if regimes else 0
            ax.bar(math.sqrt(max(lo, 1) * max(hi, 1)), m, width=(hi - lo + 1) * 0.8,
                   color=colours[i % len(colours)], alpha=0.8)
        ax.set_xscale("log", base=2)
        ax.set_ylabel("messages")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
        if regimes:
            sizes = [2 ** (k / 4) for k in range(0, 4 * 21)]
            twin = ax.twinx()
            twin.plot(sizes, [T_us(s, regimes) for s in sizes], color="black", lw=1.2)
            twin.set_yscale("log")
            twin.set_ylabel("T(m) (us)")
            for r in sorted(regimes, key=lambda r: r["m_min"])[1:]:
                ax.axvline(r["m_min"], color="grey", ls=":", lw=1)
    axes[-1, 0].set_xlabel("message size (bytes)")
    fig.suptitle("Where the messages fall on T(m) = T0 + m/B" + ("" if regimes else " (no calibration: sizes only)"),
                 fontsize=11)
    fig.tight_layout()
    return fig


def regime_rows(profiles, regimes):
    """Table rows: application, regime (its size range, T0, B), messages, bytes."""
    rows = []
    for label in sorted(profiles):
        for i, m, n in split_by_regime(size_histogram(profiles[label]), regimes):
            r = sorted(regimes, key=lambda r: r["m_min"])[i]
            rows.append([label, f"{r['m_min']}-{r['m_max']} B", r["T0_us"], r["B_bytes_per_us"], m, n])
    return rows
