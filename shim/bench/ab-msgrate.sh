#!/bin/bash
# The before-stop yardstick (windowed 8 B Isend/Irecv, msgrate.c) for two libraries, interleaved in
# each round: plain MPICH, OLD and NEW at zero knobs, OLD and NEW armed (L=1ns); ns per message.
# usage: ab-msgrate.sh ROUNDS MSGRATE_BINARY OLD_LIB NEW_LIB   (from the repository, its venv built)
top=$(git rev-parse --show-toplevel)
export MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=shm LOGGP_QUIET=1 LOGGP_KNOB_FILE=/nonexistent/knobs
R=$1; BIN=$2; OLD=$3; NEW=$4
one() { timeout 20 env "$@" "$top/.venv/bin/mpiexec" -n 2 "$BIN" 8 1000 2>/dev/null | tail -1 |
        python3 -c 'import json, sys; print(round(json.loads(sys.stdin.read())["us_per_msg"] * 1e3, 1))'; }
for r in $(seq "$R"); do
  echo "$r plain $(one X=1) zero-old $(one LD_PRELOAD=$OLD) zero-new $(one LD_PRELOAD=$NEW)" \
       "armed-old $(one LD_PRELOAD=$OLD LOGGP_LATENCY=1ns) armed-new $(one LD_PRELOAD=$NEW LOGGP_LATENCY=1ns)"
done
