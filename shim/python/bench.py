"""`loggp bench`: figures about the apparatus itself, measured side by side.

  transparency  8-byte half round trip and small-message rate without
                libloggp.so, with it at zero knobs, and with it armed (every
                knob at its smallest step, 1 ns or 1 ps/B, so every delay path
                runs while adding almost nothing): same routing, interleaved
  knobs         each knob set to one value and read back from a ping-pong or
                a stream: set vs measured increase
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from loggp.knobs.command import Command, UsageError
from loggp.knobs.programs import MissingProgram

from . import run as runmod

NP = 2


def timing_program():
    return runmod.find_program("loggp-timing")


def parse_figures(text):
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            try:
                out[key.strip()] = float(value)
            except ValueError:
                pass
    return out


# Every knob at its smallest step: the delay paths run, the delays are ~1 ns.
ARMED_KNOBS = ("--o", "1ns", "--g", "1ns", "--L", "1ns", "--G", "0.001ns/B")
MODES = ("plain", "loggp", "armed")


def measure(args, knobs=(), preload=True, provider=None, timeout=300):
    """One run of loggp-timing at np=2; returns its figures."""
    argv = ["-n", str(NP), "--quiet", "--engine", "libfabric"]
    if provider:
        argv += ["--provider", provider]
    argv += list(knobs) + ["--", timing_program(), *args]
    parsed = runmod.parser().parse_args(argv)
    additions, cmd = runmod.build(parsed, os.environ)
    env = dict(os.environ)
    env.update(additions)
    if not preload:
        for name in list(env):
            if name == "LD_PRELOAD" or name.startswith("LOGGP_"):
                del env[name]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return parse_figures(proc.stdout)


def transparency(rounds, provider):
    samples = {mode: {"halfrtt_us": [], "rate_per_s": []} for mode in MODES}
    for r in range(rounds):
        order = MODES if r % 2 == 0 else tuple(reversed(MODES))
        for mode in order:
            opts = {"preload": mode != "plain", "provider": provider,
                    "knobs": ARMED_KNOBS if mode == "armed" else ()}
            samples[mode]["halfrtt_us"].append(measure(["pingpong", "8", "2000"], **opts)["halfrtt_us"])
            samples[mode]["rate_per_s"].append(measure(["stream", "8", "5000"], **opts)["rate_per_s"])
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    result = {}
    for figure in ("halfrtt_us", "rate_per_s"):
        med = {mode: statistics.median(samples[mode][figure]) for mode in MODES}
        result[figure] = {"plain": med["plain"], "loggp": med["loggp"], "armed": med["armed"],
                          "ratio": med["loggp"] / med["plain"], "armed_ratio": med["armed"] / med["plain"],
                          **{f"{mode}_samples": samples[mode][figure] for mode in MODES}}
    return result


def print_transparency(result, provider):
    rtt, rate = result["halfrtt_us"], result["rate_per_s"]
    print(f"transparency, np={NP}, libfabric provider {provider or 'shm'} (medians)")
    print(f"  {'figure':28s} {'without':>10s} {'zero knobs':>11s} {'ratio':>7s} {'armed':>10s} {'ratio':>7s}")
    print(f"  {'8 B half round trip (us)':28s} {rtt['plain']:10.3f} {rtt['loggp']:11.3f} {rtt['ratio']:7.3f} "
          f"{rtt['armed']:10.3f} {rtt['armed_ratio']:7.3f}")
    print(f"  {'8 B message rate (1/s)':28s} {rate['plain']:10.0f} {rate['loggp']:11.0f} {rate['ratio']:7.3f} "
          f"{rate['armed']:10.0f} {rate['armed_ratio']:7.3f}")
    print(f"  zero knobs add {100 * (rtt['ratio'] - 1):+.1f} % latency, {100 * (1 / rate['ratio'] - 1):+.1f} % "
          f"message time; armed, the layer itself adds {rtt['armed'] - rtt['plain']:+.3f} us per half round trip "
          f"and {1e6 / rate['armed'] - 1e6 / rate['plain']:+.3f} us per streamed message")


KNOB_CHECKS = [
    # knob flag, figure, program args, how the figure moves per unit set
    ("--os", "halfrtt_us", ["pingpong", "8", "500"], "o_s: ping-pong half round trip"),
    ("--or", "halfrtt_us", ["pingpong", "8", "500"], "o_r: ping-pong half round trip"),
    ("--L", "halfrtt_us", ["pingpong", "8", "500"], "L: ping-pong half round trip"),
    ("--g", "interval_us", ["stream", "8", "2000"], "g: stream interval"),
]


def knob_accuracy(value_us, rounds, provider):
    rows = []
    for flag, figure, args, label in KNOB_CHECKS:
        base, moved = [], []
        for _ in range(rounds):
            base.append(measure(args, provider=provider)[figure])
            moved.append(measure(args, knobs=(flag, f"{value_us}us"), provider=provider)[figure])
        increase = statistics.median(moved) - statistics.median(base)
        rows.append({"knob": flag[2:], "label": label, "set_us": value_us, "expected_increase_us": value_us,
                     "base_us": statistics.median(base), "measured_increase_us": increase})
    # G: a 64 KiB ping-pong half round trip rises by (k-1)G
    size = 65536
    g_per_byte_ns = value_us * 1000.0 / (size - 1)
    base, moved = [], []
    for _ in range(rounds):
        base.append(measure(["pingpong", str(size), "200"], provider=provider)["halfrtt_us"])
        moved.append(measure(["pingpong", str(size), "200"], knobs=("--G", f"{g_per_byte_ns:.6f}ns/B"),
                             provider=provider)["halfrtt_us"])
    rows.append({"knob": "G", "label": f"G={g_per_byte_ns:.4f}ns/B: 64 KiB half round trip", "set_us": value_us,
                 "expected_increase_us": value_us, "base_us": statistics.median(base),
                 "measured_increase_us": statistics.median(moved) - statistics.median(base)})
    return rows


def print_knobs(rows, provider):
    print(f"knob accuracy, np={NP}, libfabric provider {provider or 'shm'} (medians, increase over zero knobs)")
    print(f"  {'check':44s} {'base':>9s} {'expected':>9s} {'measured':>9s} {'error':>8s}")
    for r in rows:
        err = r["measured_increase_us"] - r["expected_increase_us"]
        print(f"  {r['label']:44s} {r['base_us']:9.3f} {r['expected_increase_us']:9.3f} "
              f"{r['measured_increase_us']:9.3f} {err:+8.3f}")
    print("  (us; g adds to the stream's own interval)")


class BenchCommand(Command):
    name = "bench"
    description = __doc__
    formatter_class = argparse.RawDescriptionHelpFormatter
    errors = ((runmod.RunError, 1), (MissingProgram, 1), (RuntimeError, 1), (subprocess.TimeoutExpired, 1))

    def configure(self, p):
        configure(p)

    def check(self, args):
        if args.what == "knobs" and not 0 < args.value_us <= 1e6:
            raise UsageError(f"--value-us {args.value_us}: expected a value in (0, 1e6]")

    def run(self, args):
        return execute(args)


def configure(p):
    sub = p.add_subparsers(dest="what", required=True)
    t = sub.add_parser("transparency", help="cost of libloggp.so at zero knobs and armed")
    t.add_argument("--rounds", type=runmod.positive_int, default=7)
    k = sub.add_parser("knobs", help="set each knob, read it back")
    k.add_argument("--value-us", type=float, default=10.0, help="value to set, in us (default 10)")
    k.add_argument("--rounds", type=runmod.positive_int, default=3)
    for s in (t, k):
        s.add_argument("--provider", choices=runmod.PROVIDERS)
        s.add_argument("--json", metavar="FILE", help="also write the figures as JSON")


def execute(args):
    if args.what == "transparency":
        result = transparency(args.rounds, args.provider)
        print_transparency(result, args.provider)
    else:
        result = knob_accuracy(args.value_us, args.rounds, args.provider)
        print_knobs(result, args.provider)
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.json)
    return 0
