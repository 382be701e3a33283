#!/usr/bin/env bash
# docs/g-64k-copy: how long shm's 64 KiB copy takes when messages come 100 us
# apart (G) against back to back, and whether the sender's way of waiting
# matters. Usage: run.sh LIB ROUNDS, LIB a libloggp.so built with trace.patch.
set -eu
lib=$1 rounds=${2:-3}
export MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=shm LOGGP_QUIET=1
here=$(cd "$(dirname "$0")" && pwd)
per_msg() { python3 -c 'import json,sys,statistics as st; print("%.2f" % (st.median(json.loads(l)["ns"] for l in sys.stdin) / 1e3))'; }
one() { # label, then env assignments
    local label=$1; shift
    local dir; dir=$(mktemp -d)
    local us; us=$(env XT_DIR="$dir" "$@" mpiexec -n 2 loggp-patterns --reps 3 window:65536:3 | per_msg)
    echo "$label: $us us per message"
    for f in "$dir"/trace.*; do [ -f "$f" ] && python3 "$here/takes.py" "$f" | sed 's/^/    /'; done
    rm -rf "$dir"
}
for r in $(seq 1 "$rounds"); do
    echo "# round $r"
    one "plain" X=1
    one "G=0.153ns/B (A = 10 us), sender spins" LD_PRELOAD="$lib" LOGGP_GAP_PER_BYTE=0.153ns/B
    one "G=1.526ns/B (A = 100 us), sender spins" LD_PRELOAD="$lib" LOGGP_GAP_PER_BYTE=1.526ns/B
    one "G=1.526ns/B, sender pauses 64 times per clock read" LD_PRELOAD="$lib" LOGGP_GAP_PER_BYTE=1.526ns/B XT_PAUSES=64
    one "G=1.526ns/B, sender sleeps" LD_PRELOAD="$lib" LOGGP_GAP_PER_BYTE=1.526ns/B XT_SLEEP=1
    one "G=1.526ns/B, least copy per size (XT_MINTAKE)" LD_PRELOAD="$lib" LOGGP_GAP_PER_BYTE=1.526ns/B XT_MINTAKE=1
done
