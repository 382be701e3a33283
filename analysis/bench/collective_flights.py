"""Each collective's latencies on the apparatus against the replay's schedule
(docs/predict.md, "Collectives"): loops of one collective at both sides of each
switch, run under a long L and replayed with the same schedule.

    python analysis/bench/collective_flights.py --out results/collective-flights.md
    python analysis/bench/collective_flights.py --np 2 --case Allreduce:16:d
"""
import sys

from loggp.analysis.collective_flights import main

if __name__ == "__main__":
    sys.exit(main())
