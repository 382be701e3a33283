"""`loggp run`'s launchers and per-pair flags say when they cannot do what was asked:
a template without {np}, --ranks-per-node alone, srun without a Slurm to talk to."""
import os

import pytest

from tests.testkit import installed, run

LOGGP = installed("loggp")


def loggp(*args, env=None):
    return run([LOGGP, *args], env=env)


def warnings(proc):
    return [line for line in proc.stderr.splitlines() if "warning" in line]


def test_a_template_without_np_is_warned_about_when_ranks_are_asked_for():
    proc = loggp("run", "-n", "2", "--launcher", "{program}", "--dry-run", "--", "/bin/true")
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc) == ["loggp run: warning: --launcher '{program}' has no {np}, so -n 2 does not reach it: "
                              "it starts as many ranks as it says itself (put {np} where it takes its rank count)"]
    for quiet in (["-n", "1", "--launcher", "{program}"], ["-n", "2", "--launcher", "sh -c 'echo {np}' {program}"]):
        proc = loggp("run", *quiet, "--dry-run", "--", "/bin/true")
        assert proc.returncode == 0 and warnings(proc) == [], proc.stderr


def test_ranks_per_node_alone_is_warned_about():
    proc = loggp("run", "-n", "2", "--ranks-per-node", "1", "--dry-run", "--", "/bin/true")
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc) == ["loggp run: warning: --ranks-per-node 1 has no effect without --L-inter or "
                              "--G-inter: ranks on other nodes get the same L and G"]
    proc = loggp("run", "-n", "2", "--ranks-per-node", "1", "--L-inter", "5us", "--dry-run", "--", "/bin/true")
    assert proc.returncode == 0 and warnings(proc) == [], proc.stderr
    # L between nodes from the environment: the flag is what places the nodes
    proc = loggp("run", "-n", "2", "--ranks-per-node", "1", "--dry-run", "--", "/bin/true",
                 env={"LOGGP_L_INTER": "5us"})
    assert proc.returncode == 0 and warnings(proc) == [], proc.stderr


@pytest.fixture
def fake_slurm(tmp_path):
    """A folder to be the whole PATH, and a way to put a fake Slurm command in it."""
    def put(name, script):
        path = tmp_path / name
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(0o755)
    return tmp_path, put


def test_srun_without_slurm_is_said_in_one_line(fake_slurm):
    folder, put = fake_slurm
    srun_run = ["run", "-n", "2", "--quiet", "--no-abi-swap", "--launcher", "srun", "--", "/bin/true"]
    proc = loggp(*srun_run, env={"PATH": str(folder)})
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["loggp run: --launcher srun: srun is not installed here (it is Slurm's "
                                        "client); run where Slurm is, or use --launcher mpiexec"]
    put("srun", "exit 0\n")
    put("scontrol", "echo 'scontrol: fatal: Could not establish a configuration source' >&2; exit 1\n")
    proc = loggp(*srun_run, env={"PATH": str(folder)})
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["loggp run: --launcher srun: Slurm does not answer here (scontrol ping: "
                                        "scontrol: fatal: Could not establish a configuration source); run inside "
                                        "a Slurm cluster, or use --launcher mpiexec"]
    put("scontrol", "echo 'Slurmctld(primary) at ctl is UP'\n")
    proc = loggp(*srun_run, env={"PATH": str(folder)})
    assert proc.returncode == 0, proc.stderr


HANDLER_LIBRARY = r"""
#include <signal.h>
#include <string.h>
static void ignore(int sig) { (void)sig; }
/* as MPI's transports do when a program loads them: a handler set from C at load time */
__attribute__((constructor)) static void install(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = ignore;
    sigaction(SIGUSR1, &a, 0);
}
"""


def test_a_signal_handler_a_preloaded_library_set_does_not_crash_the_run(tmp_path):
    # LD_PRELOAD reaches loggp itself too: Python cannot hand back a handler C code set
    source = tmp_path / "handler.c"
    source.write_text(HANDLER_LIBRARY)
    library = tmp_path / "handler.so"
    run([installed("mpicc"), "-shared", "-fPIC", "-o", library, source], check=True)
    proc = loggp("run", "-n", "1", "--quiet", "--", "/bin/true", env={"LD_PRELOAD": str(library)})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
