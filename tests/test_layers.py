"""The Python layering: the parts never import the loggp root (cli, main, testbed),
and loggp.knobs, the lowest layer, imports no other part."""
import subprocess
import sys

import pytest

ROOT_MODULES = {"loggp.cli", "loggp.main", "loggp.testbed", "loggp.testbed_slurm", "loggp.testbed_calibrate",
                "loggp.testbed_netem"}
PART_MODULES = ["loggp.shim.run", "loggp.shim.bench", "loggp.experiments.probe", "loggp.experiments.fit",
                "loggp.experiments.calibrate", "loggp.harness.study", "loggp.harness.runner",
                "loggp.analysis.report"]


def loaded_after_import(module):
    code = f"import sys, {module}; print(' '.join(m for m in sys.modules if m.startswith('loggp')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


@pytest.mark.parametrize("module", PART_MODULES)
def test_parts_do_not_import_the_root(module):
    loaded = loaded_after_import(module)
    assert module in loaded
    assert not loaded & ROOT_MODULES, sorted(loaded & ROOT_MODULES)


def test_knobs_is_the_lowest_layer():
    loaded = loaded_after_import("loggp.knobs.command") | loaded_after_import("loggp.knobs")
    assert loaded == {"loggp", "loggp.knobs", "loggp.knobs.command", "loggp.knobs.programs"}, sorted(loaded)


def test_every_registered_command_is_a_command():
    from loggp import cli
    from loggp.knobs.command import Command
    for name in cli.COMMANDS:
        command = cli.command(name)
        assert isinstance(command, Command) and command.prog == f"loggp {name}"
