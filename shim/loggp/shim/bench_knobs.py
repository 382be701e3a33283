"""`loggp bench knobs`: each knob at 1, 10, 100 us (G as (k-1)G at 4 KiB and
64 KiB) with each of the four patterns, the measured increase beside what
LogGP predicts for that pattern (pattern_model.py)."""
import dataclasses
import statistics
import sys
import time

from loggp.knobs.params import LogGP
from loggp.knobs.vocabulary import ARMED, ARMED_STEP_NS, FLAGS, SETTINGS, VOCABULARY, knobs_of

from . import machine_load
from . import pattern_model as model
from .patterns_run import (DEFAULT_PROVIDER, NP, TARGET_NS, host_detours, load_average, measure, print_conditions,
                           measure_paired)

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
    """(name, knob, size, flags, LogGP increments) for each setting measured."""
    out = []
    for knob in knobs:
        for value in values_us:
            ns = value * 1000.0
            if knob == "G":  # the knobs hold G in whole ps per byte: predict with the value set
                for size in g_sizes:
                    per_byte = max(round(ns / (size - 1), 3), 0.001)
                    out.append((f"G={per_byte:g}ns/B", "G", size, ("--G", f"{per_byte:.3f}ns/B"),
                                LogGP(G=per_byte)))
                continue
            flag = time_text(value)
            increments = LogGP().plus({knob: ns})
            out.append((f"{knob}={flag}", knob, 8, (f"--{knob}", flag), increments))
    return out


def base_from(figures, size, compute_ns, g_machine=None):
    return model.Base(bytes=size, pingpong=figures[("pingpong", size)], window=figures[("window", size)],
                      exchange=figures[("exchange", size)], compute=figures[("compute", size)],
                      compute_ns=compute_ns, ack_halfrtt=figures[("pingpong", model.ACK_BYTES)],
                      g_machine=g_machine)


# The armed baseline: every knob at its smallest step (o, g, L 1 ns; G 0.001 ns/B), so the
# layer takes every delay path while the delays add ~nothing. A setting runs its knob at
# its value and the others armed; its reading is taken against the armed baseline, so the
# armed layer's own cost per message cancels.
ARMED_FLAGS = {s: (FLAGS[s], ARMED[knobs_of(s)[0]]) for s in SETTINGS if s not in ("o_s", "o_r")}
ALL_ARMED = tuple(flag for pair in ARMED_FLAGS.values() for flag in pair)
ARMED_KNOBS = LogGP(**{k.name: ARMED_STEP_NS[k.unit] for k in VOCABULARY})


def armed_setting(knob, flags, increments):
    """(flags, LogGP increments) of a setting on the armed baseline: the knob at its value,
    every other knob at its smallest step."""
    others = tuple(flag for k, pair in ARMED_FLAGS.items() if k != knob for flag in pair)
    values = {field: getattr(increments, field) for field in knobs_of(knob)}
    return tuple(flags) + others, dataclasses.replace(ARMED_KNOBS, **values)


def predicted_over_armed(pattern, base, knobs):
    """What a setting should add to the armed baseline: LogGP's increase for it less the
    armed steps' own (the model is not linear in the knobs: g is a minimum spacing)."""
    return model.predicted_increase(pattern, base, knobs) - model.predicted_increase(pattern, base, ARMED_KNOBS)


def line_tolerance(knob, predicted, size, precision=None):
    """The goal's half-width for one line: --precision around the prediction if given,
    else the model's own goals (model.tolerance); None where no goal is set."""
    tol = model.tolerance(knob, predicted, size)
    if tol is None or precision is None:
        return tol
    return precision.allowed(predicted)


def knob_accuracy(knobs, values_us, g_sizes, rounds, provider, reps, scale, compute_ns, g_machine=None, mpi="mpich",
                  pairing="in-run", judge=None, precision=None, budget_s=None, clock=time.monotonic):
    """Each setting's increase over the armed baseline per pattern beside LogGP's
    prediction, and the armed layer's own cost per pattern (armed minus zero knobs).
    judge(differences, expected, tolerance, unit, budget_ran_out=..) gives each line its
    verdict from the interval of its paired differences: in-run, every repetition beside
    the armed one in the same run, over all rounds; runs, each round's run minus its armed
    run. `rounds` rounds always run; with budget_s, more follow for the settings whose lines
    are not settled (decided, or as narrow as their tolerance) until the budget is spent."""
    if judge is None:
        raise ValueError("knob_accuracy needs a judge of paired differences (loggp.experiments.precision)")
    settings = knob_settings(knobs, values_us, g_sizes)
    sizes = sorted({model.ACK_BYTES} | {s[2] for s in settings})
    base_specs = [(p, size, count_for(p, guess_ns(p, size, compute_ns), scale)) for size in sizes for p in PATTERNS]
    # a setting is its name and size: at the smallest G step two sizes share a name
    keys = [(s[0], s[2]) for s in settings]
    inside = {(s[0], s[2]): armed_setting(s[1], s[3], s[4]) for s in settings}
    zero_runs, armed_runs = [], []             # per round: {(pattern, bytes): ns}
    armed_cost = {key[:2]: [] for key in base_specs}  # armed - zero, every pair
    pairs = {key: {} for key in keys}          # the differences each line is judged on
    readings = {key: [] for key in keys}       # per round: {(pattern, bytes): median increase}
    load_start, detours = load_average(), host_detours()
    watch = machine_load.LoadWatch().start()
    start = clock()
    pending, done, out_of_budget = list(keys), 0, False
    while pending:
        order, whole_runs = ["armed"] + pending, {}
        for name in order if done % 2 == 0 else reversed(order):
            if name == "armed":
                measure_baselines(base_specs, pairing, zero_runs, armed_runs, armed_cost, provider, reps, compute_ns,
                                  mpi)
                continue
            first_base = zero_runs[0]  # round 1 runs the baselines first; counts follow their predictions
            size = name[1]
            flags, knobs_in = inside[name]
            base = base_from(first_base, size, compute_ns)
            specs = [(p, size, count_for(p, model.PREDICT[p](base, knobs_in), scale)) for p in PATTERNS]
            if pairing == "in-run":
                paired = measure_paired(specs, flags, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi,
                                        outside="armed")
                readings[name].append({key: statistics.median(diffs) for key, (_, diffs) in paired.items()})
                for key, (_, diffs) in paired.items():
                    pairs[name].setdefault(key, []).extend(diffs)
            else:
                whole_runs[name] = measure(specs, knobs=flags, provider=provider, reps=reps, compute_ns=compute_ns,
                                           mpi=mpi)
        for name, run in whole_runs.items():  # runs: against this round's armed run
            armed = armed_runs[-1]
            readings[name].append({key: run[key] - armed[key] for key in run})
            for key in run:
                pairs[name].setdefault(key, []).append(run[key] - armed[key])
        done += 1
        print(f"  round {done} done ({len(pending)} setting{'s' if len(pending) != 1 else ''})", file=sys.stderr)
        if done < rounds:
            continue
        if budget_s is None:
            break
        zero = medians(zero_runs)
        pending = [key for key in pending
                   if not all(judged["settled"] for judged in judge_setting(key, settings, pairs, zero, compute_ns,
                                                                             g_machine, judge, precision)
                              if judged is not None)]  # a line without a goal has nothing to settle
        if pending and clock() - start >= budget_s:
            out_of_budget = True
            break
    zero = medians(zero_runs)
    rows = []
    for name, knob, size, flags, increments in settings:
        key = (name, size)
        base = base_from(zero, size, compute_ns, g_machine)
        judged_lines = judge_setting(key, settings, pairs, zero, compute_ns, g_machine, judge, precision,
                                     budget_ran_out=out_of_budget if budget_s is not None else None)
        for p, judged in zip(PATTERNS, judged_lines):
            increases = [reading[(p, size)] for reading in readings[key]]
            if pairing == "in-run":  # each round's reading is already against its own repetitions
                spread = model.baseline_spread(increases)
            else:
                spread = model.baseline_spread([a[(p, size)] for a in armed_runs])
            measured = statistics.median(pairs[key][(p, size)])
            predicted = predicted_over_armed(p, base, inside[key][1])
            tol = line_tolerance(knob, predicted, size, precision)
            rows.append({"setting": name, "knob": knob, "bytes": size, "pattern": p, "base_ns": zero[(p, size)],
                         "predicted_increase_ns": predicted, "measured_increase_ns": measured,
                         "error_ns": measured - predicted, "tolerance_ns": tol,
                         "verdict": judged["verdict"] if judged else "no goal",
                         "reason": judged["reason"] if judged else "no goal for a pattern the knob should not move",
                         # a line without a goal still says how precise its reading is
                         "interval_ns": (judged or judge(pairs[key][(p, size)], 0.0, 1.0, "ns"))["interval"],
                         "pairs": len(pairs[key][(p, size)]),
                         "spread_ns": spread, "unsteady": model.unsteady(spread, tol),
                         "increases": increases})
    cost = []
    for (p, size), diffs in armed_cost.items():
        interval = judge(diffs, 0.0, 1.0, "ns")["interval"]  # only its interval: the cost has no goal
        cost.append({"pattern": p, "bytes": size, "zero_ns": zero[(p, size)], "cost_ns": interval["estimate"],
                     "interval_ns": interval, "pairs": len(diffs)})
    gaps = {size: model.machine_gap(base_from(zero, size, compute_ns, g_machine))
            for size in sorted({s[2] for s in settings})}
    return {"np": NP, "mpi": mpi, "provider": provider or DEFAULT_PROVIDER[mpi], "rounds": done,
            "min_rounds": rounds, "reps": reps, "pairing": pairing, "baseline": "armed",
            "armed_flags": list(ALL_ARMED), "armed_cost": cost,
            "precision": precision.text() if precision is not None else None,
            "budget_s": budget_s, "budget_ran_out": out_of_budget, "elapsed_s": round(clock() - start, 1),
            "compute_ns": compute_ns,
            "window": model.WINDOW, "ack_bytes": model.ACK_BYTES, "g_machine_ns": gaps,
            "g_machine_from": "given" if g_machine is not None else "plain window",
            "load_average": [load_start, load_average()], "detours": detours, "rows": rows,
            "shared_cores": watch.end().line()}


def measure_baselines(specs, pairing, zero_runs, armed_runs, armed_cost, provider, reps, compute_ns, mpi):
    """One round's baselines. in-run: one run whose repetitions alternate zero knobs and
    every knob armed (its zero halves give the zero-knob figures); runs: a zero-knob run and
    an armed run. Appends to zero_runs, armed_runs and armed_cost's pairs."""
    if pairing == "in-run":
        paired = measure_paired(specs, ALL_ARMED, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi)
        zero_runs.append({key: zero for key, (zero, _) in paired.items()})
        armed_runs.append({key: zero + statistics.median(diffs) for key, (zero, diffs) in paired.items()})
        for key, (_, diffs) in paired.items():
            armed_cost[key].extend(diffs)
        return
    zero = measure(specs, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi)
    armed = measure(specs, knobs=ALL_ARMED, provider=provider, reps=reps, compute_ns=compute_ns, mpi=mpi)
    zero_runs.append(zero)
    armed_runs.append(armed)
    for key in zero:
        armed_cost[key].append(armed[key] - zero[key])


def medians(runs):
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def judge_setting(key, settings, pairs, zero, compute_ns, g_machine, judge, precision, budget_ran_out=None):
    """Each pattern's verdict (judge's dict) for one setting, None where it has no goal."""
    name, knob, size, flags, increments = next(s for s in settings if (s[0], s[2]) == key)
    knobs_in = armed_setting(knob, flags, increments)[1]
    base = base_from(zero, size, compute_ns, g_machine)
    out = []
    for p in PATTERNS:
        predicted = predicted_over_armed(p, base, knobs_in)
        tol = line_tolerance(knob, predicted, size, precision)
        out.append(judge(pairs[key][(p, size)], predicted, tol, "ns", budget_ran_out=budget_ran_out)
                   if tol is not None else None)
    return out


KNOB_TERMS = (
    ("armed", "the baseline: every knob at its smallest step (o, g, L 1 ns; G 0.001 ns/B): the layer takes each "
              "delay path and the delays add ~nothing, so its own cost per message is on both sides and cancels"),
    ("cost", {"in-run": "the armed layer's own cost: median over every repetition of (every knob armed - the one "
                        "beside it at zero knobs, same run), with its 95 % interval",
              "runs": "the armed layer's own cost: median over rounds of (armed run - zero-knob run of the same "
                      "round), with its 95 % interval"}),
    ("base", "the pattern's figure at zero knobs (ns per half round trip / message / iteration), same run"),
    ("predicted", "LogGP's increase over the armed baseline: for the setting (the knob at its value, the others "
                  "armed) less for every knob armed; pingpong 2o, L, (k-1)G a half round trip or g_total/2 if "
                  "that is longer; exchange the same one-way sum or g_total per iteration; window (W+3)/W o, 2L/W, "
                  "(k-1)G per message or g_total; compute the same, with g below the computation hidden"),
    ("g_total", "g_machine + g + (k-1)G: LogP's minimum spacing of injections at a process; g_machine from the "
                "plain window (W x ns/msg = (W-1) g_machine + one-way + ack) unless --g-machine-ns gives it"),
    ("measured", {"in-run": "median over every repetition of all rounds of (repetition with the setting - the one "
                            "beside it with every knob armed: --alternate, --scope kernel --outside armed)",
                  "runs": "median over rounds of (run with the setting - armed run of the same round)"}),
    ("interval", "the measured median's 95 % interval (order statistics) over the same differences; too few "
                 "pairs: fewer than an interval needs"),
    ("error", "measured - predicted"),
    ("tolerance", "--precision around the prediction if given; else o, L: max(2 %, 100 ns) of the prediction; "
                  "g, G (k >= 4 KiB): 2 %; a prediction under 100 ns (a pattern the knob should not move): 100 ns"),
    ("spread", {"in-run": "max - min of this line's readings over the rounds",
                "runs": "max - min of this line's armed runs over the rounds"}),
    ("verdict", {"in-run": "from the 95 % interval (order statistics) of every repetition's difference to the one "
                           "beside it, all rounds: met, inside predicted +- tolerance; missed, wholly outside; "
                           "unresolved, neither (the budget ran out first, or noise); * the reading moved more "
                           "between rounds than the tolerance",
                 "runs": "from the 95 % interval (order statistics) of the rounds' differences: met, inside "
                         "predicted +- tolerance; missed, wholly outside; unresolved, neither (the budget ran out "
                         "first, or noise); * the armed baseline moved more between rounds than the tolerance"}),
)


def interval_text(interval):
    """'[+9990.1, +10012.4]' of a line's 95 % interval (ns), or why it has none."""
    if interval is None or interval.get("low") is None:
        return f"too few pairs ({interval['n'] if interval else 0})"
    return f"[{interval['low']:+.1f}, {interval['high']:+.1f}]"


def knob_terms(pairing):
    """The terms' texts for the pairing a result was measured with."""
    return [(term, text[pairing] if isinstance(text, dict) else text) for term, text in KNOB_TERMS]


def print_knobs(result):
    pairing = result.get("pairing", "runs")
    against = ("each repetition beside one with every knob armed in the same run"
               if pairing == "in-run" else "the armed run of its round")
    print(f"knob accuracy: np={result['np']}, {result.get('mpi', 'mpich')}, libfabric provider {result['provider']}; "
          f"{result['rounds']} round{'s' if result['rounds'] != 1 else ''} "
          f"interleaved, against {against}; {result['reps']} repetitions per run; window "
          f"W={result['window']}, ack {result['ack_bytes']} B; compute {result['compute_ns']:g} ns before each send")
    print_conditions(result, f"--precision {result['precision']}" if result.get("precision")
                     else "each line's tolerance", "every line's")
    if result.get("armed_cost"):
        print("armed layer's own cost (every knob at its smallest step minus zero knobs, same run; cancelled in "
              "every line below):")
        for c in result["armed_cost"]:
            iv = c["interval_ns"]
            where = (f"[{iv['low']:+.1f}, {iv['high']:+.1f}]" if iv["low"] is not None
                     else "no interval yet")
            print(f"  {c['pattern']:9s} {c['bytes']:6d} B  zero {c['zero_ns']:9.1f}  cost {c['cost_ns']:+8.1f} ns "
                  f"{where} ({c['pairs']} pairs)")
    gaps = ", ".join(f"{size} B {gap:.0f} ns" for size, gap in sorted(result["g_machine_ns"].items()))
    print(f"g_machine ({result['g_machine_from']}): {gaps}")
    print(f"  {'setting':16s} {'bytes':>6s} {'pattern':9s} {'base':>9s} {'predicted':>10s} {'measured':>10s} "
          f"{'[95 % interval]':>21s} {'error':>8s} {'tolerance':>9s} {'spread':>8s}  verdict")
    for row in result["rows"]:
        tol = f"{row['tolerance_ns']:9.0f}" if row["tolerance_ns"] is not None else f"{'-':>9s}"
        spread = row.get("spread_ns", row.get("zero_spread_ns"))
        spread = f"{spread:8.0f}" if spread is not None else f"{'-':>8s}"
        print(f"  {row['setting']:16s} {row['bytes']:6d} {row['pattern']:9s} {row['base_ns']:9.1f} "
              f"{row['predicted_increase_ns']:+10.1f} {row['measured_increase_ns']:+10.1f} "
              f"{interval_text(row['interval_ns']):>21s} {row['error_ns']:+8.1f} "
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
