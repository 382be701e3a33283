"""Does a program's own computation grow when its CPU spins around its calls, with the
apparatus or without it? One of our kernels, in interleaved rounds: zero knobs; o at a
setting (the apparatus spins o_s in each send and o_r at each receive); and zero knobs
with analysis/bench/spun_calls.so spinning the same time around each send and receive
(the library only traces). Every run is traced; its computation is the ranks' mean time
outside MPI calls (both kinds of spin fall inside the calls). The growth of each over zero
knobs is paired round by round, and so is their difference. Where the growth sits: each
computation interval (between two calls) is set beside the same interval at zero knobs,
and those that grew by more than half the spin are counted apart; the intervals ten spins
long and more show whether the computation itself ran slower (docs/prediction-against-emulation.md).

    python analysis/bench/computation_under_spins.py lu --o 100us --rounds 8
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.analysis import trace
from loggp.analysis.emulation_check import KERNELS, computation_s, traced_s
from loggp.experiments import precision
from loggp.harness.runner import loggp_command
from loggp.knobs import grammar
from loggp.knobs.files import write_text_atomic
from loggp.knobs.programs import MissingProgram, find_program

SOURCE = Path(__file__).resolve().parents[3] / "analysis" / "bench" / "spun_calls.c"
MODES = ("zero", "o", "spun")


class SpinCheckError(RuntimeError):
    pass


def build_library(folder):
    """spun_calls.so built with the MPI's own mpicc into folder."""
    library = Path(folder) / "spun_calls.so"
    proc = subprocess.run([find_program("mpicc"), "-O2", "-shared", "-fPIC", "-o", str(library), str(SOURCE), "-ldl"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SpinCheckError(f"mpicc could not build {SOURCE}: {proc.stderr.strip()}")
    return library


def run_command(mode, np_, argv, o_ns, folder, library):
    """(command, extra environment) of one traced run."""
    cmd = loggp_command() + ["run", "-n", str(np_), "--quiet", "--trace", str(Path(folder) / "trace")]
    env = {}
    if mode == "o":
        cmd += ["--o", f"{o_ns}ns"]
    elif mode == "spun":
        # after libloggp.so: its wrappers call PMPI_, which this library takes
        env = {"LD_PRELOAD": str(library), "SPUN_CALLS_NS": str(o_ns),
               "SPUN_CALLS_OUT": str(Path(folder) / "spun")}
    return cmd + ["--", *argv], env


def computation_intervals(traces):
    """Per rank (in rank order), each time between the end of a call and the start of the next, in ns."""
    out = []
    for t in sorted(traces, key=lambda t: t.rank):
        calls = t.calls()
        out.append(calls["start_ns"][1:].astype("f8") - calls["end_ns"][:-1].astype("f8"))
    return out


def same_calls(zero, other):
    """Whether two runs' intervals pair up: as many ranks, each with as many calls."""
    return len(zero) == len(other) and all(len(z) == len(o) for z, o in zip(zero, other))


def delayed_intervals(zero, other, threshold_ns):
    """Interval by interval against zero knobs (a deterministic program makes the same calls):
    {share: of the intervals that grew by more than threshold_ns, delayed_s: the growth those
    carry, rest_s: the others' growth (both a rank's mean, seconds)}; None when a rank's calls
    differ in number."""
    if not same_calls(zero, other):
        return None
    grew = [o - z for z, o in zip(zero, other)]
    over = [g > threshold_ns for g in grew]
    count = sum(len(g) for g in grew)
    if not count:
        return None
    return {"share": sum(int(m.sum()) for m in over) / count,
            "delayed_s": sum(float(g[m].sum()) for g, m in zip(grew, over)) / len(grew) * 1e-9,
            "rest_s": sum(float(g[~m].sum()) for g, m in zip(grew, over)) / len(grew) * 1e-9}


def long_interval_growth(zero, other, min_ns):
    """The growth of the intervals longer than min_ns at zero knobs, as a share of their
    length there: a delay of one spin each barely moves it, a slower computation does; None
    when a rank's calls differ in number or no interval is that long."""
    if not same_calls(zero, other):
        return None
    long_ = [z > min_ns for z in zero]
    length = sum(float(z[m].sum()) for z, m in zip(zero, long_))
    if not length:
        return None
    return sum(float((o - z)[m].sum()) for z, o, m in zip(zero, other, long_)) / length


def spun_totals(folder, np_):
    """[(spins, ns spun)] per rank, as spun_calls.so wrote them at MPI_Finalize."""
    totals = []
    for rank in range(np_):
        path = Path(folder) / f"spun.{rank}"
        try:
            spins, ns = (int(x) for x in path.read_text().split())
        except (OSError, ValueError):
            raise SpinCheckError(f"rank {rank} left no spin totals in {path}") from None
        totals.append((spins, ns))
    return totals


def one_run(mode, np_, argv, o_ns, scratch, label, library):
    """{computation_s, length_s, spun_s, spins} of one traced run (spins and spun_s: a rank's mean)."""
    folder = Path(scratch) / label
    folder.mkdir()
    cmd, extra = run_command(mode, np_, argv, o_ns, folder, library)
    env = dict(os.environ, **extra)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        raise SpinCheckError(f"{label}: {' '.join(cmd)} exited {proc.returncode}: {tail}")
    traces = trace.read_folder(folder / "trace")
    spun = spun_totals(folder, np_) if mode == "spun" else [(0, 0)]
    shutil.rmtree(folder, ignore_errors=True)
    return {"computation_s": computation_s(traces), "length_s": traced_s(traces),
            "intervals": computation_intervals(traces),
            "spun_s": sum(ns for _, ns in spun) / len(spun) * 1e-9, "spins": sum(n for n, _ in spun) / len(spun)}


def round_order(r):
    """The modes of round r, rotated so that none always runs first."""
    k = r % len(MODES)
    return MODES[k:] + MODES[:k]


def growth(rounds):
    """Paired medians and 95 % intervals over rounds [{mode: run figures}]: the computation's
    growth under o and under the program's own spins (each minus zero knobs of its round),
    their difference, and the run's added length under each."""
    def paired(f):
        return precision.median_interval([f(r) for r in rounds])
    return {
        "o": paired(lambda r: r["o"]["computation_s"] - r["zero"]["computation_s"]),
        "spun": paired(lambda r: r["spun"]["computation_s"] - r["zero"]["computation_s"]),
        "o_minus_spun": paired(lambda r: r["o"]["computation_s"] - r["spun"]["computation_s"]),
        "o_length": paired(lambda r: r["o"]["length_s"] - r["zero"]["length_s"]),
        "spun_length": paired(lambda r: r["spun"]["length_s"] - r["zero"]["length_s"]),
    }


LONG_INTERVAL_SPINS = 10   # an interval this many spins long grows under 10 % from one spin's delay


def where_growth_sits(rounds, spin_ns):
    """Per mode (o, spun): medians and intervals over rounds of delayed_intervals against the
    same round's zero knobs, at half the spin, and of long_interval_growth over intervals of
    LONG_INTERVAL_SPINS spins (None when some round has none); None for a mode when some
    round's calls differ."""
    out = {}
    for mode in ("o", "spun"):
        each = [delayed_intervals(r["zero"]["intervals"], r[mode]["intervals"], spin_ns / 2) for r in rounds]
        if any(e is None for e in each):
            out[mode] = None
            continue
        out[mode] = {k: precision.median_interval([e[k] for e in each]) for k in ("share", "delayed_s", "rest_s")}
        longs = [long_interval_growth(r["zero"]["intervals"], r[mode]["intervals"], LONG_INTERVAL_SPINS * spin_ns)
                 for r in rounds]
        out[mode]["long_share"] = None if any(x is None for x in longs) else precision.median_interval(longs)
    return out


def _ms(interval):
    return (f"{1000 * interval.estimate:+.0f} ms [{1000 * interval.low:+.0f}, {1000 * interval.high:+.0f}]"
            if interval.bounded else f"{1000 * interval.estimate:+.0f} ms (no interval below "
                                       f"{precision.MIN_SAMPLES} rounds)")


def _share(interval, signed=False):
    f = "+.1f" if signed else ".1f"
    return (f"{100 * interval.estimate:{f}} % [{100 * interval.low:{f}}, {100 * interval.high:{f}}]"
            if interval.bounded else f"{100 * interval.estimate:{f}} %")


def report(title, o_text, rounds, spins, spin_ns):
    """Markdown tables of growth() and where_growth_sits() over the rounds."""
    g = growth(rounds)
    sits = where_growth_sits(rounds, spin_ns)
    rows = []
    for mode, name in (("o", f"o = {o_text} (the apparatus)"), ("spun", f"{o_text} spun by the program")):
        w = sits[mode]
        long_text = _share(w["long_share"], signed=True) if w and w["long_share"] is not None else "none that long"
        rows.append(f"| {name} | " + (f"{_share(w['share'])} | {_ms(w['delayed_s'])} | {_ms(w['rest_s'])} | "
                                      f"{long_text} |" if w
                                      else "the calls differ in number from zero knobs' | | | |"))
    zero = precision.median_interval([r["zero"]["computation_s"] for r in rounds])
    return "\n".join([
        f"{title}: computation (the ranks' mean time outside MPI calls) {zero.estimate:.3f} s at zero knobs; "
        f"medians of {len(rounds)} paired rounds [95 %]",
        "",
        "| over zero knobs | computation | run |",
        "|---|---|---|",
        f"| o = {o_text} (the apparatus) | {_ms(g['o'])} | {_ms(g['o_length'])} |",
        f"| {o_text} spun by the program around its calls, zero knobs ({spins} spins a rank) | {_ms(g['spun'])} | "
        f"{_ms(g['spun_length'])} |",
        f"| the apparatus's less the program's own | {_ms(g['o_minus_spun'])} | |",
        "",
        f"Where the growth sits: each interval between two calls against the same interval at zero knobs "
        f"of its round; those that grew by more than half the spin apart, and how much the long ones grew "
        f"(one spin's delay would add under {100 // LONG_INTERVAL_SPINS} % to them)",
        "",
        "| over zero knobs | intervals grown by more than half the spin | their growth | the other intervals' growth "
        f"| intervals over {LONG_INTERVAL_SPINS} spins: growth as a share of their length |",
        "|---|---|---|---|---|",
        *rows,
    ]) + "\n"


def _parser():
    p = argparse.ArgumentParser(prog="computation_under_spins.py", description=__doc__.split("\n\n")[0])
    p.add_argument("program", nargs="?", default="lu", choices=KERNELS, help="one of our kernels (default lu)")
    p.add_argument("--class", dest="klass", default="A", choices=["S", "W", "A", "B"], help="its class (default A)")
    p.add_argument("--np", type=int, default=2, help="ranks (default 2)")
    p.add_argument("--o", default="100us", type=grammar.duration_ns(low=0.0, low_open=True),
                   help="the spin, as the o knob and in the program (default 100us)")
    p.add_argument("--rounds", type=int, default=8, help=f"interleaved rounds (default 8; intervals from "
                                                         f"{precision.MIN_SAMPLES})")
    p.add_argument("--out", help="write the report here too")
    return p


def main(argv=None, stream=sys.stdout):
    args = _parser().parse_args(argv)
    if args.np < 2:
        print(f"computation_under_spins.py: --np {args.np}: expected at least 2 ranks", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print(f"computation_under_spins.py: --rounds {args.rounds}: expected at least 1", file=sys.stderr)
        return 2
    o_text = grammar.format_duration(args.o * 1e-9)
    argv = [f"loggp-npb-{args.program}", args.klass]
    rounds, spins = [], 0
    try:
        with tempfile.TemporaryDirectory(prefix="loggp-spun-calls-") as scratch:
            library = build_library(scratch)
            for r in range(args.rounds):
                figures = {}
                for mode in round_order(r):
                    figures[mode] = one_run(mode, args.np, argv, args.o, scratch, f"r{r}-{mode}", library)
                rounds.append(figures)
                print(f"round {r + 1}: " + ", ".join(f"{m} {figures[m]['computation_s']:.3f} s" for m in MODES),
                      file=sys.stderr, flush=True)
            spins = round(figures["spun"]["spins"])
    except (SpinCheckError, MissingProgram, OSError) as err:
        print(f"computation_under_spins.py: {err}", file=sys.stderr)
        return 1
    text = report(f"{args.program} class {args.klass}, np = {args.np}", o_text, rounds, spins, args.o)
    stream.write(text)
    if args.out:
        write_text_atomic(args.out, text)
    return 0
