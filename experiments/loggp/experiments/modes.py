"""`loggp probe --modes`: the table of blocking and non-blocking point-to-point
times per size (Broxton; Kielmann's LogP measurements), one way and round
trip, measured by loggp-modes side by side in one run, under knobs like every
probe run. Written as a table, and on request as JSON, CSV and a plot."""
import csv
import io
import json
import os
import statistics
import subprocess
import tempfile

from loggp.knobs.command import UsageError
from loggp.knobs.files import atomic_write, write_text_atomic
from loggp.knobs.programs import find_program

from . import precision

MODES = ("send", "ssend", "isend")
TITLES = {"send": "Send/Recv", "ssend": "Ssend/Recv", "isend": "Isend/Irecv+Wait"}
OWN = ("--modes", "--sizes", "--reps", "--rounds", "--json", "--csv", "--plot")


def split_options(rest):
    """{option: value} of loggp-modes' and the table's own options; a usage error for anything else."""
    opts = {}
    i = 0
    while i < len(rest):
        if rest[i] not in OWN or i + 1 >= len(rest):
            raise UsageError(f"with --modes, expected {', '.join(OWN)} and knob options, got '{rest[i]}'"
                             + ("" if rest[i] not in OWN else " without a value"))
        opts[rest[i]] = rest[i + 1]
        i += 2
    modes = opts.get("--modes", "all")
    names = MODES if modes == "all" else modes.split(",")
    bad = [m for m in names if m not in MODES]
    if bad or not names:
        raise UsageError(f"--modes {modes}: unknown mode '{bad[0] if bad else ''}' (expected all or a list of "
                         f"{', '.join(MODES)})")
    for flag in ("--json", "--csv", "--plot"):
        if flag in opts and not os.path.isdir(os.path.dirname(os.path.abspath(opts[flag]))):
            raise UsageError(f"{flag} {opts[flag]}: its folder does not exist")
    return opts, list(names)


def parse(text):
    """loggp-modes' JSON lines -> {(mode, bytes): {"oneway_ns": [...], "roundtrip_ns": [...]}}, clock offset."""
    out, offset = {}, None
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if "clock_offset_ns" in rec:
            offset = rec["clock_offset_ns"]
            continue
        cell = out.setdefault((rec["mode"], int(rec["bytes"])), {"oneway_ns": [], "roundtrip_ns": []})
        cell["oneway_ns"].append(rec["oneway_ns"])
        cell["roundtrip_ns"].append(rec["roundtrip_ns"])
    return out, offset


def table(cells, modes):
    """Rows (bytes, {mode: (one way us, round trip us, one way's spread, round trip's)}):
    medians over rounds, each with precision.spread's (kind, low us, high us)."""
    sizes = sorted({b for _, b in cells})

    def figures(ns):
        us = [v / 1e3 for v in ns]
        return statistics.median(us), precision.spread(us)
    rows = []
    for b in sizes:
        row = {}
        for m in modes:
            if (m, b) in cells:
                (oneway, oneway_spread), (roundtrip, roundtrip_spread) = (
                    figures(cells[(m, b)]["oneway_ns"]), figures(cells[(m, b)]["roundtrip_ns"]))
                row[m] = (oneway, roundtrip, oneway_spread, roundtrip_spread)
        rows.append((b, row))
    return rows


def _with_spread(median, spread):
    return f"{median:.2f} [{spread[1]:.2f}, {spread[2]:.2f}]"


def render(rows, modes):
    head = f"{'bytes':>9}" + "".join(f"  {TITLES[m] + ' one-way (us)':>30} {'round trip (us)':>24}" for m in modes)
    lines = [head]
    for b, cells in rows:
        lines.append(f"{b:>9}" + "".join(f"  {_with_spread(c[0], c[2]):>30} {_with_spread(c[1], c[3]):>24}"
                                          for c in (cells[m] for m in modes)))
    kinds = sorted({s[0] for _, cells in rows for c in cells.values() for s in c[2:]})
    lines.append("[spread]: " + " or ".join(
        {"95 %": "the median's 95 % interval (order statistics)",
         "min-max": f"the rounds' range (fewer than {precision.MIN_SAMPLES} rounds: too few for an interval)"}[k]
        for k in kinds))
    return "\n".join(lines)


def _spread_dict(spread):
    return {"kind": spread[0], "low": spread[1], "high": spread[2]}


def write_outputs(opts, rows, modes, knob_args, offset):
    if "--json" in opts:
        write_text_atomic(opts["--json"], json.dumps({"knobs": knob_args, "clock_offset_ns": offset, "modes": modes,
                                            "rows": [{"bytes": b, **{m: {"oneway_us": c[m][0], "roundtrip_us": c[m][1],
                                                                         "oneway_spread_us": _spread_dict(c[m][2]),
                                                                         "roundtrip_spread_us": _spread_dict(c[m][3])}
                                                                     for m in modes}} for b, c in rows]}, indent=1))
    if "--csv" in opts:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["bytes", "mode", "oneway_us", "roundtrip_us", "oneway_low_us", "oneway_high_us",
                    "roundtrip_low_us", "roundtrip_high_us", "spread"])
        for b, c in rows:
            for m in modes:
                w.writerow([b, m, f"{c[m][0]:.4f}", f"{c[m][1]:.4f}", f"{c[m][2][1]:.4f}", f"{c[m][2][2]:.4f}",
                            f"{c[m][3][1]:.4f}", f"{c[m][3][2]:.4f}", c[m][2][0]])
        write_text_atomic(opts["--csv"], buf.getvalue())
    if "--plot" in opts:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.5))
        sizes = [b for b, _ in rows]
        for m in modes:
            ax.plot(sizes, [c[m][0] for _, c in rows], marker="o", label=f"{TITLES[m]}, one way")
            ax.plot(sizes, [c[m][1] for _, c in rows], marker="s", ls="--", label=f"{TITLES[m]}, round trip")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("time (us)")
        ax.set_title("Blocking and non-blocking point-to-point" + (f" ({' '.join(knob_args)})" if knob_args else ""))
        ax.legend(fontsize=7)
        atomic_write(opts["--plot"], lambda tmp: fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight"))
        plt.close(fig)


def execute(np_ranks, knob_args, rest, run_command):
    """Runs loggp-modes (under `loggp run` with knob_args, through run_command) and prints the table."""
    if np_ranks != 2:
        raise UsageError(f"--modes measures between two ranks; got --np {np_ranks}")
    opts, modes = split_options(rest)
    args = ["--modes", ",".join(modes)]
    for flag in ("--sizes", "--reps", "--rounds"):
        if flag in opts:
            args += [flag, opts[flag]]
    program = find_program("loggp-modes")
    if knob_args:
        cmd = run_command(2, [], knob_args, [])[:-1] + [program, *args]
    else:
        cmd = [find_program("mpiexec"), "-n", "2", program, *args]
    with tempfile.TemporaryDirectory(prefix="loggp-modes-") as tmp:
        env = dict(os.environ, LOGGP_KNOB_FILE=os.path.join(tmp, "knobs")) if knob_args else None
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise UsageError(proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else
                         f"loggp-modes failed (exit {proc.returncode})")
    cells, offset = parse(proc.stdout)
    rows = table(cells, modes)
    print(f"loggp probe --modes: np=2, {' '.join(knob_args) or 'no knobs (libloggp.so not loaded)'}; medians over "
          f"rounds of each mode's median; one way on rank 0's clock (rank 1's offset {offset} ns)")
    print(render(rows, modes))
    write_outputs(opts, rows, modes, knob_args, offset)
    return 0
