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
