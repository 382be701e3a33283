#!/bin/bash
# Where the armed path's time goes, beyond the layer's bookkeeping (session 9).
# usage: run.sh LIB EXPERIMENT_LIB ROUNDS
#   LIB: libloggp.so as built from main; EXPERIMENT_LIB: the same tree with
#   experiment.patch applied (EXPERIMENT_FLOOR, _NO_STAMP, _EMPTY_CLOCK switch it).
# Modes run forward then backward in each round; each line is one run's medians
# of 3 repetitions (loggp-patterns, ns per half round trip / message / iteration).
set -euo pipefail
lib=$1 exp=$2 rounds=${3:-8}
export MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=shm LOGGP_QUIET=1
export LOGGP_KNOB_FILE=/nonexistent/knobs
patterns="pingpong:8:20000 window:8:400 exchange:8:20000"
modes=(plain zero armed-L floor-L floor-L-no-stamp floor-L-empty-clock)
run() {
  case $1 in
    plain) mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
    zero) LD_PRELOAD=$lib mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
    armed-L) LD_PRELOAD=$lib LOGGP_LATENCY=1ns mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
    floor-L) LD_PRELOAD=$exp LOGGP_LATENCY=1ns EXPERIMENT_FLOOR=1 mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
    floor-L-no-stamp) LD_PRELOAD=$exp LOGGP_LATENCY=1ns EXPERIMENT_FLOOR=1 EXPERIMENT_NO_STAMP=1 \
      mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
    floor-L-empty-clock) LD_PRELOAD=$exp LOGGP_LATENCY=1ns EXPERIMENT_FLOOR=1 EXPERIMENT_EMPTY_CLOCK=1 \
      mpiexec -n 2 loggp-patterns --reps 3 $patterns ;;
  esac
}
for r in $(seq "$rounds"); do
  order=("${modes[@]}")
  if (( r % 2 == 0 )); then order=(); for ((i=${#modes[@]}-1; i>=0; i--)); do order+=("${modes[i]}"); done; fi
  for m in "${order[@]}"; do
    run "$m" | python3 -c '
import json, statistics, sys
runs = {}
for line in sys.stdin:
    try:
        j = json.loads(line)
    except ValueError:
        continue
    runs.setdefault(j["pattern"] + ":" + str(j["bytes"]), []).append(j["ns"])
print(sys.argv[1], sys.argv[2], " ".join(f"{k}={statistics.median(v):.1f}" for k, v in runs.items()))' "$r" "$m"
  done
done
