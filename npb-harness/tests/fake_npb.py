#!/usr/bin/env python3
"""A fake, MPI-free benchmark with known behaviour, for the study runner's tests.

Reads the knobs `loggp run` exports (LOGGP_OS, LOGGP_OR, LOGGP_GAP,
LOGGP_GAP_PER_BYTE, LOGGP_LATENCY) and prints an NPB-format report whose time
follows Martin's count x delta model exactly:
  T = BASE + M*(o_s + o_r) + BYTES*G + DEPS*L + GAPS*g
Like libloggp.so at MPI_Finalize, it writes profile.<rank>.json for two
ranks into $LOGGP_PROFILE (the folder `loggp run --profile` names).
Usage: fake_npb.py CLASS [--sleep S] [--fail-when-L-over NS] [--hang-when-g-over NS]
"""
import json
import os
import re
import sys
import time

BASE, M, BYTES, DEPS, GAPS = 0.2, 1000, 4_000_000, 200, 100
UNITS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def knob_ns(name):
    text = os.environ.get(name)
    if text is None:
        sys.exit(f"fake_npb: {name} not set")
    m = re.fullmatch(r"([0-9.]+)(ps|ns|us|ms|s)(?:/(B|KiB))?", text.strip())
    if not m:
        sys.exit(f"fake_npb: cannot parse {name}={text!r}")
    per = {"B": 1, "KiB": 1024, None: 1}[m.group(3)]
    return float(m.group(1)) * UNITS[m.group(2)] / per


def main(argv):
    if not argv or argv[0] not in ("S", "W", "A"):
        print("usage: fake_npb.py CLASS [options]", file=sys.stderr)
        return 2
    started = time.monotonic()
    opts = dict(zip(argv[1::2], argv[2::2]))
    o_s, o_r = knob_ns("LOGGP_OS"), knob_ns("LOGGP_OR")
    g, G, L = knob_ns("LOGGP_GAP"), knob_ns("LOGGP_GAP_PER_BYTE"), knob_ns("LOGGP_LATENCY")
    time.sleep(float(opts.get("--sleep", "0")))
    if "--hang-when-g-over" in opts and g > float(opts["--hang-when-g-over"]):
        time.sleep(3600)
    seconds = BASE + 1e-9 * (M * (o_s + o_r) + BYTES * G + DEPS * L + GAPS * g)
    # a real benchmark cannot report more time than it ran for (the runner checks)
    time.sleep(max(0.0, seconds - (time.monotonic() - started)))
    verified = not ("--fail-when-L-over" in opts and L > float(opts["--fail-when-L-over"]))
    profile_dir = os.environ.get("LOGGP_PROFILE")
    if profile_dir:
        for rank in (0, 1):
            busy = rank == 0
            profile = {
                "loggp_version": "0.1.0", "rank": rank, "size": 2, "host": "fakehost",
                "engine": "pmpi", "knobs_ns": {"o_s": o_s, "o_r": o_r, "g": g,
                                               "G_per_byte": G, "L": L},
                "wall_seconds": seconds,
                "sent": {"messages": M if busy else M // 2, "bytes": BYTES if busy else BYTES // 2,
                         "by_size": []},
                "received": {"messages": M if busy else M // 2, "bytes": BYTES, "by_size": []},
                "calls": {"MPI_Send": M, "MPI_Recv": DEPS},
                "collectives": {},
                "injected_ns": {"o_s": M * o_s, "o_r": M * o_r, "g": GAPS * g,
                                "G": BYTES * G, "L": DEPS * L},
            }
            with open(os.path.join(profile_dir, f"profile.{rank}.json"), "w") as f:
                json.dump(profile, f)
    print(f"\n\n FAKE Benchmark Completed.")
    print(f" Class           =                        {argv[0]}")
    print(f" Size            =                     1400")
    print(f" Iterations      =                       15")
    print(f" Time in seconds =                 {seconds:12.6f}")
    print(f" Total processes =                        1")
    print(f" Mop/s total     =                   123.45")
    print(f" Verification    =               {'SUCCESSFUL' if verified else 'UNSUCCESSFUL'}")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
