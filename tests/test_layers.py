"""The Python layering, read from the source of every module: knobs (lowest) <- shim <-
experiments <- harness <- analysis <- the loggp root (cli, main, testbed*). A module imports
only its own part or a part below it, and never hides an import inside a function to dodge
that (the root's command registry is the one place that loads commands lazily)."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# (part, folder of its modules, its package), lowest first.
PARTS = [("knobs", "loggp-knobs/loggp/knobs", "loggp.knobs"),
         ("shim", "shim/loggp/shim", "loggp.shim"),
         ("experiments", "experiments/loggp/experiments", "loggp.experiments"),
         ("harness", "npb-harness/loggp/harness", "loggp.harness"),
         ("analysis", "analysis/loggp/analysis", "loggp.analysis"),
         ("root", "loggp", "loggp")]
RANK = {part: rank for rank, (part, _, _) in enumerate(PARTS)}
# The command registry imports each command when it is asked for, so `loggp --help` stays fast.
LAZY_IMPORTS_ALLOWED = {"loggp/cli.py", "loggp/main.py"}


def part_of(module):
    """The part a dotted module name belongs to, or None for a module outside loggp."""
    if not module.startswith("loggp."):
        return None  # the namespace "loggp" itself is no part
    for part, _, package in PARTS[:-1]:
        if module == package or module.startswith(package + "."):
            return part
    return "root"


def modules():
    """(part, path relative to the repository, dotted name) of every Python module of every part."""
    found = []
    for part, folder, package in PARTS:
        files = (REPO / folder).glob("*.py") if part == "root" else (REPO / folder).rglob("*.py")
        for path in sorted(files):
            relative = path.relative_to(REPO / folder).with_suffix("")
            found.append((part, path.relative_to(REPO).as_posix(), ".".join((package, *relative.parts))))
    return found


def imported_modules(path, name):
    """Every module a file imports, anywhere in it, as dotted names (relative ones resolved)."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    package = name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)


def test_every_part_has_modules():
    parts = {part for part, _, _ in modules()}
    assert parts == set(RANK), sorted(set(RANK) - parts)


@pytest.mark.parametrize("part,path,name", modules(), ids=[path for _, path, _ in modules()])
def test_a_module_imports_no_part_above_its_own(part, path, name):
    above = sorted({module for module in imported_modules(REPO / path, name)
                    if part_of(module) is not None and RANK[part_of(module)] > RANK[part]})
    assert not above, f"{path} ({part}) imports {above}, above it"


def test_the_check_sees_a_part_importing_upwards(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from ..analysis import predict\n    import loggp.testbed\n    from loggp import main\n")
    found = set(imported_modules(bad, "loggp.shim.bad"))
    assert {"loggp.analysis.predict", "loggp.testbed", "loggp.main"} <= found
    assert part_of("loggp.analysis.predict") == "analysis" and part_of("loggp.testbed") == "root"


def test_the_testbed_parts_do_not_import_the_command():
    """testbed.py imports its parts (testbed_hosts, _netem, _slurm, _calibrate); none imports it back."""
    parts = [(path, name) for _, path, name in modules() if name.startswith("loggp.testbed_")]
    assert {name for _, name in parts} >= {"loggp.testbed_hosts", "loggp.testbed_netem", "loggp.testbed_slurm",
                                           "loggp.testbed_calibrate"}
    back = sorted(path for path, name in parts if "loggp.testbed" in set(imported_modules(REPO / path, name)))
    assert not back, back


HIDDEN_IMPORT = re.compile(r"^[ \t]+(from\s+(loggp\b|\.)|import\s+loggp\b)")


def hidden_imports(text):
    return [line.strip() for line in text.splitlines() if HIDDEN_IMPORT.match(line)]


def test_no_loggp_import_hides_inside_a_function():
    hidden = {path: found for _, path, _ in modules() if path not in LAZY_IMPORTS_ALLOWED
              for found in [hidden_imports((REPO / path).read_text())] if found}
    assert not hidden, hidden


def test_the_hidden_import_check_sees_one():
    assert hidden_imports("import os\n\ndef f():\n    from loggp import testbed\n    from . import fit\n") == \
        ["from loggp import testbed", "from . import fit"]
    assert hidden_imports("from loggp.knobs import parse\nimport loggpx\n") == []


def loaded_after_import(module):
    code = f"import sys, {module}; print(' '.join(m for m in sys.modules if m.startswith('loggp')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_knobs_is_the_lowest_layer():
    loaded = loaded_after_import("loggp.knobs.command") | loaded_after_import("loggp.knobs")
    assert {"loggp.knobs", "loggp.knobs.command", "loggp.knobs.vocabulary"} <= loaded
    assert all(m == "loggp" or m.startswith("loggp.knobs.") or m == "loggp.knobs" for m in loaded), sorted(loaded)


def test_every_registered_command_is_a_command():
    from loggp import cli
    from loggp.knobs.command import Command
    for name in cli.COMMANDS:
        command = cli.command(name)
        assert isinstance(command, Command) and command.prog == f"loggp {name}"
