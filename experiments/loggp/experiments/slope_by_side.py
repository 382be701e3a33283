"""How G's bulk slope moves when o is spun on one side of a stream or on both, and under
g and L, which delay one side each.

`loggp calibrate` reads G as the slope of the stream interval g(m) between the bulk sizes,
and a knob's cross-talk on G as that slope under the knob less the armed baseline's. LogP
takes a stream to run at max(o_s, o_r) over its machine interval, as if one side bound it;
this runs the probe with o on both sides, on the receive side alone and on the send side
alone, and with g (a wait before a send) and L (a hold after a receive) at the same value,
beside the armed baseline in interleaved rounds of one launch, for several launches, and
prints how each moves the slope and the two sizes' intervals, and g's move less the send
side's and L's less the receive side's, paired per round (docs/benchmarks.md, "Known
defects"):

    python analysis/bench/bulk_slope_by_side.py --o 1us --runs 60
"""
import argparse

from loggp.experiments import precision, probe_launches
from loggp.experiments.calibration_plan import ARMED, BULK_MIN_BYTES, CAL_SIZES
from loggp.experiments.probe import ProbeError, run_probe_sets
from loggp.knobs import grammar

# the sizes calibrate's G slope spans: the bulk sizes' ends
SMALL, LARGE = min(s for s in CAL_SIZES if s >= BULK_MIN_BYTES), max(CAL_SIZES)
SIDES = {"both": ("o_s", "o_r"), "receive": ("o_r",), "send": ("o_s",), "g": ("g",), "L": ("L",)}
LABELS = {"both": "o, both sides", "receive": "o, receive side", "send": "o, send side", "g": "g", "L": "L"}
# each knob that delays one side, and the o spin on that side
ALIKE = (("g", "send"), ("L", "receive"))
PROBE_ARGS = ["--sizes", f"{SMALL},{LARGE}", "--no-refine", "--time-limit", "1", "--rel-ci", "0.005",
              "--abs-ci-ns", "10"]
ROUNDS = 8


def knob_sets(o_us):
    """The armed baseline first, then one set per side with o there at `o_us`, then g and
    L at `o_us`."""
    sets = [dict(ARMED)]
    for names in SIDES.values():
        sets.append({**ARMED, **{name: o_us for name in names}})
    return sets


def round_intervals(result, size):
    """The per-round stream intervals (us) of one knob set's result at `size` bytes."""
    for entry in result["sizes"]:
        if entry["bytes"] == size:
            return entry["g_us"]["rounds_us"]
    raise ProbeError(f"the probe result has no {size} B size")


def slope_ns_per_byte(small_us, large_us, small=SMALL, large=LARGE):
    """The slope between two stream intervals (us) of sizes `small` < `large`, in ns/B."""
    return (large_us - small_us) * 1000.0 / (large - small)


def launch_differences(results):
    """Per set (SIDES), the rounds of one launch as (slope change ns/B, small-size change us,
    large-size change us), each the set less the armed baseline of the same round."""
    armed_small, armed_large = round_intervals(results[0], SMALL), round_intervals(results[0], LARGE)
    out = {}
    for side, result in zip(SIDES, results[1:]):
        small, large = round_intervals(result, SMALL), round_intervals(result, LARGE)
        if not len(small) == len(large) == len(armed_small) == len(armed_large):
            raise ProbeError("the knob sets of one launch have different numbers of rounds")
        out[side] = [(slope_ns_per_byte(s, l) - slope_ns_per_byte(a, b), s - a, l - b)
                     for s, l, a, b in zip(small, large, armed_small, armed_large)]
    return out


def summarise(launches):
    """Per set: the slope change over every round pooled, over the launches' own medians,
    and the two sizes' interval changes, each a median with its 95 % interval; per pair of
    ALIKE, the knob's slope change less the o side's, paired per round."""
    table = {}
    for side in SIDES:
        rows = [r for launch in launches for r in launch[side]]
        medians = [precision.median([r[0] for r in launch[side]]) for launch in launches]
        table[side] = {"slope": precision.median_interval([r[0] for r in rows]),
                       "launch_medians": precision.median_interval(medians),
                       "below_zero": sum(m < 0 for m in medians),
                       "small": precision.median_interval([r[1] for r in rows]),
                       "large": precision.median_interval([r[2] for r in rows])}
    for knob, side in ALIKE:
        table[f"{knob} less {side}"] = precision.median_interval(
            [k[0] - o[0] for launch in launches for k, o in zip(launch[knob], launch[side])])
    return table


def _interval(i, places, unit):
    if not i.bounded:
        return f"{i.estimate:+.{places}f} {unit} (too few for an interval)"
    return f"{i.estimate:+.{places}f} [{i.low:+.{places}f}, {i.high:+.{places}f}] {unit}"


def report(table, o_us, launches):
    lines = [f"o = {o_us:g} us on each side in turn, and g and L at {o_us:g} us, against the armed baseline of "
             f"the same round; {launches} launches of {ROUNDS} rounds; medians [95 %]", "",
             f"| set | G's slope {SMALL // 1024}-{LARGE // 1024} KiB | over the launches' medians "
             f"(below 0) | {SMALL // 1024} KiB interval | {LARGE // 1024} KiB interval |", "|---|---|---|---|---|"]
    for side in SIDES:
        row = table[side]
        lines.append(f"| {LABELS[side]} | {_interval(row['slope'], 4, 'ns/B')} | {_interval(row['launch_medians'], 4, 'ns/B')}"
                     f" ({row['below_zero']} of {launches}) | {_interval(row['small'], 3, 'us')} | "
                     f"{_interval(row['large'], 3, 'us')} |")
    lines.append("")
    for knob, side in ALIKE:
        lines.append(f"G's slope under {knob} less under o on the {side} side, paired per round: "
                     f"{_interval(table[f'{knob} less {side}'], 4, 'ns/B')}")
    return "\n".join(lines) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bulk_slope_by_side.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--o", default="1us", help="o to spin on each side in turn, and g and L (default 1us)")
    probe_launches.add_options(parser, 30)
    args = parser.parse_args(argv)
    try:
        args.o_us = grammar.parse_duration(args.o, 1e-9, 1e-3) * 1e6
    except grammar.GrammarError as err:
        parser.error(f"--o {err}")
    args.runs = probe_launches.launch_count(parser, args.runs)
    return args


def main(argv=None):
    args = parse_args(argv)
    return probe_launches.run_and_report(
        "bulk_slope_by_side", args.runs,
        lambda: launch_differences(run_probe_sets(PROBE_ARGS, knob_sets(args.o_us), rounds=ROUNDS)),
        lambda launches: report(summarise(launches), args.o_us, len(launches)), args.out)
