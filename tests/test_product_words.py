"""The product describes itself as it is now: no tracked file (code, docs, data, output strings)
names how or when it was made: no work-period or ticket words, no "VM" for the machine it was
measured on, no date in a file's name. Its history is in git."""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
THIS_FILE = Path(__file__).resolve().relative_to(REPO).as_posix()
# "VM" as an upper-case word only: NPB's LU kernel has a variable vm.
PROCESS_WORDS = re.compile(r"(?i:\bsession\b|\bissue\s+#?\d+)|\bVM\b")
# pytest's own names, which a conftest and a fixture must use.
PYTEST_NAMES = re.compile(r'scope="session"|pytest_sessionfinish\(session\b|\bsession\.config\b')
DATE_IN_NAME = re.compile(r"(19|20)\d\d-\d\d-\d\d")


def tracked_files():
    try:
        proc = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, timeout=60)
    except OSError as err:
        pytest.skip(f"git is not available: {err}")
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.decode(errors='replace').strip()}")
    return [name for name in proc.stdout.decode().split("\0") if name]


def process_words(text):
    """(line number, line) of every line that names a process word."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)
            if PROCESS_WORDS.search(PYTEST_NAMES.sub("", line))]


def test_no_tracked_file_names_a_process_word():
    found = []
    for name in tracked_files():
        path = REPO / name
        if name == THIS_FILE or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # images and other binary files
        found += [f"{name}:{number}: {line[:120]}" for number, line in process_words(data.decode(errors="replace"))]
    assert not found, "\n".join(found)


def test_no_tracked_file_has_a_date_in_its_name():
    dated = [name for name in tracked_files() if DATE_IN_NAME.search(name)]
    assert not dated, dated


@pytest.mark.parametrize("line", ["what changed in Session 11", "see issue 14", "fixed in issue #3",
                                  "on this VM", "measured on the VM's clock"])
def test_the_check_sees_a_process_word(line):
    assert process_words(line)


@pytest.mark.parametrize("line", ['@pytest.fixture(scope="session")', "def pytest_sessionfinish(session, status):",
                                  "double vm[4];", "sessions_total = 3", "the issue is the copy",
                                  "2026-11-25 load average 1.2"])
def test_the_check_leaves_ordinary_text_alone(line):
    assert not process_words(line)
