#!/bin/bash
# usage: ab.sh ROUNDS "PATTERNS" "KNOBS..." lib1 lib2 ...   (knob "zero" = none)
. "$(git rev-parse --show-toplevel)/.venv/bin/activate"
export MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=shm LOGGP_QUIET=1 LOGGP_KNOB_FILE=/nonexistent/knobs
R=$1; P=$2; K=$3; shift 3
for r in $(seq $R); do
  for lib in "$@"; do
    for k in $K; do
      [ $k = zero ] && kv="" || kv=$k
      echo "$r $(basename $lib) $k $(env LD_PRELOAD=$lib $kv mpiexec -n 2 loggp-patterns --reps 3 $P | python3 -c '
import sys,json,statistics as st
d={}
for l in sys.stdin:
    if l.startswith("{"): j=json.loads(l); d.setdefault(j["pattern"]+":"+str(j["bytes"]),[]).append(j["ns"])
print(" ".join(f"{k}={st.median(v):.0f}" for k,v in d.items()))')"
    done
  done
done
