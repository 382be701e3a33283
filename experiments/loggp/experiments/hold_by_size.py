"""How a half round trip answers a hold: G's hold at each small size against an L hold of
the same length.

`loggp calibrate` reads L as T - o_s - o_r over the sizes below the bulk range, and L's
cross-talk under G as that reading less the (m-1)G a set G owes. G delays a message of m
bytes by holding it (m-1)G, as L holds every message L. This runs the probe with G set
and, for each small size m, with L set to that size's (m-1)G, beside the armed baseline in
interleaved rounds of one launch, for several launches, and prints per size what each
hold added beyond its own length, and the difference between the two. Equal excesses say
that G's reading moves as any hold of that length moves it on this machine
(docs/benchmarks.md, "Known defects"):

    python analysis/bench/hold_by_size.py --G 0.5ns/B --runs 12
"""
import argparse

from loggp.experiments import precision, probe_launches
from loggp.experiments.calibration_plan import ARMED, BULK_MIN_BYTES, CAL_SIZES
from loggp.experiments.probe import ProbeError, run_probe_sets
from loggp.knobs import KnobError, parse as parse_knob_values

# the sizes calibrate reads L over
SIZES = [s for s in CAL_SIZES if s < BULK_MIN_BYTES]
PROBE_ARGS = ["--sizes", ",".join(map(str, SIZES)), "--no-refine", "--time-limit", "1", "--rel-ci", "0.005",
              "--abs-ci-ns", "10"]
ROUNDS = 8


def hold_us(size, G_ns_per_byte):
    """The hold a set G adds to a message of `size` bytes over the armed baseline, in us."""
    return (size - 1) * (G_ns_per_byte - ARMED["G"]) / 1000.0


def knob_sets(G_ns_per_byte):
    """The armed baseline first, then G, then per small size L at that size's hold."""
    return ([dict(ARMED), {**ARMED, "G": G_ns_per_byte}] +
            [{**ARMED, "L": ARMED["L"] + hold_us(size, G_ns_per_byte)} for size in SIZES])


def _rounds(result, size, name):
    for entry in result["sizes"]:
        if entry["bytes"] == size:
            return entry[name]["rounds_us"]
    raise ProbeError(f"the probe result has no {size} B size")


def latency_rounds(result, size):
    """The per-round T - o_s - o_r (us) of one knob set's result at `size` bytes."""
    columns = [_rounds(result, size, name) for name in ("T_us", "o_s_us", "o_r_us")]
    if len({len(c) for c in columns}) != 1:
        raise ProbeError(f"the {size} B columns have different numbers of rounds")
    return [t - s - r for t, s, r in zip(*columns)]


def launch_excess(results, G_ns_per_byte):
    """Per size, the rounds of one launch as (G's excess, L's excess) in ns: each set's
    T - o_s - o_r less the armed baseline's of the same round, less the hold it set."""
    armed, under_G, under_L = results[0], results[1], results[2:]
    if len(under_L) != len(SIZES):
        raise ProbeError(f"expected {2 + len(SIZES)} knob sets, got {len(results)}")
    out = {}
    for size, with_L in zip(SIZES, under_L):
        base, g, l = (latency_rounds(r, size) for r in (armed, under_G, with_L))
        if not len(base) == len(g) == len(l):
            raise ProbeError("the knob sets of one launch have different numbers of rounds")
        hold = hold_us(size, G_ns_per_byte)
        out[size] = [((gi - bi - hold) * 1000.0, (li - bi - hold) * 1000.0) for bi, gi, li in zip(base, g, l)]
    return out


def summarise(launches):
    """Per size: G's excess, L's excess and their paired difference, each pooled over every
    round of every launch, a median with its 95 % interval; and L's cross-talk under G as
    calibrate reads it, the median over the sizes of G's excess, per round."""
    table = {}
    for size in SIZES:
        rows = [r for launch in launches for r in launch[size]]
        table[size] = {"G": precision.median_interval([r[0] for r in rows]),
                       "L": precision.median_interval([r[1] for r in rows]),
                       "difference": precision.median_interval([r[0] - r[1] for r in rows])}
    per_round = [precision.median([launch[size][i][0] for size in SIZES])
                 for launch in launches for i in range(len(launch[SIZES[0]]))]
    table["L under G"] = precision.median_interval(per_round)
    return table


def _interval(i):
    if not i.bounded:
        return f"{i.estimate:+.0f} ns (too few for an interval)"
    return f"{i.estimate:+.0f} [{i.low:+.0f}, {i.high:+.0f}] ns"


def report(table, G_ns_per_byte, launches):
    lines = [f"G = {G_ns_per_byte:g} ns/B, and per size L at that size's (m-1)G, against the armed baseline of "
             f"the same round; {launches} launches of {ROUNDS} rounds; what T - o_s - o_r grew beyond the hold; "
             "medians [95 %]", "",
             "| bytes | hold | under G | under L of the same hold | G less L, paired |", "|---|---|---|---|---|"]
    for size in SIZES:
        row = table[size]
        lines.append(f"| {size} | {hold_us(size, G_ns_per_byte) * 1000.0:.0f} ns | {_interval(row['G'])} | "
                     f"{_interval(row['L'])} | {_interval(row['difference'])} |")
    lines += ["", f"L's cross-talk under G, as calibrate reads it (median over the sizes): {_interval(table['L under G'])}"]
    return "\n".join(lines) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="hold_by_size.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--G", default="0.5ns/B", help="G to set (default 0.5ns/B)")
    probe_launches.add_options(parser, 12)
    args = parser.parse_args(argv)
    try:
        args.G_ns = parse_knob_values({"G": args.G})["G"]
    except KnobError as err:
        parser.error(str(err))
    if args.G_ns <= ARMED["G"]:
        parser.error(f"--G {args.G!r}: must be above the armed step of {ARMED['G']:g} ns/B")
    args.runs = probe_launches.launch_count(parser, args.runs)
    return args


def main(argv=None):
    args = parse_args(argv)
    return probe_launches.run_and_report(
        "hold_by_size", args.runs,
        lambda: launch_excess(run_probe_sets(PROBE_ARGS, knob_sets(args.G_ns), rounds=ROUNDS), args.G_ns),
        lambda launches: report(summarise(launches), args.G_ns, len(launches)), args.out)
