"""`loggp bench knobs`: each knob at 1, 10, 100 us (G as (k-1)G at 4 KiB and
64 KiB) with each of the four patterns, the measured increase beside what
LogGP predicts for that pattern (pattern_model.py)."""
import statistics
import sys

from . import machine_load
from . import pattern_model as model
from .patterns_run import (DEFAULT_PROVIDER, NP, TARGET_NS, detours_text, host_detours, interleaved, load_average,
                           measure, measure_paired)

# How a knob's run is set against zero knobs: "in-run", each repetition beside
# one without the knobs in the same run (milliseconds apart); "runs", the
# whole run against the zero-knob run of its round (seconds apart, across
# which a shared machine's own figures move by more than many tolerances).
PAIRINGS = ("in-run", "runs")

PATTERNS = ("pingpong", "window", "exchange", "compute")
UNITS_PER_COUNT = {"pingpong": 2, "window": model.WINDOW, "exchange": 1, "compute": model.WINDOW}
MIN_COUNT = {"pingpong": 20, "window": 2, "exchange": 20, "compute": 2}


def count_for(pattern, ns_per_unit, scale):
    """Count that makes one repetition last about TARGET_NS * scale."""
    count = int(TARGET_NS * scale / (max(ns_per_unit, 1.0) * UNITS_PER_COUNT[pattern]))
    return max(count, MIN_COUNT[pattern])


def guess_ns(pattern, size, compute_ns):
    """A generous first guess of a zero-knob figure, only to size the first counts."""
    stream = 300 + 0.15 * size
    return {"pingpong": 700 + 0.3 * size, "window": stream, "exchange": 800 + 0.3 * size,
            "compute": max(stream, compute_ns) + 300}[pattern]


def time_text(us):
    """A time for `loggp run` and the table: the largest unit it is at least one
    of, in plain decimals (the knob parser takes no exponents)."""
    for unit, per in (("s", 1e6), ("ms", 1e3), ("us", 1.0)):
        if us >= per:
            break
    else:
        unit, per = "ns", 1e-3
    return f"{us / per:.6f}".rstrip("0").rstrip(".") + unit


def knob_settings(knobs, values_us, g_sizes):
    """(name, knob, size, flags, Knobs increments) for each setting measured."""
    out = []
    for knob in knobs:
        for value in values_us:
            ns = value * 1000.0
            if knob == "G":  # the knobs hold G in whole ps per byte: predict with the value set
                for size in g_sizes:
                    per_byte = max(round(ns / (size - 1), 3), 0.001)
                    out.append((f"G={per_byte:g}ns/B", "G", size, ("--G", f"{per_byte:.3f}ns/B"),
                                model.Knobs(G=per_byte)))
                continue
            flag = time_text(value)
            increments = {"o": model.Knobs(os=ns, or_=ns), "g": model.Knobs(g=ns), "L": model.Knobs(L=ns)}[knob]
            out.append((f"{knob}={flag}", knob, 8, (f"--{knob}", flag), increments))
    return out


def base_from(figures, size, compute_ns, g_machine=None):
    return model.Base(bytes=size, pingpong=figures[("pingpong", size)], window=figures[("window", size)],
                      exchange=figures[("exchange", size)], compute=figures[("compute", size)],
                      compute_ns=compute_ns, ack_halfrtt=figures[("pingpong", model.ACK_BYTES)],
                      g_machine=g_machine)


def knob_accuracy(knobs, values_us, g_sizes, rounds, provider, reps, scale, compute_ns, g_machine=None, mpi="mpich",
                  pairing="in-run", judge=None):
    """Each setting's increase per pattern beside LogGP's prediction. judge(differences,
    expected, tolerance, unit) gives each line its verdict from the interval of its paired
    differences: in-run, every repetition beside the one without the knob, over all rounds;
    runs, each round's run minus its zero-knob run."""
    if judge is None:
        raise ValueError("knob_accuracy needs a judge of paired differences (loggp.experiments.precision)")
    settings = knob_settings(knobs, values_us, g_sizes)
    sizes = sorted({model.ACK_BYTES} | {s[2] for s in settings})
    base_specs = [(p, size, count_for(p, guess_ns(p, size, compute_ns), scale)) for size in sizes for p in PATTERNS]
    # a setting is its name and size: at the smallest G step two sizes share a name
    names = ["zero"] + [(s[0], s[2]) for s in settings]
    runs = {name: [] for name in names}
    repetitions = {name: {} for name in names}  # in-run: every repetition's paired difference, all rounds
    first_base = None  # round 1 runs zero knobs first; knob runs size their counts by its predictions
    load_start, detours = load_average(), host_detours()
    watch = machine_load.LoadWatch().start()
    for r, order in enumerate(interleaved(rounds, names)):
        for name in order:
            if name == "zero":
                runs["zero"].append(measure(base_specs, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi))
                first_base = first_base or runs["zero"][0]
                continue
            _, knob, size, flags, increments = next(s for s in settings if (s[0], s[2]) == name)
            base = base_from(first_base, size, compute_ns)
            specs = [(p, size, count_for(p, model.PREDICT[p](base, increments), scale)) for p in PATTERNS]
            if pairing == "in-run":
                paired = measure_paired(specs, flags, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi)
                runs[name].append({key: statistics.median(diffs) for key, (_, diffs) in paired.items()})
                for key, (_, diffs) in paired.items():
                    repetitions[name].setdefault(key, []).extend(diffs)
            else:
                runs[name].append(measure(specs, knobs=flags, provider=provider, reps=reps, compute_ns=compute_ns,
                                          mpi=mpi))
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    zero = {key: statistics.median(run[key] for run in runs["zero"]) for key in runs["zero"][0]}
    rows = []
    for name, knob, size, flags, increments in settings:
        key = (name, size)
        base = base_from(zero, size, compute_ns, g_machine)
        for p in PATTERNS:
            if pairing == "in-run":  # each round's reading is already against its own repetitions
                increases = [run[(p, size)] for run in runs[key]]
                spread = model.baseline_spread(increases)
            else:
                increases = [run[(p, size)] - z[(p, size)] for run, z in zip(runs[key], runs["zero"])]
                spread = model.baseline_spread([z[(p, size)] for z in runs["zero"]])
            measured = statistics.median(increases)
            predicted = model.predicted_increase(p, base, increments)
            tol = model.tolerance(knob, predicted, size)
            pairs = repetitions[key][(p, size)] if pairing == "in-run" else increases
            judged = judge(pairs, predicted, tol, "ns") if tol is not None else None
            rows.append({"setting": name, "knob": knob, "bytes": size, "pattern": p, "base_ns": zero[(p, size)],
                         "predicted_increase_ns": predicted, "measured_increase_ns": measured,
                         "error_ns": measured - predicted, "tolerance_ns": tol,
                         "verdict": judged["verdict"] if judged else "no goal",
                         "reason": judged["reason"] if judged else "no goal for a pattern the knob should not move",
                         "interval_ns": judged["interval"] if judged else None,
                         "spread_ns": spread, "unsteady": model.unsteady(spread, tol),
                         "increases": increases})
    gaps = {size: model.machine_gap(base_from(zero, size, compute_ns, g_machine))
            for size in sorted({s[2] for s in settings})}
    return {"np": NP, "mpi": mpi, "provider": provider or DEFAULT_PROVIDER[mpi], "rounds": rounds, "reps": reps,
            "pairing": pairing,
            "compute_ns": compute_ns,
            "window": model.WINDOW, "ack_bytes": model.ACK_BYTES, "g_machine_ns": gaps,
            "g_machine_from": "given" if g_machine is not None else "plain window",
            "load_average": [load_start, load_average()], "detours": detours, "rows": rows,
            "shared_cores": watch.end().line()}


KNOB_TERMS = (
    ("base", "the pattern's figure at zero knobs (ns per half round trip / message / iteration), same run"),
    ("predicted", "LogGP's increase for this pattern: pingpong 2o, L, (k-1)G a half round trip or g_total/2 if "
                  "that is longer; exchange the same one-way sum or g_total per iteration; window (W+3)/W o, 2L/W, "
                  "(k-1)G per message or g_total; compute the same, with g below the computation hidden"),
    ("g_total", "g_machine + g + (k-1)G: LogP's minimum spacing of injections at a process; g_machine from the "
                "plain window (W x ns/msg = (W-1) g_machine + one-way + ack) unless --g-machine-ns gives it"),
    ("measured", {"in-run": "median over rounds of the run's median over repetitions of (repetition with the knob - "
                            "the one beside it without: --alternate, the knob scoped to the kernel region)",
                  "runs": "median over rounds of (run with the knob - zero-knob run of the same round)"}),
    ("error", "measured - predicted"),
    ("tolerance", "o, L: max(2 %, 100 ns) of the prediction; g, G (k >= 4 KiB): 2 %; a prediction under 100 ns "
                  "(a pattern the knob should not move): 100 ns"),
    ("spread", {"in-run": "max - min of this line's readings over the rounds",
                "runs": "max - min of this line's zero-knob runs over the rounds"}),
    ("verdict", {"in-run": "from the 95 % interval (order statistics) of every repetition's difference to the one "
                           "beside it, all rounds: met, inside predicted +- tolerance; missed, wholly outside; "
                           "unresolved, neither (too few repetitions, or noise); * the reading moved more between "
                           "rounds than the tolerance",
                 "runs": "from the 95 % interval (order statistics) of the rounds' differences: met, inside "
                         "predicted +- tolerance; missed, wholly outside; unresolved, neither (too few rounds, or "
                         "noise); * the zero-knob baseline moved more between rounds than the tolerance"}),
)


def knob_terms(pairing):
    """The terms' texts for the pairing a result was measured with."""
    return [(term, text[pairing] if isinstance(text, dict) else text) for term, text in KNOB_TERMS]


def print_knobs(result):
    pairing = result.get("pairing", "runs")
    against = ("each repetition beside one without the knob in the same run, and a zero-knob run for the base"
               if pairing == "in-run" else "a zero-knob run each")
    print(f"knob accuracy: np={result['np']}, {result.get('mpi', 'mpich')}, libfabric provider {result['provider']}; "
          f"{result['rounds']} round{'s' if result['rounds'] != 1 else ''} "
          f"interleaved, {against}; medians of {result['reps']} repetitions per run; window "
          f"W={result['window']}, ack {result['ack_bytes']} B; compute {result['compute_ns']:g} ns before each send")
    print(f"load average (1 min) {result['load_average'][0]:.1f} at the start, {result['load_average'][1]:.1f} at the "
          "end: figures measured on a loaded machine are not results")
    print(detours_text(result.get("detours")))
    if result.get("shared_cores"):
        print(result["shared_cores"])
    gaps = ", ".join(f"{size} B {gap:.0f} ns" for size, gap in sorted(result["g_machine_ns"].items()))
    print(f"g_machine ({result['g_machine_from']}): {gaps}")
    print(f"  {'setting':16s} {'bytes':>6s} {'pattern':9s} {'base':>9s} {'predicted':>10s} {'measured':>10s} "
          f"{'error':>8s} {'tolerance':>9s} {'spread':>8s}  verdict")
    for row in result["rows"]:
        tol = f"{row['tolerance_ns']:9.0f}" if row["tolerance_ns"] is not None else f"{'-':>9s}"
        spread = row.get("spread_ns", row.get("zero_spread_ns"))
        spread = f"{spread:8.0f}" if spread is not None else f"{'-':>8s}"
        print(f"  {row['setting']:16s} {row['bytes']:6d} {row['pattern']:9s} {row['base_ns']:9.1f} "
              f"{row['predicted_increase_ns']:+10.1f} {row['measured_increase_ns']:+10.1f} {row['error_ns']:+8.1f} "
              f"{tol} {spread}  {row['verdict']}{'*' if row.get('unsteady') else ''}")
    judged = [row for row in result["rows"] if row["verdict"] != "no goal"]
    count = {v: sum(row["verdict"] == v for row in judged) for v in ("met", "missed", "unresolved")}
    unsteady = sum(bool(row.get("unsteady")) for row in judged)
    moved = "a reading" if pairing == "in-run" else "a baseline"
    print(f"{count['met']} of {len(judged)} lines met, {count['missed']} missed, {count['unresolved']} unresolved; "
          f"{unsteady} had {moved} that moved more than their tolerance (*)")
    print("terms (ns):")
    for term, text in knob_terms(pairing):
        print(f"  {term:10s} {text}")
