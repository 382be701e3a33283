"""Predicted against emulated added time, per program and knob, to a stated precision
(docs/prediction-against-emulation.md): traces each program, predicts o, L and G with the replay `loggp
predict` runs (the median over the traced runs, each round's armed baseline included), emulates the same settings in paired, interleaved rounds against an armed
baseline until each interval settles or the budget is spent, and prints (and with --out
writes) the table with the median error over the resolved cases.

    python analysis/bench/predict_vs_emulation.py --out results/predict.md
    python analysis/bench/predict_vs_emulation.py cg --program "/opt/npb/bin/cg.A.x"
"""
import sys

from loggp.analysis.emulation_check import main

if __name__ == "__main__":
    sys.exit(main())
