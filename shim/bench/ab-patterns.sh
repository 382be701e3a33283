#!/bin/bash
# Two builds of libloggp.so against each other, interleaved in each round:
# plain MPICH, each library at zero knobs, each armed (L=1ns).
# usage: ab-patterns.sh ROUNDS OLD_LIB NEW_LIB   (from the repository, its venv built)
. "$(git rev-parse --show-toplevel)/.venv/bin/activate"
export MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=shm LOGGP_QUIET=1 LOGGP_KNOB_FILE=/nonexistent/knobs
R=$1; OLD=$2; NEW=$3
one() { "$@" mpiexec -n 2 loggp-patterns --reps 5 window:8:2000 pingpong:8:20000 | python3 -c '
import sys, json, statistics as st
d = {}
for l in sys.stdin:
    if l.startswith("{"):
        j = json.loads(l); d.setdefault(j["pattern"], []).append(j["ns"])
print(" ".join(f"{k} {st.median(v):.1f}" for k, v in d.items()))'; }
for r in $(seq "$R"); do
  echo "$r plain       $(one env X=1)"
  echo "$r zero old    $(one env LD_PRELOAD=$OLD)"
  echo "$r zero new    $(one env LD_PRELOAD=$NEW)"
  echo "$r armed old   $(one env LD_PRELOAD=$OLD LOGGP_LATENCY=1ns)"
  echo "$r armed new   $(one env LD_PRELOAD=$NEW LOGGP_LATENCY=1ns)"
done
