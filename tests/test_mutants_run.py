"""tests/mutants/run reads each patch's header: its catch commands are split as a shell
would, so a -k expression of several words can stand in quotes."""
import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent / "mutants" / "run"


@pytest.fixture(scope="module")
def runner():
    loader = importlib.machinery.SourceFileLoader("mutants_run", str(RUN))
    spec = importlib.util.spec_from_loader("mutants_run", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def patch(tmp_path, catch):
    path = tmp_path / "a-bug.patch"
    path.write_text(f"# mutant: a bug\n# catch: {catch}\ndiff --git a/x b/x\n")
    return path


def test_a_quoted_expression_is_one_argument(runner, tmp_path):
    mutant = runner.parse_mutant(patch(tmp_path, 'pytest tests/test_x.py -k "one or two"'))
    assert mutant.catches == [("pytest", ["tests/test_x.py", "-k", "one or two"])]


def test_an_unclosed_quote_names_the_line(runner, tmp_path):
    with pytest.raises(runner.UsageError, match=r"a-bug.patch:2: .*quotation"):
        runner.parse_mutant(patch(tmp_path, 'pytest tests/test_x.py -k "one'))
