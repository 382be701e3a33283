"""How G's bulk slope moves when o is spun on the send side, the receive side or both, and
under g and L beside them (docs/benchmarks.md, "Known defects"):

    python analysis/bench/bulk_slope_by_side.py --o 1us --runs 60
"""
import sys

from loggp.experiments.slope_by_side import main

if __name__ == "__main__":
    sys.exit(main())
