#!/usr/bin/env bash
# loggp set-up: Debian packages, the project's virtual environment (pinned mpich
# wheel and Python dependencies), the C build installed into that environment.
#   ./setup.sh          set up only
#   ./setup.sh main     set up, then run the main job
#   ./setup.sh test     set up, then run every test (what .ci/run calls)
#   ./setup.sh peer-suite  set up, then fetch MPICH's test sources for the peer suite
# Idempotent and incremental: a second run redoes only what changed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${LOGGP_VENV:-$here/.venv}
build=${LOGGP_BUILD_DIR:-$here/build}
action=${1:-setup}
case "$action" in
  setup|main|test|peer-suite) ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "setup.sh: unknown action '$action' (expected: setup, main, test or peer-suite)" >&2; exit 2 ;;
esac

say() { printf '[setup] %s\n' "$*"; }

# --- Debian packages --------------------------------------------------------
debian_packages=(cmake gcc make pkg-config libfabric-dev libcriterion-dev iproute2 mpich libmpich-dev openmpi-bin libopenmpi-dev slurm-wlm munge otf2-tools chromium)
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

# The `loggp` namespace package lives in the root and in each part (pyproject.toml).
parts_pth=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/loggp-parts.pth
printf '%s\n' "$here" "$here/loggp-knobs" "$here/shim" "$here/experiments" "$here/npb-harness" "$here/analysis" \
  >"$parts_pth"

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

# --- peer suite: MPICH's own test sources (test/mpi), fetched once ----------
# Into a folder of the project with a private apt configuration: nothing under
# /etc changes and the system's package lists are not touched. The tests never
# fetch; without these sources the peer suite skips and says to run this step.
peer_dir=${LOGGP_MPICH_CACHE:-$here/.peer-suite}
peer_suite_setup() {
  if compgen -G "$peer_dir/mpich-*/test/mpi/pt2pt/testlist.in" >/dev/null; then
    say "peer suite: MPICH test sources present in $peer_dir"
    return 0
  fi
  local peer_packages=(apt dpkg-dev xz-utils) lacking=() pkg
  for pkg in "${peer_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || lacking+=("$pkg")
  done
  if ((${#lacking[@]})); then
    if [ "$(id -u)" != 0 ]; then
      echo "setup.sh: the peer suite needs: sudo apt-get install ${lacking[*]}" >&2
      return 1
    fi
    say "installing Debian packages for the peer suite: ${lacking[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${lacking[@]}" >/dev/null
  fi
  local codename apt_dir
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || { echo "setup.sh: no VERSION_CODENAME in /etc/os-release" >&2; return 1; }
  apt_dir=$peer_dir/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$peer_dir/unpack"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $codename main" \
    >"$apt_dir/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=$(id -un)")
  say "peer suite: fetching the mpich source package ($codename) into $peer_dir"
  apt-get -qq "${apt_opts[@]}" update >"$peer_dir/fetch.log" 2>&1 &&
    (cd "$peer_dir/unpack" && apt-get "${apt_opts[@]}" source mpich) >>"$peer_dir/fetch.log" 2>&1 ||
    { tail -20 "$peer_dir/fetch.log" >&2; echo "setup.sh: could not fetch the mpich source (log: $peer_dir/fetch.log)" >&2; return 1; }
  local unpacked
  unpacked=$(compgen -G "$peer_dir/unpack/mpich-*/test/mpi" | head -1) ||
    { echo "setup.sh: apt-get source mpich left no mpich-*/test/mpi in $peer_dir/unpack" >&2; return 1; }
  mv "$(dirname "$(dirname "$unpacked")")" "$peer_dir/"
  rm -rf "$peer_dir/unpack" "$apt_dir"
  say "peer suite: MPICH test sources in $peer_dir"
}

export PATH="$venv/bin:$PATH"
case "$action" in
  main)
    # loggp main exits 3 when it ran to the end but a calibration reading missed its goal: its 95 %
    # interval lies wholly outside it, measured against the armed baseline (so not the layer's own
    # cost). That is a repeatable error of the knobs on this machine, or other work sharing the cores
    # (the report says so first), not a broken installation: exit 0, naming where the reasons are.
    # Readings the noise left unresolved do not count as missed.
    rc=0
    "$venv/bin/loggp" main || rc=$?
    if [ "$rc" -eq 3 ]; then
      say "main: done; a calibration reading missed its goal on this machine (reasons: results/main/calibration/verdicts.txt)"
      rc=0
    fi
    exit "$rc" ;;
  peer-suite)
    peer_suite_setup ;;
  test)
    peer_suite_setup || say "peer suite: no MPICH test sources; its tests will skip"
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
