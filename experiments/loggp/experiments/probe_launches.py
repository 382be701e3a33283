"""What the benches that repeat one probe launch share (analysis/bench/bulk_slope_by_side.py,
analysis/bench/hold_by_size.py): their --runs and --out options, and the loop that runs the
launches and prints and writes the table made of them."""
import sys

from loggp.experiments.probe import ProbeError
from loggp.knobs.files import write_text_atomic

MOST_RUNS = 1000


def add_options(parser, default_runs):
    parser.add_argument("--runs", default=str(default_runs), help=f"probe launches (default {default_runs})")
    parser.add_argument("--out", help="also write the table to this file (atomically)")


def launch_count(parser, text):
    """--runs as a number of launches, or a usage error naming the value."""
    if not text.isdigit() or not 1 <= int(text) <= MOST_RUNS:
        parser.error(f"--runs {text!r}: expected a whole number of launches from 1 to {MOST_RUNS}")
    return int(text)


def run_and_report(prog, runs, launch, render, out=None):
    """Calls launch() `runs` times, then prints render(the launches' results) and writes it to
    `out`; 1 with nothing written when a probe fails, else 0."""
    results = []
    try:
        for _ in range(runs):
            results.append(launch())
    except ProbeError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 1
    text = render(results)
    print(text, end="")
    if out:
        write_text_atomic(out, text)
    return 0
