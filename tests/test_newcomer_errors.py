"""Errors before launch: each walks the command and checks its exit code
and what it says."""
import re
from pathlib import Path

import pytest

from tests.testkit import ROOT, installed, run


def loggp(*args, **kw):
    return run([installed("loggp"), *args], **kw)


STUDY = '''name = "newcomer"
repetitions = 1
np = 2
order = "interleave"

[[benchmark]]
{benchmark}
'''


def write_study(folder, benchmark, header=""):
    path = folder / "study.toml"
    path.write_text(header + STUDY.format(benchmark=benchmark))
    return path


def test_study_class_a_kernel_lacks_is_refused_at_validation(tmp_path):
    path = write_study(tmp_path, 'kernel = "ft"\nclass = "C"')
    proc = loggp("study", "run", path, "--no-report")
    assert proc.returncode == 2
    line = path.read_text().splitlines().index('class = "C"') + 1
    assert f"{path}:{line}" in proc.stderr
    assert "kernel 'ft' has no class 'C' (its classes: S, W, A, B)" in proc.stderr
    assert not (tmp_path / "results").exists(), "refused before any run"


def test_a_kernel_on_a_process_count_it_cannot_take_is_refused_at_validation(tmp_path):
    path = write_study(tmp_path, 'kernel = "cg"\nclass = "S"\nnp = [2, 3]')
    proc = loggp("study", "run", path, "--no-report")
    assert proc.returncode == 2
    assert "kernel 'cg' runs on a power-of-two number of processes, not np = 3" in proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists(), "refused before any run"


def test_power_of_two_kernels_match_the_kernels_own_checks():
    from loggp.harness import studyfile
    for kernel in studyfile.KERNEL_CLASSES:
        source = (ROOT / "npb-harness" / "kernels" / kernel / f"{kernel}.c").read_text()
        assert ("npb_is_power_of_two(" in source) == (kernel in studyfile.POWER_OF_TWO_KERNELS), kernel


def test_kernel_classes_match_the_kernels_own_parsers():
    from loggp.harness import studyfile
    for kernel, classes in studyfile.KERNEL_CLASSES.items():
        source = (ROOT / "npb-harness" / "kernels" / kernel / f"{kernel}.c").read_text()
        found = re.search(r'npb_begin\(&argc, &argv, "%s", "([A-Z]+)"' % kernel, source)
        assert found and found.group(1) == classes, kernel


def test_run_refuses_L_under_the_fallback_engine():
    proc = loggp("run", "-n", "2", "--engine", "pmpi", "--L", "10us", "--dry-run", "--", "true")
    assert proc.returncode == 2
    assert "--L 10us" in proc.stderr and "cannot apply L" in proc.stderr
    assert loggp("run", "-n", "2", "--engine", "pmpi", "--g", "1us", "--dry-run", "--", "true").returncode == 0


def test_run_refuses_a_profile_that_is_not_a_folder(tmp_path):
    target = tmp_path / "profile.json"
    target.write_text("{}")
    proc = loggp("run", "-n", "2", "--profile", target, "--", "true")
    assert proc.returncode == 2 and f"--profile '{target}': not a folder" in proc.stderr


@pytest.mark.parametrize("abi", [[], ["--no-abi-swap"]])
def test_run_says_a_missing_program_in_its_own_words(abi):
    proc = loggp("run", "-n", "2", *abi, "--", "./nonexistent")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "loggp run: program './nonexistent' not found"


def failing_study(tmp_path):
    return write_study(tmp_path, 'command = ["false"]\nruntime_regex = "t=(\\\\S+)"')


def test_a_study_whose_runs_all_failed_exits_non_zero_and_says_so(tmp_path):
    path = failing_study(tmp_path)
    proc = loggp("study", "run", path, "--out", tmp_path / "r", "--no-report", timeout=300)
    assert proc.returncode == 1
    assert "every run failed" in proc.stderr


def test_resume_accepts_a_comment_and_refuses_a_different_plan(tmp_path):
    path = failing_study(tmp_path)
    results = tmp_path / "r"
    loggp("study", "run", path, "--out", results, "--no-report", timeout=300)
    path.write_text("# a comment, nothing else\n" + path.read_text())
    proc = loggp("study", "run", path, "--out", results, "--no-report", timeout=300)
    assert proc.returncode != 2, proc.stderr
    assert "only in ways that keep the same runs (comments, layout); resuming" in proc.stderr
    path.write_text(path.read_text().replace("repetitions = 1", "repetitions = 2"))
    proc = loggp("study", "run", path, "--out", results, "--no-report", timeout=300)
    assert proc.returncode == 2
    assert "holds results of a different study" in proc.stderr and "now plans other runs" in proc.stderr


def test_fit_prints_knobs_as_knob_values():
    from loggp.experiments import fit
    assert fit.format_knobs(fit.knob_increments({"o": "1us", "G": "0.5ns/B", "L": "10us"})) == \
        "o_s=1us o_r=1us g=0 G=0.5ns/B L=10us"
