"""o on the 8 B window, each repetition beside one without it in the same run
(patterns_run.measure_paired): the increase per message against LogGP's
(W+3)/W o, for o from 1 to 40 us. Run from the venv: python o-window-scaling.py ROUNDS"""
import statistics
import sys

from loggp.shim import patterns_run

W = 64
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
    for o_us in (1, 5, 10, 20, 40):
        count = max(2, int(25e6 / (W * o_us * 1000 * 1.05)))  # a repetition of about 25 ms
        (base, diffs), = patterns_run.measure_paired([("window", 8, count)], ["--o", f"{o_us}us"], reps=5).values()
        increase, predicted = statistics.median(diffs), o_us * 1000 * (W + 3) / W
        print(f"round {r + 1} o={o_us}us: base {base:.0f} ns/msg, +{increase:.0f} against +{predicted:.0f}: "
              f"{increase - predicted:+.0f} ns per message, {W * (increase - predicted) / 1000:.1f} us per window")
