"""Regions: a program marks its kernel with loggp_hint or
MPI_Pcontrol; the profile splits messages and injected delay by region, and
knobs scoped to the kernel apply there only. Checked through the profile's
counters, not through timing."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.testkit import built, installed, run

BEFORE, INSIDE, AFTER = 5, 7, 3


def profile_of(tmp_path, *args, mark="hint"):
    folder = tmp_path / f"prof-{mark}-{len(args)}"
    proc = run([installed("loggp"), "run", "-n", "2", "--profile", folder, *args, "--",
                built("shim/tests/loggp-test-regions"), BEFORE, INSIDE, AFTER, mark], timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc, [json.loads((folder / f"profile.{r}.json").read_text())["regions"] for r in (0, 1)]


@pytest.mark.parametrize("mark", ["hint", "pcontrol"])
def test_the_profile_splits_messages_by_region(tmp_path, mark):
    _, (sender, receiver) = profile_of(tmp_path, mark=mark)
    assert sender["marked"] and sender["scope"] == "all"
    assert sender["kernel"]["sent"]["messages"] == INSIDE
    assert sender["outside"]["sent"]["messages"] == BEFORE + AFTER
    assert receiver["kernel"]["received"]["messages"] == INSIDE
    assert receiver["outside"]["received"]["messages"] == BEFORE + AFTER


@pytest.mark.parametrize("mark", ["hint", "pcontrol"])
def test_knobs_scoped_to_the_kernel_apply_inside_it_only(tmp_path, mark):
    proc, (sender, receiver) = profile_of(tmp_path, "--scope", "kernel", "--o", "100us", mark=mark)
    assert "inside the kernel region only" in proc.stderr
    assert sender["scope"] == "kernel"
    assert sender["kernel"]["injected_ns"]["o_s"] == INSIDE * 100_000
    assert sender["outside"]["injected_ns"]["o_s"] == 0
    assert receiver["kernel"]["injected_ns"]["o_r"] == INSIDE * 100_000
    assert receiver["outside"]["injected_ns"]["o_r"] == 0


def test_the_knob_file_scopes_the_knobs_like_the_flag(tmp_path):
    """`loggp-knobs set --scope kernel` writes the scope into the knob file, which
    every program started later (and every running one, live) applies."""
    env = dict(os.environ, LOGGP_KNOB_FILE=str(tmp_path / "knobs"))
    setting = run([installed("loggp-knobs"), "set", "--o", "100us", "--scope", "kernel"], env=env)
    assert setting.returncode == 0 and "scope: kernel" in setting.stdout, setting.stderr
    folder = tmp_path / "prof"
    proc = run([installed("loggp"), "run", "-n", "2", "--profile", folder, "--",
                built("shim/tests/loggp-test-regions"), BEFORE, INSIDE, AFTER, "pcontrol"], timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "inside the kernel region only" in proc.stderr
    sender = json.loads((folder / "profile.0.json").read_text())["regions"]
    assert sender["scope"] == "kernel"
    assert sender["kernel"]["injected_ns"]["o_s"] == INSIDE * 100_000
    assert sender["outside"]["injected_ns"]["o_s"] == 0
    back = run([installed("loggp-knobs"), "set", "--scope", "all"], env=env)
    assert back.returncode == 0 and "scope: all" in back.stdout
    assert "scope" not in (tmp_path / "knobs").read_text()


def test_unscoped_knobs_apply_in_both_regions(tmp_path):
    _, (sender, _) = profile_of(tmp_path, "--o", "100us")
    assert sender["kernel"]["injected_ns"]["o_s"] == INSIDE * 100_000
    # outside, the program's messages only: MPI_Init's and MPI_Finalize's own carry no knobs
    assert sender["outside"]["injected_ns"]["o_s"] == (BEFORE + AFTER) * 100_000


def test_hint_refuses_unknown_keys_and_values(tmp_path):
    proc, _ = profile_of(tmp_path)
    assert "unknown_key=-1 bad_value=-1" in proc.stdout


def test_a_bad_scope_stops_mpi_init_naming_it():
    proc = run([installed("mpiexec"), "-n", "2", built("shim/tests/loggp-test-regions"), 1, 1, 1],
               env={"LD_PRELOAD": str(built("shim/libloggp.so")), "LOGGP_SCOPE": "solver"}, timeout=120)
    assert proc.returncode != 0 and "LOGGP_SCOPE=solver: expected all or kernel" in proc.stderr


def test_a_program_built_with_pkg_config_runs_without_the_apparatus(tmp_path):
    """loggp.h and libloggp-hint.so from the install, found by pkg-config: without
    libloggp.so the hint does nothing and answers 0."""
    prefix = sys.prefix
    pkg = shutil.which("pkg-config")
    if not pkg:
        pytest.skip("pkg-config is not installed (Debian: pkg-config, which ./setup.sh installs)")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run([pkg, "--cflags", "--libs", "loggp"], env=env, capture_output=True, text=True)
    assert flags.returncode == 0, flags.stderr
    source = tmp_path / "hint.c"
    source.write_text('#include <loggp.h>\n#include <stdio.h>\n'
                      'int main(void) { printf("%d %d\\n", loggp_hint("IN_KERNEL", "1"), loggp_hint("x", "y")); '
                      'return 0; }\n')
    exe = tmp_path / "hint"
    cc = subprocess.run(["cc", str(source), "-o", str(exe), *flags.stdout.split()], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    assert run([exe]).stdout.split() == ["0", "0"]
    # preloaded, the apparatus answers instead
    assert run([exe], env={"LD_PRELOAD": str(built("shim/libloggp.so"))}).stdout.split() == ["0", "-1"]


def test_armed_outside_runs_each_set_knob_at_its_smallest_step(tmp_path):
    """--outside armed: outside the kernel each knob set takes its delay path at 1 ns (the
    profile counts 1 ns per message there), inside it applies its value; a knob not set
    stays off outside too."""
    proc, (sender, receiver) = profile_of(tmp_path, "--scope", "kernel", "--outside", "armed", "--o", "100us")
    assert "outside it armed" in proc.stderr
    assert sender["scope"] == "kernel" and sender["outside_knobs"] == "armed"
    assert sender["kernel"]["injected_ns"]["o_s"] == INSIDE * 100_000
    # one ns per message of the program's outside (MPI_Init's and MPI_Finalize's own carry none)
    assert sender["outside"]["injected_ns"]["o_s"] == BEFORE + AFTER
    assert receiver["outside"]["injected_ns"]["o_r"] == BEFORE + AFTER
    assert sender["outside"]["injected_ns"]["g"] == 0 and sender["outside"]["injected_ns"]["L"] == 0


def test_zero_outside_is_the_default(tmp_path):
    _, (sender, _) = profile_of(tmp_path, "--scope", "kernel", "--o", "100us")
    assert sender["outside_knobs"] == "zero"
    assert sender["outside"]["injected_ns"]["o_s"] == 0


def test_armed_outside_needs_the_kernel_scope(tmp_path):
    proc = run([installed("loggp"), "run", "-n", "2", "--outside", "armed", "--o", "1us", "--",
                built("shim/tests/loggp-test-regions"), 1, 1, 1], timeout=60)
    assert proc.returncode == 2 and "--outside armed: only with --scope kernel" in proc.stderr


def test_a_bad_outside_stops_mpi_init_and_show_naming_it():
    proc = run([installed("mpiexec"), "-n", "2", built("shim/tests/loggp-test-regions"), 1, 1, 1],
               env={"LD_PRELOAD": str(built("shim/libloggp.so")), "LOGGP_SCOPE": "kernel", "LOGGP_OUTSIDE": "on"},
               timeout=120)
    assert proc.returncode != 0 and "LOGGP_OUTSIDE=on: expected zero or armed" in proc.stderr
    show = run([installed("loggp-knobs"), "show"], env={"LOGGP_OUTSIDE": "on"})
    assert show.returncode == 1 and "LOGGP_OUTSIDE=on: expected zero or armed" in show.stderr


def test_armed_steps_outside_are_not_jittered(tmp_path):
    """With o jitter, the armed step outside the region stays 1 ns a message (a draw around
    it would add up to the jitter's width there); inside, o is drawn as usual."""
    _, (sender, _) = profile_of(tmp_path, "--scope", "kernel", "--outside", "armed", "--o", "100us",
                                "--o-jitter", "normal:20us")
    assert BEFORE + AFTER <= sender["outside"]["injected_ns"]["o_s"] < 1000
    assert sender["kernel"]["injected_ns"]["o_s"] != INSIDE * 100_000  # drawn, not the set value each time


def test_show_says_what_the_knobs_leave_outside_the_region(tmp_path):
    env = {"LOGGP_KNOB_FILE": str(tmp_path / "knobs"), "LOGGP_SCOPE": "kernel", "LOGGP_OUTSIDE": "armed"}
    table = run([installed("loggp-knobs"), "show"], env=env)
    assert table.returncode == 0 and "outside the kernel region: armed (LOGGP_OUTSIDE)" in table.stdout
    assert json.loads(run([installed("loggp-knobs"), "show", "--json"], env=env).stdout)["outside"] == "armed"
    unscoped = run([installed("loggp-knobs"), "show"], env={**env, "LOGGP_SCOPE": "all"})
    assert "no effect while the scope is all" in unscoped.stdout
    zero = run([installed("loggp-knobs"), "show", "--json"], env={**env, "LOGGP_OUTSIDE": ""})
    assert json.loads(zero.stdout)["outside"] == "zero"
