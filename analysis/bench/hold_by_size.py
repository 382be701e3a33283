"""How a half round trip answers a hold: G's hold at each small size against an L hold of
the same length (docs/benchmarks.md, "Known defects"):

    python analysis/bench/hold_by_size.py --G 0.5ns/B --runs 12
"""
import sys

from loggp.experiments.hold_by_size import main

if __name__ == "__main__":
    sys.exit(main())
