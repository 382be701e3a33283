"""`loggp fit`: the linear model T(m) = T0 + m/B fitted per protocol regime.

The probe's half round trip T(m) is piecewise linear in the message size: the start-up
cost and the slope change where MPI switches protocol (eager to rendezvous). A single
line through all sizes is wrong in both regimes, so the sizes are split into regimes by
an optimal segmentation (dynamic programming over breakpoints, the number of regimes
chosen by BIC) and each regime gets its own constrained fit (T0 >= 0, 1/B >= 0).
Residuals are relative, since T spans three decades between 1 B and 1 MiB.

Under knobs, LogGP predicts T0 grows by o_s + L + o_r and 1/B by G;
`--baseline` compares that prediction with the fit of the knobbed run.
"""
import json
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from loggp.knobs import KNOBS, KnobError, parse as parse_knob_values
from loggp.knobs.params import LogGP
from loggp.knobs.vocabulary import FIELDS, FLAG_NAMES
from loggp.knobs.command import EXIT_USAGE, Command, CommandError, Parser
from loggp.knobs.files import atomic_write, write_text_atomic

from . import fit_intervals


class FitError(ValueError):
    """Bad input (file, value or option), reported without a traceback."""


# ------------------------------------------------------------------ input

def load_probe(path):
    """Reads a loggp-probe JSON file and checks the fields the analysis uses."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FitError(f"probe file '{path}' does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise FitError(f"cannot read probe file '{path}': {err}") from None
    except json.JSONDecodeError as err:
        raise FitError(f"probe file '{path}' is not valid JSON: {err}") from None
    check_probe(data, str(path))
    return data


def check_probe(data, name="probe data"):
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("loggp-probe/"):
        raise FitError(f"{name}: not a loggp-probe result (missing \"schema\": \"loggp-probe/1\")")
    sizes = data.get("sizes")
    if not isinstance(sizes, list) or not sizes:
        raise FitError(f"{name}: no \"sizes\" entries")
    for i, entry in enumerate(sizes):
        for key in ("bytes", "T_us", "o_s_us", "o_r_us", "g_us"):
            if key not in entry:
                raise FitError(f"{name}: sizes[{i}] lacks \"{key}\"")
        for key in ("T_us", "o_s_us", "o_r_us", "g_us"):
            value = entry[key].get("median") if isinstance(entry[key], dict) else None
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise FitError(f"{name}: sizes[{i}].{key}.median is {value!r}, not a number")
        if not isinstance(entry["bytes"], int) or entry["bytes"] < 0:
            raise FitError(f"{name}: sizes[{i}].bytes is {entry['bytes']!r}, not a size")


def series(data, key="T_us"):
    """Sizes (bytes) and medians of one measured quantity, sorted by size."""
    pairs = sorted((e["bytes"], e[key]["median"]) for e in data["sizes"])
    m = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    return m, y


# ------------------------------------------------------------------ fitting

@dataclass
class Regime:
    m_min: int
    m_max: int
    T0_us: float
    us_per_byte: float          # 1/B
    points: int
    rms_rel_residual: float
    max_rel_residual: float
    residuals_rel: list = field(default_factory=list)

    @property
    def B_bytes_per_us(self):
        return math.inf if self.us_per_byte == 0 else 1.0 / self.us_per_byte

    def predict(self, m):
        return self.T0_us + self.us_per_byte * np.asarray(m, dtype=float)

    def summary(self):
        """The fields calibration.json and `--json` report."""
        b = self.B_bytes_per_us
        return {"m_min": self.m_min, "m_max": self.m_max, "T0_us": self.T0_us,
                "B_bytes_per_us": None if math.isinf(b) else b,
                "G_ns_per_byte": self.us_per_byte * 1000.0, "points": self.points,
                "rms_rel_residual": self.rms_rel_residual, "max_rel_residual": self.max_rel_residual}


def fit_line(m, y):
    """Least squares of relative residuals for y = T0 + s*m with T0 >= 0 and s >= 0.

    Returns (T0, s, weighted SSE). The constraints bind only when the data cannot
    support a physical line (e.g. a noisy flat regime with a slightly negative slope)."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    w = 1.0 / np.maximum(np.abs(y), 1e-12) ** 2

    def sse(t0, s):
        return float(np.sum(w * (y - t0 - s * m) ** 2))

    sw, swm, swy = w.sum(), (w * m).sum(), (w * y).sum()
    swmm, swmy = (w * m * m).sum(), (w * m * y).sum()
    det = sw * swmm - swm * swm
    if det > 1e-12 * max(sw * swmm, 1e-300):
        s = (sw * swmy - swm * swy) / det
        t0 = (swy - s * swm) / sw
        if s >= 0 and t0 >= 0:
            return t0, s, sse(t0, s)
    # A constraint binds: the best of the two boundary solutions.
    candidates = [(max(swy / sw, 0.0), 0.0)]
    if swmm > 0:
        candidates.append((0.0, max(swmy / swmm, 0.0)))
    t0, s = min(candidates, key=lambda c: sse(*c))
    return t0, s, sse(t0, s)


def _regime(m, y, lo, hi):
    t0, s, _ = fit_line(m[lo:hi], y[lo:hi])
    rel = (y[lo:hi] - (t0 + s * m[lo:hi])) / y[lo:hi]
    return Regime(int(m[lo]), int(m[hi - 1]), float(t0), float(s), int(hi - lo),
                  float(np.sqrt(np.mean(rel ** 2))), float(np.max(np.abs(rel))),
                  [float(r) for r in rel])


def segment_fit(m, y, max_regimes=4, min_points=3, noise_floor=0.02):
    """Splits the sizes into regimes and fits each; returns the list of Regime.

    The number of regimes minimizes BIC; residuals below `noise_floor` (relative RMS)
    count as noise, so curvature within the noise never buys an extra regime."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    if m.shape != y.shape or m.ndim != 1:
        raise FitError("sizes and times must be 1-D arrays of the same length")
    n = len(m)
    if n < 2:
        raise FitError(f"need at least 2 sizes to fit a line, got {n}")
    if np.any(np.diff(m) <= 0):
        raise FitError("sizes must be strictly increasing")
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        bad = y[~np.isfinite(y) | (y <= 0)][0]
        raise FitError(f"times must be positive, got {bad!r}")
    min_points = max(2, min(min_points, n))
    max_regimes = max(1, min(max_regimes, n // min_points))

    cost = np.full((n + 1, n + 1), np.inf)
    for lo in range(n):
        for hi in range(lo + min_points, n + 1):
            cost[lo, hi] = fit_line(m[lo:hi], y[lo:hi])[2]
    # best[k][j]: lowest SSE for the first j points in k regimes; cut[k][j]: last break.
    best = np.full((max_regimes + 1, n + 1), np.inf)
    cut = np.zeros((max_regimes + 1, n + 1), dtype=int)
    best[0, 0] = 0.0
    for k in range(1, max_regimes + 1):
        for j in range(k * min_points, n + 1):
            for i in range((k - 1) * min_points, j - min_points + 1):
                c = best[k - 1, i] + cost[i, j]
                if c < best[k, j]:
                    best[k, j], cut[k, j] = c, i
    floor_sse = n * noise_floor ** 2
    bic = [math.inf] * (max_regimes + 1)
    for k in range(1, max_regimes + 1):
        if math.isfinite(best[k, n]):
            bic[k] = n * math.log(max(best[k, n], floor_sse) / n) + (3 * k - 1) * math.log(n)
    k = min(range(1, max_regimes + 1), key=lambda q: (bic[q], q))
    bounds, j = [], n
    for q in range(k, 0, -1):
        i = cut[q, j]
        bounds.append((i, j))
        j = i
    return [_regime(m, y, lo, hi) for lo, hi in reversed(bounds)]


def fit_in_regimes(m, y, template):
    """Fits each regime of `template` (a list of Regime) on new data, keeping its size
    range: the protocol switches are a property of the MPI library, not of the knobs."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    out = []
    for i, reg in enumerate(template):
        lo = reg.m_min if i > 0 else -math.inf
        hi = template[i + 1].m_min if i + 1 < len(template) else math.inf
        idx = np.nonzero((m >= lo) & (m < hi))[0]
        if len(idx) < 2:
            raise FitError(f"regime {reg.m_min}..{reg.m_max} B has {len(idx)} measured size(s) in the "
                           "knobbed run; need 2 (probe the same sizes as the baseline)")
        out.append(_regime(m, y, idx[0], idx[-1] + 1))
    return out


def format_knobs(knobs):
    """Knobs (a LogGP set) as a user writes them: "o_s=1us o_r=1us g=0 G=0.5ns/B L=10us"."""
    return str(knobs)


def predict_regimes(baseline, knobs):
    """LogGP's prediction for the knobbed fit: T0 + o_s + L + o_r, 1/B + G (knobs in ns, ns/B)."""
    return [Regime(r.m_min, r.m_max, r.T0_us + (knobs.o_s + knobs.L + knobs.o_r) / 1000.0,
                   r.us_per_byte + knobs.G / 1000.0, r.points, math.nan, math.nan) for r in baseline]


def compare(predicted, measured):
    """Rows of predicted vs measured T0 and 1/B per regime."""
    rows = []
    for p, q in zip(predicted, measured):
        rows.append({"m_min": q.m_min, "m_max": q.m_max,
                     "T0_predicted_us": p.T0_us, "T0_measured_us": q.T0_us,
                     "T0_error_us": q.T0_us - p.T0_us,
                     "G_predicted_ns_per_byte": p.us_per_byte * 1000, "G_measured_ns_per_byte": q.us_per_byte * 1000,
                     "G_error_ns_per_byte": (q.us_per_byte - p.us_per_byte) * 1000})
    return rows


# ------------------------------------------------------------------ knob values

# Command-line option (the flag without dashes) -> knob; "o" sets o_s and o_r together.
KNOB_OPTIONS = FLAG_NAMES


def knob_increments(texts):
    """{option: text} -> LogGP (ns, ns/B), each value parsed by loggp-knobs (the one knob
    parser); --os and --or override --o."""
    try:
        return LogGP.parse({KNOB_OPTIONS[option]: text for option, text in texts.items()})
    except KnobError as err:
        raise FitError(str(err)) from None


def recorded_knobs(data, name):
    """The knobs a probe file says were in force throughout its run (loggp-probe writes
    libloggp.so's own view, or zero without it), as LogGP; None when it does not say: an
    older probe, a --knob-set run, or knobs changed while it measured."""
    texts = data.get("knobs")
    if texts is None:
        return None
    if not isinstance(texts, dict) or set(texts) - set(KNOBS):
        raise FitError(f"{name}: \"knobs\" {texts!r} is not a map of o_s, o_r, g, G, L to values")
    try:
        ns = parse_knob_values(texts)
    except KnobError as err:
        raise FitError(f"{name}: \"knobs\": {err}") from None
    return LogGP.of(ns)


def knobs_of_the_run(data, base, given, flags, probe_name, base_name):
    """The knobs the probed run had: its file's record, or the flags given; refuses when
    neither says, when they disagree, and a baseline that ran with knobs."""
    if base is not None:
        base_knobs = recorded_knobs(base, base_name)
        if base_knobs is not None and not base_knobs.is_zero():
            raise FitError(f"--baseline {base_name} ran with knobs {format_knobs(base_knobs)}: a baseline is "
                           f"a run without knobs")
    recorded = recorded_knobs(data, probe_name)
    if not given:
        if recorded is None:
            why = data.get("knobs_source") or "it predates loggp-probe recording them"
            raise FitError(f"--baseline needs the knobs the probed run had, and {probe_name} does not record "
                           f"them ({why}): give them (--o, --os, --or, --g, --L, --G, e.g. --L 10us; --L 0 for a "
                           f"run without knobs)")
        return recorded
    if recorded is not None and recorded != flags:
        raise FitError(f"the knobs given ({format_knobs(flags)}) differ from those {probe_name} recorded "
                       f"({format_knobs(recorded)}); leave the flags out to use the recorded ones")
    return flags


# ------------------------------------------------------------------ output

def plot_fit(out_png, series_list, title):
    """series_list: [(label, m, y, regimes, style)], style 'solid' or 'dashed'.
    Writes out_png and the same stem with .svg."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, axr) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for idx, (label, m, y, regimes, style) in enumerate(series_list):
        color = colors[idx % len(colors)]
        if y is not None:
            ax.plot(np.maximum(m, 0.5), y, "o", color=color, ms=4, label=f"{label}: measured")
        for r_i, reg in enumerate(regimes):
            xs = np.geomspace(max(reg.m_min, 0.5), max(reg.m_max, 1), 50)
            ax.plot(xs, reg.predict(xs), linestyle="--" if style == "dashed" else "-", color=color,
                    label=(f"{label}: T0 + m/B" if r_i == 0 else None))
        if y is not None and regimes:
            fitted = np.concatenate([r.residuals_rel for r in regimes]) if regimes[0].residuals_rel else None
            if fitted is not None and len(fitted) == len(m):
                axr.plot(np.maximum(m, 0.5), 100 * fitted, "o-", color=color, ms=3, label=label)
    for reg in series_list[0][3][1:]:
        ax.axvline(reg.m_min, color="grey", lw=0.6, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylabel("T(m), half round trip [us]")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    axr.axhline(0, color="black", lw=0.8)
    axr.set_ylabel("residual [%]")
    axr.set_xlabel("message size m [bytes]")
    axr.grid(True, alpha=0.3)
    fig.tight_layout()
    out_png = Path(out_png)
    atomic_write(out_png, lambda tmp: fig.savefig(tmp, format="png", dpi=110))
    atomic_write(out_png.with_suffix(".svg"), lambda tmp: fig.savefig(tmp, format="svg"))
    plt.close(fig)


def format_regimes(regimes, intervals):
    """The regimes' table, each T0 and 1/B with its 95 % interval (fit_intervals) last."""
    lines = [f"{'regime':>7} {'sizes [B]':>19} {'T0 [us]':>9} {'B [B/us]':>10} {'1/B [ns/B]':>11} "
             f"{'rms resid':>9} {'max resid':>9}  {'T0 95 % [us]':>20}  {'1/B 95 % [ns/B]':>22}"]
    for i, (r, ci) in enumerate(zip(regimes, intervals), 1):
        b = r.B_bytes_per_us
        lines.append(f"{i:>7} {r.m_min:>9}..{r.m_max:<9} {r.T0_us:9.3f} "
                     f"{'inf' if math.isinf(b) else f'{b:10.1f}':>10} {r.us_per_byte * 1000:11.5f} "
                     f"{100 * r.rms_rel_residual:8.2f}% {100 * r.max_rel_residual:8.2f}%  "
                     f"{fit_intervals.interval_text(ci['T0_us'], 3):>20}  "
                     f"{fit_intervals.interval_text(ci['G_ns_per_byte'], 5):>22}")
    return "\n".join(lines)


def regime_summaries(regimes, intervals):
    """The regimes for --json, each with its intervals ([low, high] or null) and their source."""
    return [{**r.summary(), "T0_interval_us": ci["T0_us"], "G_interval_ns_per_byte": ci["G_ns_per_byte"],
             "interval_from": ci["from"]} for r, ci in zip(regimes, intervals)]


# ------------------------------------------------------------------ command line

def parser():
    p = Parser(prog="loggp fit", example="loggp fit probe.json --plot fit.png",
               description="Fit T(m) = T0 + m/B per protocol regime to a loggp-probe result.")
    p.add_argument("probe", help="loggp-probe JSON (--json output)")
    p.add_argument("--plot", metavar="OUT.png", help="write the plot as OUT.png and OUT.svg (default: no plot)")
    p.add_argument("--json", metavar="FILE", help="write the regimes (and the comparison) as JSON (default: none)")
    p.add_argument("--max-regimes", type=int, default=4, help="at most this many regimes (default 4)")
    p.add_argument("--baseline", metavar="BASE.json",
                   help="probe result without knobs: compare LogGP's prediction with this fit (default: none)")
    for knob in KNOB_OPTIONS:
        example = "0.5ns/B" if knob == "G" else "1us"
        p.add_argument(f"--{knob}", metavar="T/B" if knob == "G" else "T",
                       help=f"knob increment of the probed run (e.g. {example}); with --baseline (default: "
                            f"the knobs the probe file recorded; refused when it records none)")
    return p


class FitCommand(Command):
    name = "fit"
    errors = ((FitError, EXIT_USAGE),)

    def parser(self):
        return parser()

    def check(self, args):
        if args.max_regimes < 1:
            raise FitError(f"--max-regimes {args.max_regimes}: must be at least 1")
        args.knobs = knob_increments({o: vars(args)[o] for o in KNOB_OPTIONS if vars(args)[o] is not None})
        given = [o for o in KNOB_OPTIONS if vars(args)[o] is not None]
        if not args.baseline and given:
            raise FitError("knob values need --baseline BASE.json to compare against")
        if args.plot and Path(args.plot).suffix.lower() != ".png":
            raise FitError(f"--plot '{args.plot}': expected a .png file name (the .svg goes next to it)")
        args.data = load_probe(args.probe)
        args.base = load_probe(args.baseline) if args.baseline else None
        if args.base is not None:
            # Zero is never assumed: the knobs come from the probe file's record or the flags.
            args.knobs = knobs_of_the_run(args.data, args.base, given, args.knobs, args.probe, args.baseline)

    def run(self, args):
        try:
            return execute(args, args.data, args.base, args.knobs)
        except OSError as err:
            raise CommandError(f"cannot write output: {err}") from None


def main(argv=None):
    return FitCommand().main(argv)


def execute(args, data, base, knobs):
    m, y = series(data)
    if base is None:
        regimes = segment_fit(m, y, max_regimes=args.max_regimes)
        intervals = fit_intervals.regime_intervals(fit_intervals.draws(data, regimes, fit_line))
        print(f"T(m) = T0 + m/B per regime, {args.probe} ({len(m)} sizes)")
        print(format_regimes(regimes, intervals))
        print(fit_intervals.source_text(data, intervals))
        result = {"regimes": regime_summaries(regimes, intervals)}
        plots = [("probe", m, y, regimes, "solid")]
        title = "T(m) = T0 + m/B per protocol regime"
    else:
        mb, yb = series(base)
        base_regimes = segment_fit(mb, yb, max_regimes=args.max_regimes)
        regimes = fit_in_regimes(m, y, base_regimes)
        predicted = predict_regimes(base_regimes, knobs)
        base_draws = fit_intervals.draws(base, base_regimes, fit_line)
        measured_draws = fit_intervals.draws(data, regimes, fit_line)
        base_intervals = fit_intervals.regime_intervals(base_draws)
        intervals = fit_intervals.regime_intervals(measured_draws)
        rows = [{**row, "T0_error_interval_us": e["T0_error_us"], "G_error_interval_ns_per_byte": e["G_error_ns_per_byte"]}
                for row, e in zip(compare(predicted, regimes),
                                  fit_intervals.error_intervals(base_draws, measured_draws, knobs))]
        print(f"baseline {args.baseline}:")
        print(format_regimes(base_regimes, base_intervals))
        print(fit_intervals.source_text(base, base_intervals))
        print(f"with knobs {format_knobs(knobs)}, {args.probe}, fitted in the baseline's regimes:")
        print(format_regimes(regimes, intervals))
        print(fit_intervals.source_text(data, intervals))
        print(f"{'sizes [B]':>19} {'T0 pred':>9} {'T0 meas':>9} {'error':>8} "
              f"{'1/B pred':>10} {'1/B meas':>10} {'error':>9}  {'T0 error 95 %':>20}  {'1/B error 95 %':>22}"
              f"   (us; 1/B in ns/B)")
        for r in rows:
            print(f"{r['m_min']:>9}..{r['m_max']:<9} {r['T0_predicted_us']:9.3f} {r['T0_measured_us']:9.3f} "
                  f"{r['T0_error_us']:+8.3f} {r['G_predicted_ns_per_byte']:10.5f} "
                  f"{r['G_measured_ns_per_byte']:10.5f} {r['G_error_ns_per_byte']:+9.5f}  "
                  f"{fit_intervals.interval_text(r['T0_error_interval_us'], 3):>20}  "
                  f"{fit_intervals.interval_text(r['G_error_interval_ns_per_byte'], 5):>22}")
        result = {"baseline_regimes": regime_summaries(base_regimes, base_intervals),
                  "regimes": regime_summaries(regimes, intervals), "comparison": rows,
                  "knobs": {FIELDS[k]: v for k, v in knobs.values().items()}}
        plots = [("baseline", mb, yb, base_regimes, "solid"), ("with knobs", m, y, regimes, "solid"),
                 ("LogGP prediction", m, None, predicted, "dashed")]
        title = "T(m) with knobs vs LogGP prediction"
    if args.json:
        write_text_atomic(args.json, json.dumps(result, indent=2) + "\n")
    if args.plot:
        plot_fit(args.plot, plots, title)
        print(f"plot: {args.plot} and {Path(args.plot).with_suffix('.svg')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
