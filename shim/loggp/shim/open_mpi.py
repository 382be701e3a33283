"""`loggp run` for a program linked against Open MPI: its own mpirun, with the
ofi MTL (`--mca pml cm --mca mtl ofi`), so that its messages cross libfabric
and the libfabric layer serves it; the preloaded library is libloggp-ompi.so
(the PMPI layer built against Open MPI's mpi.h) where the build made one.
Open MPI 4.1's ofi MTL does not take libfabric's shm provider, so one host
uses tcp over loopback."""
import os
import shutil
from pathlib import Path

from loggp.knobs.command import EXIT_USAGE, CommandError

MPIRUN_NAMES = ("mpirun.openmpi", "orterun", "mpirun")
LIBRARY = "libloggp-ompi.so"


def find_mpirun(path_env=None):
    """Open MPI's mpirun: Debian names it mpirun.openmpi; elsewhere an mpirun
    that is Open MPI's (orterun, or an mpirun beside ompi_info)."""
    for name in MPIRUN_NAMES:
        found = shutil.which(name, path=path_env)
        if not found:
            continue
        if name != "mpirun" or shutil.which("ompi_info", path=str(Path(found).parent)):
            return found
    raise CommandError("the program is linked against Open MPI, but Open MPI's mpirun is not on PATH "
                       "(Debian: apt-get install openmpi-bin)", exit_code=EXIT_USAGE)


def command(np, program, hostfile, exported, path_env=None, ofi=True):
    """mpirun, with the ofi MTL unless the fallback engine is wanted (ofi=False);
    every variable loggp sets is exported to the ranks (-x), as Open MPI passes
    no environment to other hosts by itself."""
    cmd = [find_mpirun(path_env), "-np", str(np)]
    if ofi:
        # its default excludes shm and tcp: the provider is chosen by FI_PROVIDER
        cmd += ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_exclude", "none"]
    if hostfile:
        cmd += ["--hostfile", hostfile]
    else:
        cmd.append("--oversubscribe")  # as mpiexec: more ranks than cores share them
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for name in sorted(exported):
        cmd += ["-x", name]
    return cmd + list(program)
