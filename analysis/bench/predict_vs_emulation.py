"""Predicted against emulated slowdown per kernel and knob (docs/predict.md). Each round traces a baseline run and each knob's emulated
run; the emulated slowdown is the knob run's traced length over the same
round's baseline's; the prediction replays the baseline's trace
(loggp.analysis.predict). Medians over rounds; a Markdown table on stdout.

    python analysis/bench/predict_vs_emulation.py --np 2 --class A --rounds 3 cg mg ft is lu ep
"""
import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

from loggp.analysis import predict

SETTINGS = {"o": ("--o", "10us", 10_000.0), "L": ("--L", "50us", 50_000.0), "G": ("--G", "1ns/B", 1.0)}


def traced(folder, np_, kernel, klass, knob=()):
    subprocess.run(["loggp", "run", "-n", str(np_), "--quiet", *knob, "--trace", str(folder), "--",
                    f"loggp-npb-{kernel}", klass], check=True, stdout=subprocess.DEVNULL)
    return predict.load(folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--class", dest="klass", default="A")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"np={a.np}, class {a.klass}, {a.rounds} rounds; slowdowns in %")
    print("| kernel | knob | emulated | predicted | predicted - emulated |")
    print("|---|---|---|---|---|")
    errors = []
    for kernel in a.kernels:
        measured = {k: [] for k in SETTINGS}
        predicted = {k: [] for k in SETTINGS}
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(a.rounds):
                base = traced(Path(tmp) / f"b{r}", a.np, kernel, a.klass)
                for knob, (flag, text, delta) in SETTINGS.items():
                    predicted[knob].append(100 * predict.slowdowns(base, predict.DEFAULT_MACHINE, knob, [delta])[0][1])
                    run = traced(Path(tmp) / f"{knob}{r}", a.np, kernel, a.klass, (flag, text))
                    measured[knob].append(100 * (run.traced_ns / base.traced_ns - 1))
        for knob, (_, text, _) in SETTINGS.items():
            m, p = statistics.median(measured[knob]), statistics.median(predicted[knob])
            errors.append(abs(p - m))
            print(f"| {kernel} | {knob}={text} | {m:+.1f} | {p:+.1f} | {p - m:+.1f} |", flush=True)
    print(f"median absolute error {statistics.median(errors):.1f} points; "
          f"{sum(e <= 5 for e in errors)} of {len(errors)} within 5 points")


if __name__ == "__main__":
    main()
