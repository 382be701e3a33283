"""DIR/run.json beside a trace: how `loggp run --trace DIR` ran the program (its MPI,
the engine asked for, the libfabric provider, one host or several). The trace files'
headers say only the transport each rank used; `loggp predict` reads both to tell when
its default machine parameters (MPICH over libfabric's shm provider, one host) do not
describe the run."""
import json
from pathlib import Path

from loggp.knobs.files import write_text_atomic

NAME = "run.json"
SCHEMA = "loggp-trace-run/1"


def record(libmpi, open_mpi, engine, provider, one_host):
    """provider: FI_PROVIDER the ranks get (None: libfabric's own choice, or the PMPI engine);
    one_host: True, False, or None where the launch does not tell (a host file, srun, a template)."""
    return {"schema": SCHEMA, "libmpi": libmpi, "open_mpi": open_mpi, "engine": engine, "provider": provider,
            "one_host": one_host}


def write(folder, rec):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / NAME, json.dumps(rec, indent=1) + "\n")


def read(folder):
    """The folder's record, or None (a trace taken without `loggp run`, or unreadable)."""
    try:
        rec = json.loads(Path(folder, NAME).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("schema") == SCHEMA else None


def unlike_default(rec):
    """How the recorded run differs from the default machine, in words, or None."""
    if rec is None:
        return None
    ways = []
    if rec.get("open_mpi"):
        ways.append("under Open MPI")
    if rec.get("engine") == "pmpi":
        ways.append("with the PMPI fallback engine, over MPI's own transports")
    elif rec.get("provider") not in (None, "shm"):
        ways.append(f"over libfabric's {rec['provider']} provider")
    if rec.get("one_host") is False:
        ways.append("across several hosts")
    return ", ".join(ways) or None
