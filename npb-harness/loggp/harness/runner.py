"""Executes a study's plan through `loggp run`, one run at a time, and records
each run in the store. Safe to kill at any moment: a run becomes visible only
when its output folder has been renamed into place and its row committed, so a
rerun redoes exactly the runs that have no row."""
import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

from loggp.experiments import probe
from loggp.knobs.programs import which
from loggp.knobs.progress import LiveLine, duration, eta_text

from . import jitter_sweep, npb_output, store, target_sweep, topology_sweep, units

RUNS_DIR = "runs"
TRACE_DIR = "trace"  # a baseline run's trace (study files with trace = true), in runs/<id>/


def loggp_command():
    """How to call `loggp`: $LOGGP_COMMAND if set (a shell-quoted command),
    else this Python's own `loggp` package, so a venv uses its own copy."""
    override = os.environ.get("LOGGP_COMMAND")
    if override:
        return shlex.split(override)
    return [sys.executable, "-m", "loggp.cli"]


def build_command(study, bench, plan_row, profile_dir, host_signature=None):
    knobs = json.loads(plan_row["knobs"])
    cmd = loggp_command() + ["run", "-n", str(plan_row["np"])]
    targeted = target_sweep.run_flags(knobs, study.path, host_signature)
    for knob in units.KNOBS if not targeted else ():
        # All five, so the user's knob file cannot leak into a study (--target sets all five itself).
        cmd += [units.FLAGS[knob], knobs[knob]]
    cmd += targeted
    cmd += jitter_sweep.run_flags(knobs)
    cmd += topology_sweep.run_flags(knobs)
    # always, so the knob file's own scope cannot leak into a study either; the same for
    # what a kernel scope leaves outside the region (LOGGP_OUTSIDE)
    cmd += ["--scope", study.scope]
    cmd += ["--outside", study.outside] if study.scope == "kernel" else []
    cmd += ["--profile", profile_dir, "--launcher", study.launcher]
    if study.trace and plan_row["sweep"] == "baseline":
        # beside the profile, so it moves into runs/<id>/ with the run's other files
        cmd += ["--trace", os.path.join(os.path.dirname(profile_dir), TRACE_DIR)]
    if study.hostfile:
        cmd += ["--hostfile", study.hostfile]
    return cmd + ["--"] + bench.argv(plan_row["class"])


def measure_host():
    """This host's own signature for a study's targets: `loggp probe` with every knob at 0."""
    return probe.run_probe([], knobs={k: 0.0 for k in units.KNOBS})


def libmpi_of(profile_dir):
    """Which libmpi the ranks used, as `loggp run` wrote it beside the profiles."""
    try:
        with open(os.path.join(profile_dir, "libmpi.json")) as f:
            return json.load(f).get("libmpi")
    except (OSError, ValueError, AttributeError):
        return None


def mpi_init_of(profile_dir):
    """Whether the program called MPI_Init, as `loggp run` wrote it beside the profiles
    (outcome.json), or None where it could not tell (ranks on other hosts)."""
    try:
        with open(os.path.join(profile_dir, "outcome.json")) as f:
            said = json.load(f).get("mpi_init")
    except (OSError, ValueError, AttributeError):
        return None
    return said if isinstance(said, bool) else None


def merge_profiles(profile_dir):
    """Per-rank profile.<rank>.json files -> one JSON object (None if none)."""
    ranks = []
    for path in glob.glob(os.path.join(profile_dir, "profile.*.json")):
        try:
            with open(path) as f:
                ranks.append(json.load(f))
        except (OSError, ValueError):
            continue  # a rank that died mid-write; counted as missing below
    if not ranks:
        return None
    ranks.sort(key=lambda r: r.get("rank", 0))
    size = ranks[0].get("size", len(ranks))
    return {"loggp_version": ranks[0].get("loggp_version"), "engine": ranks[0].get("engine"),
            "size": size, "missing_ranks": max(0, size - len(ranks)),
            "hosts": sorted({r.get("host") for r in ranks if r.get("host")}),
            "ranks": ranks}


# the file a run's runtime and verification are read from, in its run folder
OUTPUT = "stdout.txt"


def classify(exit_status, timed_out, report, bench, wall_seconds=None, mpi_init=None):
    """-> (status, error message or None). wall_seconds: how long the run took as a
    whole, which its measured runtime cannot exceed; mpi_init False: `loggp run` saw
    the program never call MPI_Init, so no knob applied."""
    status, error = _classify(exit_status, timed_out, report, bench, wall_seconds)
    if mpi_init is False and status != "timeout":
        said = "the program never called MPI_Init, so no knob applied (is it an MPI program?)"
        return "failed", said if status == "ok" else f"{said}; {error}"
    return status, error


def runtime_source(bench):
    return f"runtime_regex {bench.runtime_regex!r}" if bench.kind == "command" else "NPB's 'Time in seconds' line"


def _classify(exit_status, timed_out, report, bench, wall_seconds):
    if timed_out:
        return "timeout", f"killed after the {bench.timeout_s:g} s timeout"
    if exit_status != 0:
        if exit_status == 1 and report.verified is False:
            return "unverified", "verification failed (exit 1)"
        if exit_status < 0:
            return "failed", f"killed by signal {-exit_status}"
        return "failed", f"exit status {exit_status}"
    if report.time_seconds is None:
        return "failed", f"exit 0 but {runtime_source(bench)} matched nothing in {OUTPUT}"
    if wall_seconds is not None and report.time_seconds > wall_seconds:
        return "failed", (f"{runtime_source(bench)} read {report.time_seconds:g} s from {report.matched!r} in "
                          f"{OUTPUT}, longer than the run's whole wall time ({wall_seconds:.3g} s): impossible "
                          "(does it read another unit, e.g. microseconds, as seconds?)")
    if report.verified is False:
        return "unverified", "verification failed"
    if report.verified is None and bench.kind != "command":
        return "failed", "exit 0 but no verification line in the output"
    return "ok", None


def _pdeathsig():
    # If the runner is killed with -9, take the direct child with it.
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def execute(study, bench, plan_row, results_dir, facts):
    """Runs one plan entry; returns the row to record (not yet recorded)."""
    runs_dir = os.path.join(results_dir, RUNS_DIR)
    final = os.path.join(runs_dir, str(plan_row["id"]))
    tmp = os.path.join(runs_dir, f".tmp-{plan_row['id']}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    profile_dir = os.path.join(tmp, "profile")
    os.makedirs(profile_dir)
    host = None
    if target_sweep.KEY in json.loads(plan_row["knobs"]):
        host = target_sweep.host_signature(results_dir, measure_host)
    cmd = build_command(study, bench, plan_row, os.path.abspath(profile_dir), host)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    timed_out = False
    with open(os.path.join(tmp, OUTPUT), "wb") as out, \
            open(os.path.join(tmp, "stderr.txt"), "wb") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=_pdeathsig,
                                    env=topology_sweep.study_environment(jitter_sweep.study_environment(os.environ)))
        except OSError as e:
            err.write(f"loggp study: cannot start {cmd[0]}: {e}\n".encode())
            proc = None
        if proc is not None:
            try:
                exit_status = _wait(proc, bench.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                exit_status = _kill_group(proc)
            except BaseException:
                _kill_group(proc)
                raise
        else:
            exit_status = 127
        for f in (out, err):
            f.flush()
            os.fsync(f.fileno())
    wall = time.monotonic() - t0
    finished = datetime.datetime.now(datetime.timezone.utc)
    with open(os.path.join(tmp, OUTPUT), errors="replace") as f:
        text = f.read()
    if bench.kind == "command":
        report = npb_output.parse_custom(text, bench.runtime_regex, bench.success_regex)
    else:
        report = npb_output.parse_npb(text)
    status, error = classify(exit_status, timed_out, report, bench, wall, mpi_init_of(profile_dir))
    profile = merge_profiles(profile_dir)
    knobs = json.loads(plan_row["knobs"])
    row = {
        "plan_id": plan_row["id"], "round": plan_row["round"], "benchmark": bench.name,
        "kind": bench.kind, "class": plan_row["class"], "np": plan_row["np"],
        "sweep": plan_row["sweep"], "knobs": plan_row["knobs"],
        **{store.KNOB_COLUMNS[k]: units.parse(k, knobs[k]) for k in units.KNOBS},
        **{store.KNOB_COLUMNS[k]: v for k, v in (target_sweep.applied_knobs(knobs, study.path, host) or {}).items()},
        # As it would read after the rename, so it can be rerun by hand.
        "command": shlex.join(cmd).replace(os.path.abspath(tmp), os.path.abspath(final)),
        "started_at": started.isoformat(timespec="milliseconds"),
        "finished_at": finished.isoformat(timespec="milliseconds"), "wall_seconds": wall,
        "runtime_seconds": report.time_seconds,
        "verified": None if report.verified is None else int(report.verified),
        "exit_status": None if timed_out else exit_status, "status": status,
        "host": ",".join(profile["hosts"]) if profile and profile["hosts"] else socket.gethostname(),
        "mpi_version": facts.get("mpi_version"),
        "libmpi": libmpi_of(profile_dir),
        "loggp_version": (profile or {}).get("loggp_version") or facts.get("loggp_version"),
        "profile": json.dumps(profile) if profile else None,
        "stdout_path": os.path.join(RUNS_DIR, str(plan_row["id"]), OUTPUT),
        "stderr_path": os.path.join(RUNS_DIR, str(plan_row["id"]), "stderr.txt"),
        "error": error,
    }
    # A human-readable copy next to the outputs; the store stays the reference.
    with open(os.path.join(tmp, "run.json"), "w") as f:
        # Rounds are stored from 0; every file and message a user reads counts from 1.
        json.dump({k: (v + 1 if k == "round" else v) for k, v in row.items() if k != "profile"}, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    if os.path.exists(final):
        shutil.rmtree(final)  # left by a run killed between rename and commit
    os.rename(tmp, final)
    _fsync_dir(runs_dir)   # the rename itself survives a power cut before the row commits
    return row


def _fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _wait(proc, timeout):
    return proc.wait(timeout=timeout)


def _kill_group(proc):
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def in_progress(results_dir):
    """[(plan id, started as a POSIX time)] of runs a live runner is making now: their
    temporary folders, named after the plan entry and the runner's pid."""
    found = []
    for path in glob.glob(os.path.join(results_dir, RUNS_DIR, ".tmp-*-*")):
        plan_id, _, pid = os.path.basename(path)[len(".tmp-"):].partition("-")
        if not (plan_id.isdigit() and pid.isdigit()):
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            continue  # left by a killed runner; the next run cleans it
        except PermissionError:
            pass
        try:
            found.append((int(plan_id), os.stat(path).st_mtime))
        except FileNotFoundError:
            continue  # finished meanwhile
    return found


def clean_stale(results_dir):
    """Removes temporary run folders left by a killed runner."""
    for path in glob.glob(os.path.join(results_dir, RUNS_DIR, ".tmp-*")):
        shutil.rmtree(path, ignore_errors=True)


def mpi_version(launcher):
    """First version line of the launcher (mpiexec or srun); '' if unknown."""
    program = {"srun": "srun"}.get(launcher, "mpiexec")
    # The venv's mpiexec, as `loggp run` uses, not a system one found first on PATH.
    command = which(program) or program
    try:
        out = subprocess.run([command, "--version"], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for line in out.splitlines():
        if "Version:" in line:
            return f"{program} {line.split(':', 1)[1].strip()}"
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    return lines[0] if lines else ""


class Progress:
    """Where a study is: on a terminal one live line (position, the run in progress, elapsed
    time, ETA); in a log or a pipe one line per run, as a log wants it. Runs not ok get a
    line of their own either way. One Progress follows a study's whole run: rounds added
    for precision are counted on (add), with the same clock, and the ETA says how much
    of the precision budget more rounds may still take (beyond)."""

    def __init__(self, total, done, mean_wall, stream=None, live=None, clock=time.monotonic):
        stream = stream or sys.stderr
        self.total, self.done, self.stream = total, done, stream
        self.mean_wall = dict(mean_wall)   # benchmark -> seconds, from earlier runs
        self.samples = {}
        self.clock = clock
        self.start = clock()
        self.live = LiveLine(total, done, stream, live, clock=clock)
        self.beyond = None   # seconds rounds not yet added may take, at most

    def add(self, runs):
        """A round added: its runs join the count; elapsed time goes on."""
        self.total += runs
        self.live.add(runs)

    def line(self, text):
        """A line that stays, above the live line on a terminal."""
        self.live.line(text)

    def estimate(self, benchmark):
        if benchmark in self.samples:
            s = self.samples[benchmark]
            return sum(s) / len(s)
        if benchmark in self.mean_wall:
            return self.mean_wall[benchmark]
        every = [x for s in self.samples.values() for x in s] or list(self.mean_wall.values())
        return sum(every) / len(every) if every else None

    def eta(self, remaining_benchmarks):
        total = 0.0
        for b in remaining_benchmarks:
            e = self.estimate(b)
            if e is None:
                return None
            total += e
        return total

    def starting(self, plan_row, remaining_benchmarks, reps):
        self.done += 1
        eta = self.eta(remaining_benchmarks)
        knobs = json.loads(plan_row["knobs"])
        moved = [f"{k}={v}" for k, v in knobs.items()
                 if k in topology_sweep.EXTRA + (target_sweep.KEY,)
                 or (v != "none" if k == jitter_sweep.SWEEP else units.parse(k, v) > 0)]
        moved = moved or ["baseline"]
        which = f"{plan_row['round'] + 1}/{reps}" if plan_row["round"] < reps else f"{plan_row['round'] + 1} (added)"
        what = f"round {which} {plan_row['benchmark']} np={plan_row['np']} {' '.join(moved)}"
        if self.live.live:
            self.live.now(what, eta, self.beyond)
            return
        print(f"[{self.done:>{len(str(self.total))}}/{self.total}] {what} | "
              f"elapsed {_duration(self.clock() - self.start)} | {eta_text(eta, self.beyond)}",
              file=self.stream, flush=True)

    def finished(self, row):
        self.samples.setdefault(row["benchmark"], []).append(row["wall_seconds"])
        self.live.done()
        if row["status"] != "ok":
            self.live.line(f"    {row['status']}: {row['error']} (see {evidence(row)})")

    def close(self):
        self.live.close()


def evidence(row):
    """The run file to read about a run that is not ok: its output when the runtime or
    verification read from it is at fault, else its errors."""
    return row["stdout_path"] if f"in {OUTPUT}" in (row["error"] or "") else row["stderr_path"]


_duration = duration  # study status prints with it too
