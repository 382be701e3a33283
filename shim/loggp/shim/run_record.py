"""What `loggp run` says after the run: libloggp.so leaves DIR/init.<pid> in
every process that calls MPI_Init and DIR/finalize.<pid> in MPI_Finalize
(LOGGP_RUN_RECORD=DIR, a folder of the run's own), so a program that never
called MPI_Init (no knob applied), or a run whose ranks did not finish (their
profile and trace never written), is said in one line instead of passing in
silence. The program's exit status stays the run's."""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from loggp.knobs.files import write_text_atomic

from .child import run_program

VARIABLE = "LOGGP_RUN_RECORD"
# beside the profiles, for a study: {"mpi_init": bool, "not_written": [file names]}
OUTCOME = "outcome.json"


def make_folder():
    return tempfile.mkdtemp(prefix="loggp-run-")


def events(folder):
    """{"init": count, "finalize": count} of the processes that left a record."""
    names = os.listdir(folder) if os.path.isdir(folder) else []
    return {event: sum(1 for n in names if n.startswith(event + ".")) for event in ("init", "finalize")}


def missing_rank_files(folder, stem, suffix, ranks):
    """The rank files (stem.<rank>suffix) of ranks 0..ranks-1 not in folder."""
    return [f"{stem}.{r}{suffix}" for r in range(ranks) if not Path(folder, f"{stem}.{r}{suffix}").is_file()]


def summary(missing, ranks):
    """"trace.1.bin" or "profile.<rank>.json of ranks 0-3" (all of them), for one line."""
    if len(missing) == ranks and ranks > 1:
        stem, _, rest = missing[0].partition(".")
        return f"{stem}.<rank>{rest[rest.index('.'):]} of every rank"
    return ", ".join(missing)


def report(record, ranks, profile=None, trace=None):
    """(lines to say, outcome) for a finished run: record the run's record folder, ranks
    its rank count, profile and trace the folders asked for (None: not asked)."""
    seen = events(record)
    asked = [(flag, folder, stem, suffix) for flag, folder, stem, suffix in
             (("--profile", profile, "profile", ".json"), ("--trace", trace, "trace", ".bin")) if folder]
    if seen["init"] == 0:
        outputs = [flag.lstrip("-") for flag, *_ in asked]
        written = ("" if not outputs else f", and no {outputs[0]} was written" if len(outputs) == 1
                   else ", and neither the profile nor the trace was written")
        return ([f"warning: the program never called MPI_Init, so no knob applied{written} (libloggp.so acts "
                 "inside MPI programs only; is it one, or does it start one?)"],
                {"mpi_init": False, "not_written": [flag for flag, *_ in asked]})
    not_written = []
    parts = []
    for flag, folder, stem, suffix in asked:
        missing = missing_rank_files(folder, stem, suffix, ranks)
        if missing:
            not_written += missing
            parts.append(f"{flag} {folder}: {summary(missing, ranks)}")
    lines = []
    if parts:
        why = ("a rank writes its files in MPI_Finalize, and these did not get through it"
               if seen["finalize"] < ranks else "see the lines above")
        lines.append(f"warning: the run did not finish, so these requested outputs were not written: "
                     f"{'; '.join(parts)} ({why})")
    return lines, {"mpi_init": True, "not_written": not_written}


def launch(cmd, env, ranks, profile=None, trace=None):
    """Runs cmd to its end (child.run_program: its exit code, signals passed on), then
    says what did not happen, interrupted or not."""
    record = env[VARIABLE]
    try:
        return run_program(cmd, env)
    finally:
        try:
            lines, outcome = report(record, ranks, profile, trace)
        finally:
            shutil.rmtree(record, ignore_errors=True)
        for line in lines:
            print(f"loggp run: {line}", file=sys.stderr, flush=True)
        if profile and os.path.isdir(profile):
            try:
                write_text_atomic(Path(profile, OUTCOME), json.dumps(outcome) + "\n")
            except OSError:
                pass  # the line above has said it; the folder is the user's
