"""Writes a synthetic trace (loggp.analysis.synth) into a folder, in loggp's trace
format, and prints its records and the replay length its pattern gives in closed
form at the default machine (docs/predict.md, "Speed and memory").

    python analysis/bench/gen_traces.py halo /tmp/halo-4096 --ranks 4096 --phases 100 --bytes 4096 --compute-ns 20000
"""
import argparse
import sys

from loggp.analysis import predict, synth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pattern", choices=("halo", "ring", "alltoall"))
    ap.add_argument("folder")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--phases", type=int, default=100)
    ap.add_argument("--bytes", type=int, default=4096, help="bytes per message (all-to-all: to each rank; "
                                                             "ring: the whole vector)")
    ap.add_argument("--compute-ns", type=int, default=20000, help="computation before each phase")
    args = ap.parse_args()
    for name in ("ranks", "phases"):
        if getattr(args, name) < 1:
            sys.exit(f"gen_traces.py: --{name} {getattr(args, name)}: must be at least 1")
    if args.ranks < 2 or args.ranks > 65536:
        sys.exit(f"gen_traces.py: --ranks {args.ranks}: must be in [2, 65536]")
    if args.bytes < 0 or args.compute_ns < 0:
        sys.exit("gen_traces.py: --bytes and --compute-ns must not be negative")
    pattern = synth.Pattern(args.pattern, args.ranks, args.phases, args.bytes, args.compute_ns)
    per_rank = pattern.write(args.folder)
    try:
        path = f"{pattern.critical_path_ns(predict.DEFAULT_MACHINE) * 1e-9:.6f} s"
    except ValueError as err:
        path = f"not in closed form ({err})"
    print(f"{args.folder}: {args.ranks} ranks x {per_rank} records = {args.ranks * per_rank} records; "
          f"replay length at the default machine {path}")


if __name__ == "__main__":
    main()
