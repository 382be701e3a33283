"""The replay's added time with the calls' own time it leaves out (a large message's shm copy, a
copy to oneself) put back as CPU work, in series with the flights or overlapping them
(docs/prediction-against-emulation.md, "IS at L = 1 ms: the copies the replay leaves out").

    python analysis/bench/in_call_work.py is-base-1 is-base-2 --calls MPI_Alltoallv --L 1ms
"""
import sys

from loggp.analysis.in_call_work import main

if __name__ == "__main__":
    sys.exit(main())
