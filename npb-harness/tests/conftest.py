import os
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_npb.py")


@pytest.fixture
def write_study(tmp_path):
    """Writes a study file from dedented text; {fake} is the fake benchmark."""
    def write(text, name="study.toml"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip().replace("{fake}", FAKE)
                        .replace("{python}", sys.executable))
        return str(path)
    return write


# One fake benchmark run by a template launcher, with room for an optional table.
STUDY_WITH_TABLE = """
np = {np}
[launcher]
kind = "template"
template = "{{program}}"
{table}
[[benchmark]]
name = "fake"
command = ["{{fake}}", "S"]
runtime_regex = '(x)'
"""


@pytest.fixture
def study_with_table(write_study):
    """Loads a study of one fake benchmark on np ranks with `table` (text) added."""
    from loggp.harness import studyfile

    def load(table, np=2):
        return studyfile.load(write_study(STUDY_WITH_TABLE.format(np=np, table=table)))
    return load
