"""`loggp study submit`: a study as a Slurm batch job. The sbatch script is written next to the
results and kept, so the submission can be repeated by hand; the job id goes there too, for
`loggp study status`."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

from loggp.knobs.files import write_text_atomic
from loggp.knobs.grammar import Deprecated

from . import runner, steps, studyfile

SCRIPT = "submit.sbatch"
JOB_FILE = "slurm-job.json"
# Slurm's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S
TIME_RE = re.compile(r"\d+(:\d{1,2}){0,2}|\d+-\d+(:\d{1,2}){0,2}")


class SubmitError(Exception):
    pass


def add_arguments(sub):
    s = sub.add_parser("submit", help="submit a study as a Slurm batch job (sbatch)",
                       example="loggp study submit my-study.toml --nodes 4 --time 2:00:00 --parallel 2")
    s.add_argument("study", help="study file (TOML) with [launcher] kind = \"srun\"")
    s.add_argument("--nodes", type=int, required=True, help="nodes to allocate (required, no default)")
    s.add_argument("--time", required=True, metavar="T",
                   help="time limit in Slurm's form, e.g. 90, 1:30:00, 1-00:00 (required, no default)")
    s.add_argument("--partition", help="Slurm partition (default: the cluster's default)")
    s.add_argument("--parallel", type=int, metavar="K", help="runs at once (default: the study file's, else 1)")
    s.add_argument("--out", dest="results", metavar="DIR", help="results folder (default: as `loggp study run`)")
    s.add_argument("--results", dest="results", metavar="DIR", action=Deprecated, instead="--out",
                   help="the old spelling of --out; it will go (default: as --out)")
    s.add_argument("--dry-run", action="store_true", help="write the script and print it; submit nothing")


def script_text(study, results_dir, nodes, time_limit, partition, parallel):
    loggp = shlex.join(runner.loggp_command())
    lines = ["#!/bin/sh",
             f"# Written by `loggp study submit`; submit it again with: sbatch {shlex.quote(os.path.join(results_dir, SCRIPT))}",
             f"#SBATCH --job-name=loggp-{study.name}"[:80],
             f"#SBATCH --nodes={nodes}",
             f"#SBATCH --time={time_limit}",
             f"#SBATCH --output={os.path.join(results_dir, 'slurm-%j.out')}"]
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    lines.append(f"exec {loggp} study run {shlex.quote(study.path)} --out {shlex.quote(results_dir)} "
                 f"--parallel {parallel}")
    return "\n".join(lines) + "\n"


def submit(args, results_dir_for, out=None):
    out = out or sys.stdout
    if args.nodes < 1:
        raise SubmitError(f"--nodes {args.nodes}: expected 1 or more")
    if not TIME_RE.fullmatch(args.time):
        raise SubmitError(f"--time '{args.time}': expected Slurm's form, e.g. 90 (minutes), 1:30:00, 1-00:00")
    if args.partition is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", args.partition):
        raise SubmitError(f"--partition '{args.partition}': expected a partition name")
    study = studyfile.load(args.study)
    parallel = study.parallel if args.parallel is None else args.parallel
    if parallel < 1:
        raise SubmitError(f"--parallel {parallel}: expected 1 or more runs at once")
    if study.launcher != "srun":
        raise SubmitError(f"{study.path}: a submitted study runs as job steps: [launcher] kind must be "
                          f"\"srun\", not {study.launcher!r}")
    steps.check(study, parallel, {"SLURM_JOB_ID": "submit", "SLURM_JOB_NUM_NODES": str(args.nodes)})
    sbatch = shutil.which("sbatch")
    if sbatch is None and not args.dry_run:
        raise SubmitError("sbatch not found: submit needs Slurm's clients (Debian: slurm-client or slurm-wlm)")
    results_dir = results_dir_for(study, args.results)
    try:
        os.makedirs(results_dir, exist_ok=True)
    except OSError as e:
        raise SubmitError(f"cannot create results folder {results_dir}: {e.strerror}") from None
    path = os.path.join(results_dir, SCRIPT)
    write_text_atomic(path, script_text(study, results_dir, args.nodes, args.time, args.partition, parallel), 0o755)
    if args.dry_run:
        with open(path) as f:
            out.write(f.read())
        print(f"loggp study: dry run; script kept in {path}", file=sys.stderr)
        return 0
    proc = subprocess.run([sbatch, "--parsable", path], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise SubmitError(f"sbatch {path}: {proc.stderr.strip() or f'exit {proc.returncode}'}")
    job = proc.stdout.strip().split(";")[0]
    write_text_atomic(os.path.join(results_dir, JOB_FILE), json.dumps({"job_id": job, "script": path}) + "\n")
    print(job, file=out)
    return 0


def job_line(results_dir):
    """`loggp study status`'s line about a submitted job, or None."""
    try:
        with open(os.path.join(results_dir, JOB_FILE)) as f:
            job = json.load(f)["job_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    state = "unknown to Slurm now (finished or Slurm not reachable)"
    squeue = shutil.which("squeue")
    if squeue:
        try:
            found = subprocess.run([squeue, "-h", "-j", str(job), "-o", "%T %M %N"], capture_output=True,
                                   text=True, timeout=30).stdout.split()
        except (OSError, subprocess.TimeoutExpired):
            found = []
        if found:
            state = f"{found[0]} for {found[1]}" + (f" on {found[2]}" if len(found) > 2 else "")
    return f"  Slurm job {job}: {state}"
