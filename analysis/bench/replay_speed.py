"""Replay speed and memory against ranks and trace length (docs/predict.md, "Speed
and memory"): for each size it writes a synthetic trace (loggp.analysis.synth),
then, in a fresh process per size, opens it and times REPEAT replays at the
default machine on one core: records per second (records of all ranks over the
median replay's wall time) with the spread of the replays (the median's 95 %
interval, or their range when they are too few for one), and the process's
peak RSS, beside its RSS before opening the trace. Run it alone on the
machine: other jobs make the times noise.

    python analysis/bench/replay_speed.py --pattern halo --ranks 64,512,4096 --phases 100
    python analysis/bench/replay_speed.py --pattern halo --ranks 64 --phases 100,1000,10000
    python analysis/bench/replay_speed.py --pattern halo --ranks 64 --phases 100 --reference   # the Python replay
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from loggp.experiments import precision


def row(pattern, ranks, per_rank, m):
    """One line of the table: seconds with their spread, and records per second at the
    median and at the spread's two ends."""
    kind, low, high = precision.spread(m["times"])
    rate = m["records"] / 1e6
    return (f"| {pattern} | {ranks} | {per_rank} | {m['records']} | {m['seconds']:.3g} "
            f"[{low:.3g}, {high:.3g}] {kind} of {len(m['times'])} | {rate / m['seconds']:.2f} "
            f"[{rate / high:.2f}, {rate / low:.2f}] | {m['rss_peak_kib'] / 1024:.0f} | "
            f"{m['rss_before_kib'] / 1024:.0f} |")


def measure(folder, repeat, reference=False):
    """In this process: {records, seconds (median), times (every replay's), records_per_s,
    rss_before_kib, rss_peak_kib};
    reference: the Python replay (loggops.simulate_reference on replay.build's programs, whose
    building is not timed), the C core's test oracle, for comparison."""
    from loggp.analysis import loggops, predict, replay, trace
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # the interpreter and its libraries
    if reference:
        programs = replay.build(trace.read_folder(folder))
        records = sum(f.count for f in trace.open_folder(folder))

        def once():
            loggops.simulate_reference(programs.programs, predict.DEFAULT_MACHINE)
    else:
        programs = predict.load(folder)
        records = sum(f.count for f in programs.files)

        def once():
            programs.simulate(predict.DEFAULT_MACHINE)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"records": records, "seconds": seconds, "times": times, "records_per_s": records / seconds,
            "rss_before_kib": before, "rss_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pattern", default="halo", choices=("halo", "ring", "alltoall"))
    ap.add_argument("--ranks", default="64", help="comma-separated rank counts")
    ap.add_argument("--phases", default="100", help="comma-separated phase counts (trace length)")
    ap.add_argument("--bytes", type=int, default=4096)
    ap.add_argument("--compute-ns", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=precision.MIN_SAMPLES,
                    help="replays per size; the median is reported with its 95 %% interval, or with the "
                         f"replays' range below the {precision.MIN_SAMPLES} an interval needs (default "
                         f"{precision.MIN_SAMPLES})")
    ap.add_argument("--scratch", default=None, help="where traces are written (default: a temporary folder)")
    ap.add_argument("--reference", action="store_true", help="time the Python replay instead (small traces)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # measure this folder in this process
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat {args.repeat}: expected 1 or more replays")
    if args.one:
        print(json.dumps(measure(args.one, args.repeat, args.reference)))
        return
    try:
        ranks = [int(x) for x in args.ranks.split(",")]
        phases = [int(x) for x in args.phases.split(",")]
    except ValueError:
        sys.exit(f"replay_speed.py: --ranks {args.ranks} / --phases {args.phases}: comma-separated whole numbers")
    from loggp.analysis import synth
    print("| pattern | ranks | records per rank | records | replay (s): median [spread] | "
          "M records/s: median [spread] | peak RSS (MiB) | RSS before opening (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in ranks:
        for p in phases:
            folder = tempfile.mkdtemp(prefix="replay-speed-", dir=args.scratch)
            try:
                per_rank = synth.Pattern(args.pattern, n, p, args.bytes, args.compute_ns).write(folder)
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", folder,
                                      "--repeat", str(args.repeat)] + ["--reference"] * args.reference,
                                     capture_output=True, text=True, check=True)
                m = json.loads(out.stdout)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            print(row(args.pattern + (" (Python)" if args.reference else ""), n, per_rank, m), flush=True)


if __name__ == "__main__":
    main()
