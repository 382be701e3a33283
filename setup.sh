#!/usr/bin/env bash
# loggp set-up: Debian packages, the project's virtual environment (pinned mpich
# wheel and Python dependencies), the C build installed into that environment.
#   ./setup.sh          set up only
#   ./setup.sh main     set up, then run the main job
#   ./setup.sh test     set up, then run every test (what .ci/run calls)
# Idempotent and incremental: a second run redoes only what changed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${LOGGP_VENV:-$here/.venv}
build=${LOGGP_BUILD_DIR:-$here/build}
action=${1:-setup}
case "$action" in
  setup|main|test) ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown action '$action' (expected: setup, main or test)" >&2; exit 2 ;;
esac

say() { printf '[setup] %s\n' "$*"; }

# --- Debian packages --------------------------------------------------------
debian_packages=(cmake gcc make pkg-config libfabric-dev libcriterion-dev iproute2 mpich libmpich-dev openmpi-bin libopenmpi-dev)
missing=()
for pkg in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
python=${PYTHON:-python3}
if ! "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  missing+=(python3 python3-venv)
fi
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup.sh: missing Debian packages; install them first:" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# --- virtual environment ----------------------------------------------------
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
if [ ! -x "$venv/bin/python" ]; then
  say "creating virtual environment $venv"
  "$python" -m venv "$venv"
fi
lock_sum=$(sha256sum "$here/requirements.lock" | cut -d' ' -f1)
if ! stamp_ok "$venv/.loggp-requirements" "$lock_sum"; then
  say "installing pinned Python dependencies (mpich wheel included)"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.lock"
  echo "$lock_sum" >"$venv/.loggp-requirements"
fi
py_sum=$(sha256sum "$here/pyproject.toml" | cut -d' ' -f1)-$here
if ! stamp_ok "$venv/.loggp-package" "$py_sum"; then
  say "installing the loggp Python package (editable)"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$here"
  echo "$py_sum" >"$venv/.loggp-package"
fi

# --- C build, installed into the venv ---------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring the C build in $build"
  mkdir -p "$build"
  cmake -S "$here" -B "$build" -DCMAKE_INSTALL_PREFIX="$venv" \
    -DMPI_C_COMPILER="$venv/bin/mpicc" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; rm -f "$build/CMakeCache.txt"; exit 1; }
fi
say "building"
cmake --build "$build" --parallel "$(nproc)" -- --no-print-directory >"$build/build.log" 2>&1 ||
  { cat "$build/build.log" >&2; exit 1; }
cmake --install "$build" >/dev/null

say "done. Everything is in $venv:"
say "  commands:   $venv/bin/{loggp,loggp-knobs,mpiexec}"
say "  library:    $venv/lib/libloggp.so"
say "  activate:   . $venv/bin/activate"

export PATH="$venv/bin:$PATH"
case "$action" in
  main)
    exec "$venv/bin/loggp" main ;;
  test)
    say "running C tests (CTest)"
    ctest --test-dir "$build" --output-on-failure -j 2
    say "running Python tests (pytest)"
    export LOGGP_BUILD_DIR="$build"
    cd "$here"
    set +e
    "$venv/bin/python" -m pytest -q
    rc=$?
    set -e
    [ "$rc" = 5 ] && { echo "pytest collected no tests" >&2; exit 1; }
    exit "$rc" ;;
esac
