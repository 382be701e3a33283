"""libloggp.so under an MPI whose ABI it was not built for (Open MPI): the
PMPI layer never touches a handle (it crashed in MPI_Init once); without the
ofi MTL the program runs as if the library were absent, with one line saying
why; through the ofi MTL the libfabric layer serves it."""
import os
import shutil

import pytest

from tests.testkit import built, installed, run

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


def mpirun_command(mpirun, program, *options):
    cmd = [mpirun, "--oversubscribe", "-np", "2", *options, program]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")  # Open MPI refuses root without it
    return cmd


OFI_MTL = ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_exclude", "none",
           "-x", "FI_PROVIDER=tcp", "-x", "FI_TCP_IFACE=lo"]


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    mpicc, mpirun = open_mpi()
    folder = tmp_path_factory.mktemp("ring")
    (folder / "ring.c").write_text(RING)
    run([mpicc, folder / "ring.c", "-o", folder / "ring"], check=True)
    return mpirun, folder / "ring"


def ring_output_ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(proc.stdout.splitlines()) == ["rank 0 of 2: token 1, sum 1", "rank 1 of 2: token 0, sum 1"]


def test_open_mpi_without_libfabric_runs_inert_with_one_line(ring, tmp_path):
    mpirun, program = ring
    profile = tmp_path / "profile"
    # knobs and a profile asked for, but Open MPI's default path (ob1) never crosses libfabric
    proc = run(mpirun_command(mpirun, program, "-x", f"LD_PRELOAD={built('shim/libloggp.so')}",
                              "-x", "LOGGP_OS=1us", "-x", f"LOGGP_PROFILE={profile}"), timeout=120, cwd=tmp_path)
    ring_output_ok(proc)
    lines = [line for line in proc.stderr.splitlines() if "loggp" in line]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("loggp: Open MPI v") and "sent nothing through libfabric" in lines[0]
    assert "--mca pml cm --mca mtl ofi" in lines[0]
    assert not profile.exists()


def test_open_mpi_through_the_ofi_mtl_gets_the_libfabric_engine(ring, tmp_path):
    mpirun, program = ring
    proc = run(mpirun_command(mpirun, program, *OFI_MTL, "-x", f"LD_PRELOAD={built('shim/libloggp.so')}",
                              "-x", "LOGGP_OS=1us", "-x", "LOGGP_QUIET=0"), timeout=120, cwd=tmp_path)
    ring_output_ok(proc)
    lines = [line for line in proc.stderr.splitlines() if "loggp" in line]
    assert len(lines) == 2, proc.stderr
    assert "engine libfabric, provider tcp" in lines[0] and "o_s=1us(env)" in lines[0], lines
    assert "libloggp.so serves through libfabric only" in lines[1], lines


def test_the_hook_provider_alone_survives_open_mpi(ring, tmp_path):
    # Without the preload, libfabric loads the library as a hook provider and
    # may unload it again while its knob thread runs: it must stay mapped.
    mpirun, program = ring
    hooks = tmp_path / "loggp-fi"
    hooks.mkdir()
    (hooks / "libloggp-fi.so").symlink_to(built("shim/libloggp.so"))
    proc = run(mpirun_command(mpirun, program, *OFI_MTL, "-x", "FI_HOOK=loggp", "-x", f"FI_PROVIDER_PATH={hooks}",
                              "-x", "LOGGP_LATENCY=1us"), timeout=120, cwd=tmp_path)
    ring_output_ok(proc)


def test_libloggp_ompi_serves_open_mpi_and_refuses_mpich(ring, tmp_path):
    mpirun, program = ring
    profile = tmp_path / "profile"
    ompi_library = built("shim/libloggp-ompi.so")
    # Open MPI's default ob1 path: the fallback engine, with the profile
    proc = run(mpirun_command(mpirun, program, "-x", f"LD_PRELOAD={ompi_library}", "-x", "LOGGP_OS=1us",
                              "-x", f"LOGGP_PROFILE={profile}"), timeout=120, cwd=tmp_path)
    ring_output_ok(proc)
    assert "engine pmpi fallback" in proc.stderr and "o_s=1us(env)" in proc.stderr, proc.stderr
    assert sorted(p.name for p in profile.iterdir()) == ["profile.0.json", "profile.1.json"]
    # preloaded into an MPICH program by mistake: inert, one line naming both libraries
    (tmp_path / "ring.c").write_text(RING)
    run([installed("mpicc"), tmp_path / "ring.c", "-o", tmp_path / "ring-mpich"], check=True)
    proc = run([installed("mpiexec"), "-n", "2", tmp_path / "ring-mpich"], timeout=120, cwd=tmp_path,
               env={"LD_PRELOAD": str(ompi_library), "LOGGP_OS": "1us"})
    ring_output_ok(proc)
    lines = [line for line in proc.stderr.splitlines() if "loggp" in line]
    assert len(lines) == 1 and "is not Open MPI; libloggp-ompi.so runs inert" in lines[0], proc.stderr


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
