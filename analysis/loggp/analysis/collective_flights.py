"""Each collective's latencies on the apparatus against the replay's schedule for it
(docs/predict.md, "Collectives"): a loop of one collective under a long L and
near-zero o, g and G, run with `loggp run`, and the same loop replayed with
schedules.py at those parameters; both as L per call. A functional check of the
schedules' rounds at both sides of each switch, not a timing result: np 3 and 4
may share 2 cores (MPICH then yields while it waits, so the ranks take turns).

    python analysis/bench/collective_flights.py --out results/collective-flights.md
    python analysis/bench/collective_flights.py --np 2 --case Allreduce:16:d --case Allreduce:8:c
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.knobs import KnobError
from loggp.knobs.files import write_text_atomic
from loggp.knobs.params import LogGP
from loggp.knobs.programs import MissingProgram, find_program

from loggp.experiments import precision
from loggp.harness.runner import loggp_command

from . import loggops, schedules

LOOP_SOURCE = Path(__file__).resolve().parents[3] / "analysis" / "bench" / "collective_loop.c"
WIDTHS = {"d": 8, "i": 4, "c": 1}
# what the loop program runs (collective_loop.c)
LOOPED = ("Allreduce", "Reduce", "Scan", "Exscan", "Reduce_scatter", "Reduce_scatter_block", "Bcast", "Gather",
          "Scatter", "Allgather", "Alltoall", "Alltoallv", "Barrier")
# a barrier after each call, except where the collective itself makes every rank wait for every other
UNSYNCED = ("Allreduce", "Barrier")
# everything but L near zero (zero would leave the layer unarmed), S the shm provider's switch (docs/protocols.md)
QUIET_KNOBS = [("os", "1ns"), ("or", "1ns"), ("g", "1ns"), ("G", "0.001ns/B")]
QUIET = dict(o_s=1.0, o_r=1.0, g=1.0, G=0.001, S=4096)
# MPICH yields the CPU after this many idle polls, so oversubscribed ranks take turns
YIELDING = {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1", "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "16"}

# both sides of each switch the schedules take: NAME:BYTES:TYPE[:nobarrier] as --case reads them
DEFAULT_CASES = [
    ("Allreduce", 8, "c"), ("Allreduce", 9, "c"), ("Allreduce", 8, "d"), ("Allreduce", 16, "d"),
    ("Allreduce", 12, "i"), ("Allreduce", 16, "i"), ("Allreduce", 256, "c"), ("Allreduce", 257, "c"),
    ("Bcast", 8, "c"), ("Bcast", 12288, "c"), ("Bcast", 12289, "c"),
    ("Reduce", 2048, "c"), ("Reduce", 2049, "c"), ("Reduce", 2049, "c", "nobarrier"),
    ("Gather", 8, "c"), ("Scatter", "8np", "c"), ("Scan", 8, "c"), ("Exscan", 8, "c"),
    ("Allgather", 8, "c"), ("Allgather", 2048, "c"),
    ("Reduce_scatter_block", "8np", "c"), ("Reduce_scatter", "8np", "c"),
    ("Alltoall", "8np", "c"), ("Alltoall", "32768np", "c"), ("Alltoall", "32769np", "c"),
    ("Alltoallv", "8np", "c"), ("Alltoallv", "32769np", "c"), ("Barrier", 0, "c"),
]


class CaseError(ValueError):
    """A --case the loop cannot run; the message names it."""


def parse_case(text):
    """"NAME:BYTES[:TYPE[:nobarrier]]" -> (NAME, BYTES, TYPE, barrier after each call?);
    BYTES may end in "np" (that many per rank)."""
    parts = text.split(":")
    if not 2 <= len(parts) <= 4 or (len(parts) == 4 and parts[3] != "nobarrier"):
        raise CaseError(f"--case '{text}': expected NAME:BYTES[:d|i|c[:nobarrier]], e.g. Allreduce:16:d")
    name, size, kind = parts[0], parts[1], parts[2] if len(parts) > 2 else "c"
    if name not in LOOPED:
        raise CaseError(f"--case '{text}': '{name}' is not one of {', '.join(LOOPED)}")
    if kind not in WIDTHS:
        raise CaseError(f"--case '{text}': type '{kind}' is not d (double), i (int) or c (char)")
    per_rank = size.endswith("np")
    digits = size[:-2] if per_rank else size
    if not digits.isdigit():
        raise CaseError(f"--case '{text}': '{size}' is not a byte count (N, or Nnp for N per rank)")
    if int(digits) % WIDTHS[kind]:
        raise CaseError(f"--case '{text}': {digits} B is no whole number of '{kind}' elements")
    return name, size if per_rank else int(size), kind, name not in UNSYNCED and len(parts) < 4


def case_bytes(size, np_):
    return int(size[:-2]) * np_ if isinstance(size, str) else size


def loop_programs(name, size, nbytes, iters, sync):
    """Each rank's program: a barrier, then iters x (the collective, and a barrier if sync)."""
    calls = ["Barrier"] + ([name, "Barrier"] if sync else [name]) * iters
    programs = []
    for me in range(size):
        prog = []
        for seq, base in enumerate(calls):
            for r, rnd in enumerate(schedules.schedule(base, me, size, 0 if base == "Barrier" else nbytes, 0)):
                reqs = [(seq, r, k) for k in range(len(rnd))]
                prog += [("isend" if op == "send" else "irecv", peer, (0, seq), n, req)
                         for (op, peer, n), req in zip(rnd, reqs)]
                prog.append(("wait", tuple(reqs)))
        programs.append(prog)
    return programs


def replayed_per_call_ns(name, size, nbytes, iters, sync, params):
    """The replay's time per call of the loop, past the opening barrier."""
    whole = loggops.simulate(loop_programs(name, size, nbytes, iters, sync), params).runtime_ns
    start = loggops.simulate(loop_programs(name, size, nbytes, 0, sync), params).runtime_ns
    return (whole - start) / iters


def build_loop(folder):
    exe = Path(folder) / "collective_loop"
    proc = subprocess.run([find_program("mpicc"), "-O1", "-o", str(exe), str(LOOP_SOURCE)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"mpicc could not build {LOOP_SOURCE}: {proc.stderr.strip()}")
    return exe


def measured_per_call_ns(exe, name, np_, nbytes, kind, iters, sync, latency):
    cmd = loggp_command() + ["run", "-n", str(np_), "--quiet"]
    for flag, value in QUIET_KNOBS + [("L", latency)]:
        cmd += [f"--{flag}", value]
    cmd += ["--", str(exe), name, str(nbytes), str(iters), kind, "1" if sync else "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
                          env={**os.environ, **YIELDING})
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    calls = [float(v) for v in proc.stdout.split()]
    if len(calls) != iters:
        raise RuntimeError(f"{' '.join(cmd)} printed {len(calls)} call times, expected {iters}")
    return precision.median_interval(calls)


def _measured(value, latency):
    """The measured L a call: a median with its 95 % interval (precision.Interval), or a number."""
    if isinstance(value, precision.Interval):
        if not value.bounded:
            return f"{value.estimate / latency:.2f} (no interval)"
        return f"{value.estimate / latency:.2f} [{value.low / latency:.2f}, {value.high / latency:.2f}]"
    return f"{value / latency:.2f}"


def table(cases, sizes, results, latency):
    """One row a case, one column a rank count: measured [95 % interval] / replayed L a call.
    results: {(case index, np): (measured ns or Interval, replayed ns)}."""
    lines = ["| collective | bytes | type | barrier after each | " + " | ".join(f"np = {n}" for n in sizes) + " |",
             "|---|---|---|---|" + "---|" * len(sizes)]
    for k, (name, size, kind, sync) in enumerate(cases):
        label = f"{size[:-2]} a rank" if isinstance(size, str) else str(size)
        cells = [f"{_measured(results[(k, n)][0], latency)} / {results[(k, n)][1] / latency:.2f}" for n in sizes]
        lines.append(f"| {name} | {label} | {kind} | {'yes' if sync else 'no'} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _parser():
    ap = argparse.ArgumentParser(prog="collective_flights.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", default="2,3,4", help="rank counts, comma-separated (default 2,3,4)")
    ap.add_argument("--L", default="200us", help="the latency both sides use (default 200us)")
    ap.add_argument("--iters", type=int, default=40, help="calls per loop; their median and its 95 %% interval are taken (default 40)")
    ap.add_argument("--case", action="append", default=[], metavar="NAME:BYTES[:TYPE]",
                    help="a collective and size (repeatable; BYTES may be Nnp, N per rank); default: "
                         "both sides of every switch")
    ap.add_argument("--out", type=Path, help="also write the table here")
    return ap


def main(argv=None, stream=sys.stdout):
    args = _parser().parse_args(argv)
    try:
        cases = [parse_case(c) for c in args.case or [":".join(map(str, c)) for c in DEFAULT_CASES]]
        sizes = [int(n) for n in args.np.split(",")] if all(n.isdigit() for n in args.np.split(",")) else None
        if not sizes or min(sizes) < 1:
            raise CaseError(f"--np '{args.np}': expected rank counts, e.g. 2,3,4")
        if args.iters < 1:
            raise CaseError(f"--iters {args.iters}: expected at least 1")
        latency_ns = LogGP.parse({"L": args.L}).L
        if latency_ns <= 0:
            raise CaseError(f"--L {args.L}: expected a latency above 0")
    except (CaseError, KnobError) as err:
        print(f"collective_flights.py: {err}", file=sys.stderr)
        return 2
    params = loggops.Params(L=latency_ns, **QUIET)
    results = {}
    try:
        with tempfile.TemporaryDirectory(prefix="loggp-collective-flights-") as folder:
            exe = build_loop(folder)
            for n in sizes:
                for k, (name, size, kind, sync) in enumerate(cases):
                    nbytes = case_bytes(size, n)
                    measured = measured_per_call_ns(exe, name, n, nbytes, kind, args.iters, sync, args.L)
                    replayed = replayed_per_call_ns(name, n, nbytes, args.iters, sync, params)
                    results[(k, n)] = measured, replayed
                    print(f"{name} np={n} {nbytes} B: {_measured(measured, latency_ns)} L measured, "
                          f"{replayed / latency_ns:.2f} replayed", file=sys.stderr, flush=True)
    except (RuntimeError, MissingProgram, subprocess.TimeoutExpired) as err:
        print(f"collective_flights.py: {err}", file=sys.stderr)
        return 1
    text = table(cases, sizes, results, latency_ns)
    if args.out:
        write_text_atomic(args.out, text)
    off = statistics.median(abs(m.estimate - r) for m, r in results.values()) / latency_ns
    print(text + f"\nmedian |measured - replayed|: {off:.2f} L", file=stream)
    return 0
