"""Runs of a study as Slurm job steps inside an allocation (`loggp study run --parallel K`).

Slurm is the scheduler: up to K runs go at once, each an `srun --exclusive -N n` step, so no
two running steps share a node. The driver stays the only writer of the store: worker threads
only run steps; the driver records each finished row. Every step is named after the results
folder, so a driver (or its rerun after a kill -9) finds and cancels its own steps and no one
else's.
"""
import concurrent.futures
import hashlib
import os
import shlex
import shutil
import subprocess

from . import runner


NODES_MARK = "loggp-step-nodes="


class StepError(Exception):
    pass


def allocation(environ=os.environ):
    """(job id, node count) of the Slurm allocation this driver runs in, or None."""
    job = environ.get("SLURM_JOB_ID")
    nodes = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES")
    if not job:
        return None
    try:
        return job, int(nodes)
    except (TypeError, ValueError):
        raise StepError(f"SLURM_JOB_NUM_NODES '{nodes}' is not a node count") from None


def check(study, parallel, environ=os.environ):
    """The allocation for a study with kind = "srun": refuses one outside an allocation and
    more parallel runs than nodes. Returns nodes per step, or None for other launchers."""
    if study.launcher != "srun":
        if parallel > 1:
            raise StepError(f"--parallel {parallel}: parallel runs are Slurm job steps; the study's "
                            f"[launcher] kind must be \"srun\", not {study.launcher!r}")
        return None
    found = allocation(environ)
    if found is None:
        raise StepError(f"{study.path}: kind = \"srun\" runs job steps inside an allocation, and this "
                        "is none (no SLURM_JOB_ID): use `loggp study submit`, or salloc -N N loggp study run ...")
    _, nodes = found
    if parallel > nodes:
        raise StepError(f"--parallel {parallel}: the allocation has {nodes} node{'s' if nodes != 1 else ''}, "
                        "and every running step needs nodes of its own")
    widest = max(np_ for b in study.benchmarks for np_ in b.nps)
    per_step = max(1, nodes // parallel)
    return min(per_step, widest)


def step_name(results_dir):
    digest = hashlib.sha256(os.path.abspath(results_dir).encode()).hexdigest()[:12]
    return f"loggp-study-{digest}"


def launcher_template(results_dir, nodes_per_step, np_):
    """The `loggp run --launcher` template of one step: exclusive nodes, knobs in its environment."""
    nodes = min(nodes_per_step, np_)
    mpi = [] if "SLURM_MPI_TYPE" in os.environ else ["--mpi=pmi2"]
    srun = shutil.which("srun") or "srun"
    # Each task names the step's nodes on stderr first; the driver stores them with the run.
    tell = f'echo "{NODES_MARK}$SLURM_STEP_NODELIST" >&2; exec "$@"'
    # {np}: `loggp run -n` fills it in (a template without it is warned about)
    return shlex.join([srun, "--exclusive", "-N", str(nodes), "-n", "{np}", "--export=ALL", *mpi,
                       "--job-name", step_name(results_dir), "/bin/sh", "-c", tell, "sh"]) + " {program}"


def step_nodes(results_dir, row):
    """The step's node list as its tasks said it, or None."""
    try:
        with open(os.path.join(results_dir, row["stderr_path"]), errors="replace") as f:
            for line in f:
                if line.startswith(NODES_MARK):
                    return line[len(NODES_MARK):].strip() or None
    except OSError:
        pass
    return None


def own_steps(results_dir, environ=os.environ):
    """Step ids (JOB.STEP) of this results folder's steps still known to Slurm."""
    squeue = shutil.which("squeue")
    if squeue is None:
        return []
    try:
        # By name, in any job: `study status` runs outside the allocation.
        out = subprocess.run([squeue, "-h", "-s", "-o", "%i %j"], capture_output=True,
                             text=True, timeout=30, env=environ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    name = step_name(results_dir)
    return [line.split()[0] for line in out.splitlines() if line.split()[1:] == [name]]


def cancel_own_steps(results_dir, environ=os.environ):
    """scancel of this folder's own steps (never the allocation, never another's). Returns them."""
    steps = own_steps(results_dir, environ)
    scancel = shutil.which("scancel")
    if steps and scancel:
        subprocess.run([scancel, *steps], capture_output=True, timeout=30)
    return steps


def run_parallel(study, db, results_dir, facts, pending, progress, parallel, nodes_per_step):
    """Runs PENDING with up to PARALLEL steps at once; records each row as it finishes."""
    from dataclasses import replace

    # Steps span nodes: libfabric's tcp unless the user chose (`loggp run` would pick shm).
    os.environ.setdefault("FI_PROVIDER", "tcp")
    studies = {}

    def study_for(np_):
        if np_ not in studies:
            studies[np_] = replace(study, launcher=launcher_template(results_dir, nodes_per_step, np_))
        return studies[np_]

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=parallel)
    running = {}
    queue = list(pending)
    try:
        while queue or running:
            while queue and len(running) < parallel:
                plan_row = queue.pop(0)
                bench = study.benchmark(plan_row["benchmark"])
                progress.starting(plan_row, [p["benchmark"] for p in [plan_row, *queue]], study.repetitions)
                future = pool.submit(runner.execute, study_for(plan_row["np"]), bench, plan_row,
                                     results_dir, facts)
                running[future] = plan_row
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                running.pop(future)
                row = future.result()
                row["host"] = step_nodes(results_dir, row) or row["host"]
                db.record(row)
                progress.finished(row)
    except BaseException:
        cancel_own_steps(results_dir)
        for future in running:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _spread(values):
    values = sorted(values)
    middle = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    return (values[-1] - values[0]) / middle if middle > 0 else 0.0


def _median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def node_set_flags(runs):
    """Settings whose runs on different node sets differ by more than the study's noise:
    [(setting, spread between node-set medians, noise)]. The noise is the median, over settings,
    of the relative spread of a setting's ok runtimes."""
    by_setting = {}
    for r in runs:
        if r["status"] == "ok" and r["runtime_seconds"]:
            key = (r["benchmark"], r["np"], r["sweep"], r["knobs"])
            by_setting.setdefault(key, []).append(r)
    spreads = [_spread([r["runtime_seconds"] for r in rs]) for rs in by_setting.values() if len(rs) > 1]
    if not spreads:
        return []
    noise = _median(spreads)
    flags = []
    for key, rs in by_setting.items():
        per_nodes = {}
        for r in rs:
            per_nodes.setdefault(r["host"], []).append(r["runtime_seconds"])
        if len(per_nodes) < 2:
            continue
        between = _spread([_median(v) for v in per_nodes.values()])
        if between > noise:
            flags.append((key, between, noise))
    return flags
