"""Parallel job steps and sbatch submission without a cluster: the checks, the step's srun
command, the script (the real cluster is in shim/tests/test_testbed_slurm.py)."""
import argparse
import shlex

import pytest

from loggp.harness import steps, studyfile, submit


def study(tmp_path, kind="srun", parallel=None, np_=(1,)):
    extra = f"parallel = {parallel}\n" if parallel is not None else ""
    path = tmp_path / "s.toml"
    path.write_text(f"""name = "s"
np = {list(np_)}
[launcher]
kind = "{kind}"
{extra}[[benchmark]]
command = ["/bin/true"]
runtime_regex = "x(1)"
""")
    return path


@pytest.mark.parametrize("value, message", [
    (0, "parallel must be a whole number"), (-2, "parallel must be a whole number"),
])
def test_bad_parallel_in_the_file_names_the_line(tmp_path, value, message):
    with pytest.raises(studyfile.StudyError, match=message) as err:
        studyfile.load(study(tmp_path, parallel=value))
    assert err.value.line == 5


def test_parallel_needs_srun(tmp_path):
    with pytest.raises(studyfile.StudyError, match='needs kind = "srun"'):
        studyfile.load(study(tmp_path, kind="mpiexec", parallel=2))


def test_allocation_checks(tmp_path):
    s = studyfile.load(study(tmp_path, parallel=2, np_=(1, 2)))
    assert s.parallel == 2
    with pytest.raises(steps.StepError, match="no SLURM_JOB_ID"):
        steps.check(s, 2, {})
    with pytest.raises(steps.StepError, match="has 3 nodes"):
        steps.check(s, 4, {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "3"})
    assert steps.check(s, 2, {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "8"}) == 2  # widest np caps it
    assert steps.check(s, 3, {"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "3"}) == 1


def test_step_is_exclusive_named_and_tells_its_nodes(tmp_path):
    words = shlex.split(steps.launcher_template(str(tmp_path), 2, 4).format(np=4, program="prog"))
    assert words[1:5] == ["--exclusive", "-N", "2", "-n"] and words[5] == "4"
    assert words[words.index("--job-name") + 1] == steps.step_name(str(tmp_path))
    assert steps.step_name(str(tmp_path)) != steps.step_name(str(tmp_path / "other"))
    assert words[-1] == "prog" and steps.NODES_MARK in " ".join(words)


def test_submit_dry_run_writes_the_script_and_submits_nothing(tmp_path, capsys):
    args = argparse.Namespace(study=str(study(tmp_path, parallel=2)), nodes=4, time="1:00:00",
                              partition="short", parallel=None, results=str(tmp_path / "r"), dry_run=True)
    assert submit.submit(args, lambda s, override: override) == 0
    text = (tmp_path / "r" / submit.SCRIPT).read_text()
    assert text == capsys.readouterr().out
    for line in ("#SBATCH --nodes=4", "#SBATCH --time=1:00:00", "#SBATCH --partition=short", "--parallel 2"):
        assert line in text
    assert not (tmp_path / "r" / submit.JOB_FILE).exists()


@pytest.mark.parametrize("time_limit", ["90", "1:30", "1:30:00", "2-0", "2-01:00", "2-01:00:00"])
def test_slurm_time_forms(time_limit):
    assert submit.TIME_RE.fullmatch(time_limit)


@pytest.mark.parametrize("time_limit", ["", "1h", "-1", "1:2:3:4", "soon"])
def test_bad_time_forms(time_limit):
    assert not submit.TIME_RE.fullmatch(time_limit)


def run_row(sweep, host, seconds, status="ok"):
    return {"benchmark": "b", "np": 2, "sweep": sweep, "knobs": sweep, "host": host,
            "runtime_seconds": seconds, "status": status}


def test_node_sets_flagged_only_beyond_the_noise():
    runs = [run_row("baseline", "n0", 1.00), run_row("baseline", "n1", 1.005),
            run_row("L", "n0", 2.00), run_row("L", "n0", 2.02),
            run_row("g", "n0", 1.50), run_row("g", "n1", 1.80), run_row("g", "n1", 1.81),
            run_row("o", "n2", 9.0, status="failed")]
    flags = steps.node_set_flags(runs)
    assert [key[2] for key, _, _ in flags] == ["g"]
    key, between, noise = flags[0]
    assert between == pytest.approx(0.305 / 1.6525) and noise == pytest.approx(0.02 / 2.01)
    assert steps.node_set_flags(runs[:2]) == []   # one setting: its spread is the noise itself
