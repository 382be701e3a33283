"""Helpers for loggp's tests: where the build and the installed tools are,
and a subprocess runner that never hangs a test run."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loggp.shim import shm_regions

ROOT = Path(__file__).resolve().parent.parent
RUN_START = time.time()


def build_dir():
    return Path(os.environ.get("LOGGP_BUILD_DIR", ROOT / "build"))


def installed(name):
    """Path of an installed loggp tool; the test fails (not skips) if it is missing."""
    # The venv's own first: Debian's mpich/openmpi put mpiexec and mpicc in /usr/bin too.
    path = shutil.which(name, path=os.path.join(sys.prefix, "bin")) or shutil.which(name)
    if not path:
        pytest.fail(f"'{name}' is not on PATH: run ./setup.sh (its bin/ must be on PATH)")
    return path


def built(relative):
    path = build_dir() / relative
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (./setup.sh), or set LOGGP_BUILD_DIR")
    return path


def run(cmd, timeout=120, env=None, check=False, **kw):
    """Runs a command, capturing text output."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    if Path(str(cmd[0])).name == "mpiexec":
        # a rank given the PID of one a test killed hangs or crashes in MPI_Init (loggp.shim.shm_regions)
        shm_regions.remove_stale(since=RUN_START)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=full_env, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} {failure(proc)}")
    return proc


def mapped_files(folder):
    """Names of the files in `folder` that some running process has mapped."""
    prefix, names = f"{Path(folder).resolve()}/", set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text()
        except OSError:
            continue
        names.update(line.split(prefix, 1)[1].removesuffix(" (deleted)") for line in text.splitlines()
                     if prefix in line)
    return names


def remove_leftover_mpich_segments(folder=shm_regions.FOLDER, since=RUN_START):
    """Removes MPICH's own shared-memory segments (mpich_shm_*) that a killed or aborted run
    of ours left: made since `since`, owned by us, mapped by no process. The names removed."""
    in_use = mapped_files(folder)
    leftovers = [n for n in shm_regions.names_in(folder) if n.startswith("mpich_shm_") and n not in in_use]
    return shm_regions.remove_own(folder, leftovers, since)


def killed_ranks(proc):
    """The lines in which `loggp run` names a rank a signal killed (shim/loggp/shim/exit_status.py)."""
    return [line for line in proc.stderr.splitlines() if line.startswith("loggp run: ") and " killed by signal " in line]


def failure(proc):
    """How a run failed, for an assertion: a rank a signal killed leads, so a crash is never read as a
    wrong figure (and never retried away)."""
    killed = killed_ranks(proc)
    head = f"CRASHED: {'; '.join(line.removeprefix('loggp run: ') for line in killed)} (exit {proc.returncode})" \
        if killed else f"exited {proc.returncode}"
    return f"{head}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def figures(proc):
    """The `name = value` lines a test program (loggp-timing) prints, after checking it succeeded."""
    assert proc.returncode == 0, failure(proc)
    out = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = float(value)
    return out


# ---- is this machine judgeable? ------------------------------------------------------
# Timing tests judge a knob against baselines measured in the same test, never against
# a fixed number of microseconds: the next machine may be twice as slow or twice as
# fast. What tells a loaded machine is the baselines' own spread and the CPU share a
# polling rank got. A loaded measurement is taken again (the tolerance is never
# widened); a machine that stays loaded skips the test, saying why.
LOAD_RATIO = 2.0       # a baseline more than twice the quickest one alike was slowed by another job
MIN_CPU_SHARE = 0.6    # a polling rank that got under 60 % of a core shared it
TOLERANCE_REL = 0.15   # a knob's effect within 15 % of what LogGP expects ...
NOISE_OF_BASELINE = 0.4  # ... or within 0.4 x the unperturbed figure, whichever is larger


def spread(samples):
    """How many times its quickest the slowest of figures measured alike is (1 = no spread)."""
    quickest = min(samples)
    return max(samples) / quickest if quickest > 0 else float("inf")


def stretch_share(expected, tol):
    """The least CPU share at which a figure of `expected`, made of waits spun on the CPU (which a
    rank with a share s of its core stretches by 1/s), stays within `tol` of it; 0 when nothing
    is expected."""
    return expected / (expected + tol) if expected > 0 else 0.0


def load_reason(baselines, cpu_shares=(), quickest=None, min_share=MIN_CPU_SHARE):
    """'' when figures measured alike (the baselines of one test) are steady enough to judge a
    knob against, else why not: one of them more than LOAD_RATIO x the quickest (of these, or
    `quickest` seen earlier in the test), or a rank that got under min_share of a core
    (MIN_CPU_SHARE, or more for a figure that a smaller share would stretch out of its
    tolerance: stretch_share)."""
    alike = [*baselines, *([] if quickest is None else [quickest])]
    if spread(alike) > LOAD_RATIO:
        listed = ", ".join(f"{b:.2f}" for b in baselines)
        return f"baselines {listed} reach more than {LOAD_RATIO:g}x the quickest, {min(alike):.2f}"
    share = min(cpu_shares, default=1.0)
    if share < min_share:
        return f"a rank got {share:.2f} of a core (< {min_share:.2f})"
    return ""


def tolerance(expected, baseline):
    """How far a measured effect may sit from LogGP's expectation: 15 % of it, or, for effects
    small against the machine's own figure, a share of that unperturbed figure (which scales
    with the machine's speed, as its noise does)."""
    return max(TOLERANCE_REL * abs(expected), NOISE_OF_BASELINE * abs(baseline))


def cpu_share(figures_of_a_run):
    """CPU time over wall time, from figures that print both (loggp-timing: rank 0's for a
    ping-pong, the less served rank's for a stream or a send), else 1."""
    wall = figures_of_a_run.get("wall_s")
    return figures_of_a_run["cpu_s"] / wall if wall else 1.0


BUSY_SHARE = 0.5   # others keeping more than half of the machine's cores busy load it


def _cpu_times():
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    return sum(fields[:8]), idle


def others_busy_share(seconds=1.0):
    """The share of the machine's CPU time others used over `seconds`, while this test sleeps."""
    import time
    total0, idle0 = _cpu_times()
    time.sleep(seconds)
    total1, idle1 = _cpu_times()
    spent = total1 - total0
    return 1.0 - (idle1 - idle0) / spent if spent > 0 else 0.0


def skip_if_busy(what, share=None):
    """After a timing test missed every attempt: skip, saying why, if other work keeps the cores
    busy now (CPU share, not a fixed time); return to let the test fail if not."""
    share = others_busy_share() if share is None else share
    if share > BUSY_SHARE:
        pytest.skip(f"{what}: not judged, other work kept {100 * share:.0f} % of the cores busy "
                    f"(> {100 * BUSY_SHARE:.0f} %); rerun when quieter")
