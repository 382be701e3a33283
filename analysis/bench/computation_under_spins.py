"""Whether a program's own computation grows when its CPU spins around its calls, under
the o knobs and at zero knobs with the program spinning the same time itself
(docs/prediction-against-emulation.md):

    python analysis/bench/computation_under_spins.py lu --o 100us --rounds 8
"""
import sys

from loggp.analysis.spun_calls import main

if __name__ == "__main__":
    sys.exit(main())
