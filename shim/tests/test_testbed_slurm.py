"""A real Slurm cluster on testbed hosts: slurmctld and slurmd started and stopped by one
fixture for the whole test run; srun as launcher across hosts with the libfabric engine; a parallel study of
job steps; kill and resume; the bad inputs. Needs root, network namespaces and slurm-wlm + munge."""
import atexit
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.testkit import installed, run

pytestmark = pytest.mark.slurm

# Names of our own: other sessions (and a user's 'tb') run testbeds at the same time.
NAME = f"sl{os.getpid() % 1000000}"


def why_not():
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    missing = [p for p in ("slurmctld", "slurmd", "munged", "srun", "nsenter", "unshare", "ip")
               if not (shutil.which(p) or shutil.which(p, path="/usr/sbin:/sbin"))]
    if missing:
        return f"{', '.join(missing)} not installed (Debian: slurm-wlm munge iproute2 util-linux)"
    proc = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"network namespaces cannot be made here ({proc.stderr.strip()[:200]})"
    return None


def loggp(*args, env, timeout=180):
    return run([installed("loggp"), *args], env=env, timeout=timeout)


def daemon_pids(run_dir):
    d = Path(run_dir) / f"testbed-{NAME}" / "slurm"
    pids = []
    for path in [*d.glob("*.pid"), *d.glob("munge/*.pid")]:
        try:
            pids.append(int(path.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    reason = why_not()
    if reason:
        pytest.skip(reason)
    run_dir = str(tmp_path_factory.mktemp("slurm-run"))
    env = dict(os.environ, LOGGP_TESTBED_RUN_DIR=run_dir)
    down = [installed("loggp"), "testbed", "down", "--name", NAME]
    # Whatever ends the test run, no daemon outlives it.
    atexit.register(lambda: subprocess.run(down, env=env, capture_output=True))
    proc = loggp("testbed", "up", "--hosts", "2", "--name", NAME, "--slurm", env=env)
    pids = daemon_pids(run_dir)
    try:
        assert proc.returncode == 0, proc.stderr + proc.stdout
        assert len(pids) == 4, pids  # slurmctld, 2 slurmd, munged
        yield {"env": env, "run_dir": run_dir}
    finally:
        stopped = loggp("testbed", "down", "--name", NAME, env=env)
        assert stopped.returncode == 0, stopped.stderr
        assert not [p for p in pids if alive(p)], "a daemon outlived `testbed down`"


def on_host0(cluster, *cmd, timeout=180):
    return loggp("testbed", "exec", "--name", NAME, "--", *cmd, env=cluster["env"], timeout=timeout)


def study_file(tmp_path, parallel, runs=4, seconds=1):
    path = tmp_path / "sleep.toml"
    path.write_text(f"""name = "sleep"
repetitions = {runs}
np = [1]
[launcher]
kind = "srun"
parallel = {parallel}
[[benchmark]]
name = "sleep"
command = ["/bin/sh", "-c", "echo began=$(date +%s.%N); sleep {seconds}; echo ended=$(date +%s.%N) runtime={seconds}"]
runtime_regex = "runtime=([0-9.]+)"
""")
    return path


def step_interval(results, plan_id):
    """When the run's program began and ended on its node, as it printed: the step's own
    lifetime (the driver's started_at is before srun waits for a node, its finished_at
    after the output is saved)."""
    text = (results / "runs" / str(plan_id) / "stdout.txt").read_text()
    began = float(text.split("began=")[1].split()[0])
    ended = float(text.split("ended=")[1].split()[0])
    return began, ended


def rows(results):
    import sqlite3
    conn = sqlite3.connect(results / "results.sqlite")
    try:
        return [dict(zip(("plan_id", "status", "host", "started_at", "finished_at"), r)) for r in
                conn.execute("SELECT plan_id, status, host, started_at, finished_at FROM runs ORDER BY plan_id")]
    finally:
        conn.close()


def rows_so_far(results):
    """The runs recorded yet, while the job may still be creating its store: none until the
    file and its tables are there."""
    import sqlite3
    try:
        return rows(results) if (results / "results.sqlite").exists() else []
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise


def test_status_shows_every_node_idle(cluster):
    proc = loggp("testbed", "status", "--name", NAME, env=cluster["env"])
    assert proc.returncode == 0, proc.stderr
    assert f"{NAME}n0 idle" in proc.stdout and f"{NAME}n1 idle" in proc.stdout, proc.stdout


def test_srun_launcher_runs_the_libfabric_engine_across_hosts(cluster, tmp_path):
    profile = tmp_path / "profile"
    proc = on_host0(cluster, "loggp", "run", "--launcher", "srun", "-n", "2", "--L", "50us",
                    "--profile", str(profile), "--", "loggp-timing", "pingpong", "8", "50")
    assert proc.returncode == 0, proc.stderr
    assert "engine libfabric, provider tcp" in proc.stderr and "L=50us" in proc.stderr, proc.stderr
    hosts = {json.loads((profile / f"profile.{r}.json").read_text())["host"] for r in (0, 1)}
    assert hosts == {f"{NAME}n0", f"{NAME}n1"}  # one rank per emulated host
    halfrtt = float(proc.stdout.split("halfrtt_us=")[1].split()[0])
    assert halfrtt > 50  # L travelled in the step's environment to both ranks


def test_parallel_study_runs_steps_on_nodes_of_their_own(cluster, tmp_path):
    results = tmp_path / "results"
    proc = on_host0(cluster, "salloc", "-N", "2", "loggp", "study", "run", str(study_file(tmp_path, 2)),
                    "--out", str(results), "--no-report")
    assert proc.returncode == 0, proc.stderr
    done = rows(results)
    assert [r["status"] for r in done] == ["ok"] * 4
    assert {r["host"] for r in done} <= {f"{NAME}n0", f"{NAME}n1"}
    lives = {r["plan_id"]: step_interval(results, r["plan_id"]) for r in done}

    def overlap(a, b):
        (a0, a1), (b0, b1) = lives[a["plan_id"]], lives[b["plan_id"]]
        return a is not b and a0 < b1 and b0 < a1
    for a in done:
        for b in done:
            if overlap(a, b):
                assert a["host"] != b["host"], (a, b, lives)
    assert any(overlap(a, b) for a in done for b in done), f"no two runs went at once: {lives}"


@pytest.mark.parametrize("signal_name", ["TERM", "KILL"])
def test_killed_driver_cancels_its_steps_and_a_rerun_resumes(cluster, tmp_path, signal_name):
    """TERM: the driver scancels its own steps. KILL: it cannot; the rerun, in the same
    allocation, cancels them first."""
    results = tmp_path / "results"
    study = study_file(tmp_path, 2, runs=4, seconds=4)
    run_it = f"loggp study run {study} --out {results} --no-report"
    script = (f"{run_it} & pid=$!; sleep 2; kill -{signal_name} $pid; wait $pid; echo KILLED; "
              f"squeue -h -s -o '%i %j'; "
              f"{run_it} || exit 9; echo RERUN; squeue -h -s -o '%i %j'")
    proc = on_host0(cluster, "salloc", "-N", "2", "/bin/sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    killed, rerun = proc.stdout.split("KILLED")[1].split("RERUN")
    if signal_name == "TERM":
        assert "interrupted" in proc.stderr, proc.stderr
        assert "loggp-study-" not in killed, f"orphan steps: {killed}"
    else:
        assert "cancelled steps of an earlier driver" in proc.stderr, proc.stderr
    assert "loggp-study-" not in rerun, f"orphan steps: {rerun}"
    done = rows(results)
    assert [r["plan_id"] for r in done] == [1, 2, 3, 4] and {r["status"] for r in done} == {"ok"}


@pytest.mark.parametrize("args, inside, message", [
    (["--parallel", "0"], True, "--parallel 0"),
    (["--parallel", "3"], True, "the allocation has 2 nodes"),
    ([], False, "no SLURM_JOB_ID"),
])
def test_bad_parallel_inputs_exit_2(cluster, tmp_path, args, inside, message):
    cmd = ["loggp", "study", "run", str(study_file(tmp_path, 1)), "--out", str(tmp_path / "r"), *args]
    proc = on_host0(cluster, *(["salloc", "-N", "2"] if inside else []), *cmd)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "r").exists()


def test_submit_keeps_its_script_and_status_follows_the_job(cluster, tmp_path):
    results = tmp_path / "results"
    study = study_file(tmp_path, 2, runs=2)
    dry = on_host0(cluster, "loggp", "study", "submit", str(study), "--nodes", "2", "--time", "5",
                   "--out", str(results), "--dry-run")
    assert dry.returncode == 0 and "#SBATCH --nodes=2" in dry.stdout, dry.stderr
    assert not (results / "slurm-job.json").exists()
    proc = on_host0(cluster, "loggp", "study", "submit", str(study), "--nodes", "2", "--time", "5",
                    "--out", str(results))
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    assert job.isdigit() and (results / "submit.sbatch").is_file()
    # as long as the job may run (its --time 5, in minutes, which Slurm enforces), however slow the machine
    deadline = time.monotonic() + 5 * 60 + 60
    while time.monotonic() < deadline and len(rows_so_far(results)) < 2:
        time.sleep(0.5)
    status = on_host0(cluster, "loggp", "study", "status", str(results))
    assert f"Slurm job {job}" in status.stdout and "2/2 runs done" in status.stdout, status.stdout


@pytest.mark.parametrize("args, message", [
    (["--nodes", "0", "--time", "5"], "--nodes 0"),
    (["--nodes", "1", "--time", "soon"], "--time 'soon'"),
    (["--nodes", "1", "--time", "5", "--parallel", "2"], "the allocation has 1 node"),
])
def test_bad_submit_inputs_exit_2(cluster, tmp_path, args, message):
    proc = on_host0(cluster, "loggp", "study", "submit", str(study_file(tmp_path, 1)), *args,
                    "--out", str(tmp_path / "r"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_submit_without_slurm_says_so(tmp_path):
    env = dict(os.environ, PATH=os.path.dirname(installed("loggp")))  # no sbatch on this PATH
    proc = run([installed("loggp"), "study", "submit", str(study_file(tmp_path, 1)), "--nodes", "1",
                "--time", "5", "--out", str(tmp_path / "r")], env=env)
    assert proc.returncode == 2 and "sbatch not found" in proc.stderr, proc.stderr
