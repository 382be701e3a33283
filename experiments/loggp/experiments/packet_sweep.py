"""The packet-size sweep behind `loggp tune packet`: runs loggp-packet at np=2 under
`loggp run` with each knob setting, refines around each setting's best size, and
sets the measured best beside LogGP's predicted best (experiments/loggp/experiments/packet_model.py).

The functions that start programs (`run_benchmark`, `probe_machine`) are the only
ones touching the machine, so tests can replace them."""
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.knobs import SETTINGS, KnobError, grammar, parse as parse_knobs
from loggp.knobs.params import format_value
from loggp.knobs.vocabulary import FIELDS, knobs_of
from loggp.knobs.command import CommandError
from loggp.knobs.programs import find_program

from . import calibration_readings, fit, precision, probe
from . import packet_model as model
from .probe import KNOB_FLAGS

# The knobs a setting may name; "o" sets o_s and o_r together, as `loggp run --o` does.
SETTING_KNOBS = SETTINGS
# Enough sizes on both sides of a protocol switch for T(m)'s regimes (3 points each).
QUICK_PROBE_SIZES = "8,64,512,2048,4096,8192,16384,32768,65536,262144"


class TuneError(CommandError):
    """The benchmark could not run, failed verification, or input was bad (exit 1)."""


def parse_setting(spec, warn=None):
    """'zero' or 'knob=value,...' (knobs o, o_s, o_r, g, G, L; values as `loggp run`
    takes them, checked by loggp-knobs) -> (label, {o_s, o_r, g, L: ns, G: ns/B}), the
    increments a LogGP set's plus() takes."""
    text = spec.strip()
    if text in ("zero", "0", "none"):
        return "zero", {}
    texts = grammar.parse_settings(text, "--setting", warn)  # GrammarError is a ValueError
    try:
        ns = parse_knobs(texts)  # the one knob parser (loggp-knobs)
    except KnobError as err:
        raise ValueError(f"--setting '{spec}': {err}") from None
    # loggp-knobs has refused o together with o_s or o_r
    return text, {knob: value for name, value in ns.items() for knob in knobs_of(name)}


def run_command(knobs, bench_args):
    """`loggp run` of loggp-packet with every knob given (so no knob file leaks in)."""
    knob_args = []
    for knob, flag in KNOB_FLAGS.items():
        knob_args += [flag, format_value(knob, knobs.get(knob, 0.0))]
    return [sys.executable, "-m", "loggp.cli", "run", "-n", "2", "--quiet", *knob_args, "--",
            find_program("loggp-packet"), *bench_args]


def parse_lines(text):
    """loggp-packet's JSON lines -> (setup dict, [run dicts])."""
    setup, runs = None, []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise TuneError(f"loggp-packet output line {i} is not JSON: {line[:80]!r}") from None
        if row.get("kind") == "setup":
            setup = row
        elif row.get("kind") == "run":
            runs.append(row)
    if setup is None or not runs:
        raise TuneError("loggp-packet wrote no measurements")
    return setup, runs


def run_benchmark(knobs, sizes, records, record_size, reps, timeout=600):
    """One loggp-packet run under `knobs` -> (setup, runs). A failed verification or
    run raises TuneError with the program's own message."""
    with tempfile.TemporaryDirectory(prefix="loggp-packet-") as tmp:
        out = Path(tmp, "packet.jsonl")
        args = ["--records", str(records), "--record-size", str(record_size), "--reps", str(reps),
                "--sizes", ",".join(str(s) for s in sizes), "--out", str(out)]
        cmd = run_command(knobs, args)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TuneError(f"loggp-packet timed out after {timeout} s: {' '.join(cmd)}") from None
        if proc.returncode != 0 or not out.is_file():
            detail = "\n  ".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
            raise TuneError(f"loggp-packet failed (exit {proc.returncode}): {' '.join(cmd)}\n  {detail}")
        return parse_lines(out.read_text())


def machine_from_calibration(path):
    """The machine's own o_s, o_r, g, L (us) and G (ns/B) from `loggp calibrate --out`'s
    calibration.json (its zero-knob reference; G from the baseline's largest regime); a folder
    stands for the calibration.json in it."""
    if Path(path).is_dir():
        path = Path(path) / "calibration.json"
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise TuneError(f"cannot read calibration '{path}': {err}") from None
    ref = data.get("reference") if isinstance(data, dict) else None
    if not isinstance(ref, dict) or not all(isinstance(ref.get(k), (int, float)) for k in ("o_s", "o_r", "g", "L")):
        raise TuneError(f"calibration '{path}' has no reference o_s, o_r, g, L (not calibrate's calibration.json?)")
    regimes = (data.get("baseline") or {}).get("regimes") or []
    source = f"calibration {path}"
    try:
        G, steps = regime_steps([(r["m_min"], r["T0_us"], r["G_ns_per_byte"]) for r in regimes])
    except (KeyError, TypeError):
        raise TuneError(f"calibration '{path}': baseline regimes lack m_min, T0_us or G_ns_per_byte") from None
    if not regimes:
        source += " (no baseline regimes: machine G taken as 0)"
    return {"o_s": ref["o_s"], "o_r": ref["o_r"], "g": max(ref["g"], 0.0), "G": G, "L": max(ref["L"], 0.0),
            "regimes": steps}, source


def regime_steps(regimes):
    """[(m_min, T0 us, G ns/B)] of T(m)'s regimes -> (the first regime's G, the later
    regimes as (m_min, T0 rise, G rise) over the first) for packet_model.Params."""
    if not regimes:
        return 0.0, []
    regimes = sorted(regimes)
    _, t0, G = regimes[0]
    return max(G, 0.0), [[m_min, t - t0, g - G] for m_min, t, g in regimes[1:]]


def probe_machine():
    """A quick probe at zero knobs under `loggp run` (the benchmark's path): o_s, o_r,
    g, L from small messages, G from the largest regime of T(m)."""
    try:
        run = probe.run_probe(["--sizes", QUICK_PROBE_SIZES, "--time-limit", "0.5"], knobs={})
    except probe.ProbeError as err:
        raise TuneError(f"quick probe of the machine failed: {err}") from None
    params = calibration_readings.point_parameters(run)
    G, steps = regime_steps([(r.m_min, r.T0_us, r.us_per_byte * 1000.0) for r in fit.segment_fit(*fit.series(run))])
    return ({"o_s": params["o_s"], "o_r": params["o_r"], "g": max(params["g"], 0.0), "G": G,
             "L": max(params["L"], 0.0), "regimes": steps}, "quick probe (zero knobs)")


def summarize(runs):
    """Per packet size: median time (us) with its 95 % interval (None for both bounds when
    the reps are too few for one), packets, bytes."""
    by_size = {}
    for r in runs:
        by_size.setdefault(r["packet_size"], []).append(r)
    rows = []
    for size in sorted(by_size):
        rs = by_size[size]
        interval = precision.median_interval([r["time_s"] * 1e6 for r in rs]).as_dict()
        med, low, high = interval["estimate"], interval["low"], interval["high"]
        rows.append({"packet_size": size, "records_per_packet": rs[0]["records_per_packet"],
                     "packets": rs[0]["packets"], "bytes": rs[0]["bytes"], "reps": len(rs),
                     "median_us": med, "ci_low_us": low, "ci_high_us": high})
    return rows


def refined_sizes(best, record_size, records, measured):
    """Sizes between the best power of two and its neighbours (x 3/4, x 3/2, in
    whole records) not yet measured; none past one packet holding every record."""
    out = []
    for factor in (0.75, 1.5):
        be = max(1, round(best * factor / record_size))
        s = be * record_size
        if s not in measured and s not in out and (be <= records or best < records * record_size):
            out.append(s)
    return out


def nearest_measured(rows, size):
    """The measured row whose packet size is nearest `size` on a log scale."""
    return min(rows, key=lambda r: abs(math.log(r["packet_size"] / size)))


def _overlap(a, b):
    """Whether two rows' intervals overlap; a row with no interval could be anywhere."""
    if None in (a["ci_low_us"], a["ci_high_us"], b["ci_low_us"], b["ci_high_us"]):
        return True
    return a["ci_low_us"] <= b["ci_high_us"] and b["ci_low_us"] <= a["ci_high_us"]


def size_verdict(rows, predicted_size):
    """Whether LogGP's best size lies within one power of two of the measured best, with the
    intervals: a size whose interval overlaps the best one's could be the true best (tied).
    met: the prediction is within 2x of every tied size; missed: of none; unresolved: of some
    only, or the best has no interval. Returns (verdict, tied sizes ascending)."""
    best = min(rows, key=lambda r: r["median_us"])
    tied = sorted(r["packet_size"] for r in rows if _overlap(r, best))
    near = [model.within_one_octave(size, predicted_size) for size in tied]
    if best["ci_low_us"] is None or best["ci_high_us"] is None:
        return precision.UNRESOLVED, tied
    if all(near):
        return precision.MET, tied
    if not any(near):
        return precision.MISSED, tied
    return precision.UNRESOLVED, tied


def sweep_setting(label, knobs, machine, sizes, records, record_size, reps, refine, runner, log):
    """Measures one setting and predicts it; returns its result dict."""
    log(f"setting {label}: {len(sizes)} sizes x {reps} reps")
    setup, runs = runner(knobs, sizes, records, record_size, reps)
    rows = summarize(runs)
    if refine:
        best = min(rows, key=lambda r: r["median_us"])["packet_size"]
        extra = refined_sizes(best, record_size, records, {r["packet_size"] for r in rows})
        if extra:
            log(f"setting {label}: refining around {best} B with {', '.join(map(str, extra))}")
            _, more = runner(knobs, extra, records, record_size, reps)
            runs += more
            rows = summarize(runs)
    params = model.params_from_machine(machine, setup["pack_ns_per_record"],
                                       setup["unpack_ns_per_record"]).plus(knobs)
    for r in rows:
        r["predicted_us"] = model.transfer_time_us(r["packet_size"], records, record_size, params)
    best = min(rows, key=lambda r: r["median_us"])
    pred_size, pred_time = model.predicted_best(records, record_size, params, max(r["packet_size"] for r in rows))
    pred_measured = min(rows, key=lambda r: r["predicted_us"])["packet_size"]
    verdict, tied = size_verdict(rows, pred_size)
    return {"setting": label, "knobs": {FIELDS[k]: v for k, v in knobs.items()}, "params_ns": vars(params),
            "rows": rows,
            "measured_best": best["packet_size"], "measured_best_us": best["median_us"],
            "predicted_best": pred_size, "predicted_best_us": pred_time,
            "predicted_best_among_measured": pred_measured,
            # what following the prediction costs: measured time there over the best one
            "cost_of_predicted_size": nearest_measured(rows, pred_size)["median_us"] / best["median_us"],
            "within_one_power_of_two": model.within_one_octave(best["packet_size"], pred_size),
            "verdict": verdict, "tied_with_best": tied,
            "pack_ns_per_record": setup["pack_ns_per_record"], "unpack_ns_per_record": setup["unpack_ns_per_record"]}
