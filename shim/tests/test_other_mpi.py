"""libloggp.so under an MPI whose ABI it was not built for (Open MPI): the
program runs as if the library were absent, and one line per job says so,
instead of a crash in MPI_Init."""
import os
import shutil

import pytest

from tests.testkit import built, run

RING = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, token = -1, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &token, 1, MPI_INT, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d: token %d, sum %d\n", rank, size, token, sum);
    MPI_Finalize();
    return 0;
}
"""


def open_mpi():
    mpicc, mpirun = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")
    if not (mpicc and mpirun):
        pytest.skip("Open MPI is not installed (Debian: openmpi-bin libopenmpi-dev, which ./setup.sh installs)")
    return mpicc, mpirun


def test_open_mpi_program_runs_inert_with_one_refusal(tmp_path):
    mpicc, mpirun = open_mpi()
    (tmp_path / "ring.c").write_text(RING)
    run([mpicc, tmp_path / "ring.c", "-o", tmp_path / "ring"], check=True)
    profile = tmp_path / "profile"
    cmd = [mpirun, "--oversubscribe", "-np", "2",
           "-x", f"LD_PRELOAD={built('shim/libloggp.so')}",
           # knobs and a profile asked for: an inert library applies and writes none of them
           "-x", "LOGGP_OS=1us", "-x", f"LOGGP_PROFILE={profile}",
           tmp_path / "ring"]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")  # Open MPI refuses root without it
    proc = run(cmd, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["rank 0 of 2: token 1, sum 1", "rank 1 of 2: token 0, sum 1"]
    refusals = [line for line in proc.stderr.splitlines() if "loggp" in line]
    assert len(refusals) == 1, proc.stderr
    assert refusals[0].startswith("loggp: Open MPI v") and "not an MPICH-ABI MPI" in refusals[0]
    assert "loggp run" in refusals[0]
    assert not profile.exists()


def test_standard_abi_program_does_not_crash(tmp_path):
    # MPICH's libmpi_abi.so (MPI 5 standard ABI) has handles unlike the ones
    # this library was built with: whatever the library does with it, the
    # program must run, and the job says at most one line about it
    mpicc_abi = shutil.which("mpicc_abi")
    if not mpicc_abi:
        pytest.skip("the MPI has no mpicc_abi (MPI standard ABI compiler wrapper)")
    (tmp_path / "ring.c").write_text(RING)
    run([mpicc_abi, tmp_path / "ring.c", "-o", tmp_path / "ring"], check=True)
    proc = run([shutil.which("mpiexec"), "-n", "2", tmp_path / "ring"], timeout=120, cwd=tmp_path,
               env={"LD_PRELOAD": str(built("shim/libloggp.so"))})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["rank 0 of 2: token 1, sum 1", "rank 1 of 2: token 0, sum 1"]
    assert len([line for line in proc.stderr.splitlines() if "loggp" in line]) <= 1, proc.stderr
