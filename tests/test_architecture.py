"""docs/architecture.md lists every source file: a tracked Python, C, header, CMake or script
file that it does not name by its path from the repository's root fails here. Tests are left out
(each part's tests/ folder, and test_* files beside what they test): the page names their folders."""
import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
SOURCE_SUFFIXES = {".py", ".c", ".h", ".sh", ".cmake", ".in", ".tbl"}
SCRIPTS = {".ci/run"}  # executable scripts without a suffix


def is_source(name):
    path = PurePosixPath(name)
    if "tests" in path.parts[:-1] or path.name.startswith("test_"):
        return False
    if path.parts[0] == "docs":
        return False
    return path.suffix in SOURCE_SUFFIXES or path.name == "CMakeLists.txt" or name in SCRIPTS


def named_paths(text):
    """Every `path` the page names in backquotes."""
    return set(re.findall(r"`([^`\s]+)`", text))


def tracked_files():
    proc = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.decode(errors='replace').strip()}")
    return [name for name in proc.stdout.decode().split("\0") if name]


def test_every_source_file_is_on_the_page():
    named = named_paths(PAGE.read_text())
    missing = sorted(name for name in tracked_files() if is_source(name) and name not in named)
    assert not missing, "docs/architecture.md does not list: " + ", ".join(missing)


def test_the_page_names_no_file_that_is_gone():
    tracked = set(tracked_files())
    gone = sorted(path for path in named_paths(PAGE.read_text())
                  if is_source(path) and "/" in path and path not in tracked and not (REPO / path).exists())
    assert not gone, gone


def test_what_counts_as_a_source_file():
    assert is_source("shim/src/ofi/cq_hold.c") and is_source("loggp/testbed_hosts.py")
    assert is_source("npb-harness/kernels/cg/CMakeLists.txt") and is_source(".ci/run")
    assert is_source("shim/bench/ab-msgrate.sh") and is_source("shim/src/pmpi/collectives.tbl")
    assert not is_source("shim/tests/test_ofi_cq.c") and not is_source("tests/mutants/run")
    assert not is_source("npb-harness/kernels/ft/test_ft_fft.c") and not is_source("docs/data/layer-cost.txt")
    assert not is_source("README.md") and not is_source("npb-harness/studies/default.toml")
    assert named_paths("- `a/b.c`, `a/b.h`: both") == {"a/b.c", "a/b.h"}
