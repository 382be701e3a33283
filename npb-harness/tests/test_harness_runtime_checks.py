"""What a study makes of a runtime it cannot trust, through `loggp study run`:
a runtime longer than the run's wall time is refused with the regex and the
text it matched, a regex that matched nothing names the file it searched,
and a program that never called MPI_Init is said to, not measured."""
import json
import os
import sqlite3
import subprocess
import sys
from types import SimpleNamespace

from loggp.harness import npb_output, runner

LOGGP = [sys.executable, "-m", "loggp.cli"]

STUDY = """
name = "checks"
repetitions = 1
np = 1
timeout = "30s"
{launcher}
[[benchmark]]
name = "{name}"
command = {command}
runtime_regex = '{regex}'
"""
TEMPLATE = '[launcher]\nkind = "template"\ntemplate = "{program}"\n'


def study_rows(write_study, tmp_path, **fields):
    results = str(tmp_path / "res")
    text = STUDY.format(**{"launcher": TEMPLATE, **fields})
    proc = subprocess.run(LOGGP + ["study", "run", write_study(text), "--results", results],
                          capture_output=True, text=True, timeout=240)
    conn = sqlite3.connect(os.path.join(results, "results.sqlite"))
    conn.row_factory = sqlite3.Row
    try:
        return proc, [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        conn.close()


def test_a_runtime_longer_than_the_wall_time_is_refused_with_the_regex_and_the_text(write_study, tmp_path):
    # the program ran for well under a second and prints microseconds; the regex reads them as seconds
    proc, rows = study_rows(write_study, tmp_path, name="micro", command='["echo", "elapsed 30580 us"]',
                            regex=r"elapsed (\S+) us")
    assert proc.returncode == 1, proc.stderr
    (row,) = rows
    assert row["status"] == "failed"
    assert row["runtime_seconds"] == 30580.0 and row["wall_seconds"] < 30580
    assert ("runtime_regex 'elapsed (\\\\S+) us' read 30580 s from 'elapsed 30580 us' in stdout.txt, longer than "
            "the run's whole wall time") in row["error"], row["error"]
    assert "(see runs/1/stdout.txt)" in proc.stderr, proc.stderr


def test_a_regex_that_matched_nothing_names_the_file_it_searched(write_study, tmp_path):
    proc, rows = study_rows(write_study, tmp_path, name="quiet", command='["echo", "done"]', regex=r"took (\S+) s")
    (row,) = rows
    assert row["status"] == "failed"
    assert row["error"] == "exit 0 but runtime_regex 'took (\\\\S+) s' matched nothing in stdout.txt"
    assert "(see runs/1/stdout.txt)" in proc.stderr, proc.stderr


def test_a_program_that_never_calls_mpi_init_is_said_to(write_study, tmp_path):
    # mpiexec on this host: `loggp run` sees every rank, and no MPI_Init among them
    proc, rows = study_rows(write_study, tmp_path, launcher="", name="nompi",
                            command='["echo", "took 0.001 s"]', regex=r"took (\S+) s")
    (row,) = rows
    assert row["status"] == "failed", row
    assert row["error"].startswith("the program never called MPI_Init, so no knob applied"), row["error"]
    outcome = json.loads((tmp_path / "res" / "runs" / "1" / "profile" / "outcome.json").read_text())
    assert outcome["mpi_init"] is False


def bench(kind="command", regex=r"(\S+) s"):
    return SimpleNamespace(kind=kind, runtime_regex=regex, timeout_s=10)


def test_classify_checks_the_runtime_against_the_wall_time():
    report = npb_output.parse_custom("took 2.5 s\n", r"took (\S+) s")
    assert report.matched == "took 2.5 s"
    assert runner.classify(0, False, report, bench(), wall_seconds=3.0) == ("ok", None)
    status, error = runner.classify(0, False, report, bench(), wall_seconds=2.0)
    assert status == "failed" and "read 2.5 s from 'took 2.5 s' in stdout.txt" in error
    npb = npb_output.parse_npb(" Time in seconds =     9.00\n Verification    =   SUCCESSFUL\n")
    status, error = runner.classify(0, False, npb, bench(kind="npb"), wall_seconds=1.0)
    assert status == "failed" and "NPB's 'Time in seconds' line read 9 s" in error
    # no wall time known: nothing to compare with
    assert runner.classify(0, False, report, bench(), wall_seconds=None) == ("ok", None)
