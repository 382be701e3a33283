"""The collective wrappers' generator: one wrapper per table row, calling PMPI
with the parameters' own names in order, and a clear refusal of a bad row."""
import re
import subprocess
import sys

from tests.testkit import ROOT

GENERATOR = ROOT / "shim/src/pmpi/gen_collectives.py"
TABLE = ROOT / "shim/src/pmpi/collectives.tbl"


def generate(table, out):
    return subprocess.run([sys.executable, GENERATOR, table, out], capture_output=True, text=True)


def test_each_row_becomes_a_wrapper_forwarding_its_parameters(tmp_path):
    table = tmp_path / "t.tbl"
    table.write_text("# comment\n"
                     "Alltoallw | const void *sendbuf, const int sendcounts[], MPI_Comm comm | 2 * 3\n"
                     "Barrier | MPI_Comm comm | 0\n")
    assert generate(table, tmp_path / "out").returncode == 0
    listing = (tmp_path / "out/collectives_list.h").read_text()
    assert "#define LOGGP_COLLECTIVES(X) X(Alltoallw) X(Barrier)\n" in listing
    code = (tmp_path / "out/collectives_gen.c").read_text()
    assert "int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], MPI_Comm comm)" in code
    assert code.count("return pmpi.Alltoallw(sendbuf, sendcounts, comm);") == 2
    assert "uint64_t bytes = (2 * 3);" in code
    assert "c->coll_bytes[LOGGP_FN_Alltoallw] += bytes;" in code
    # traced with the table's bytes; no root, no request
    assert "loggp_trace_call(TRACE_COLL(Alltoallw), t0, -1, -1, comm, bytes, 0);" in code
    assert "int MPI_Barrier(MPI_Comm comm)" in code


def test_the_shipped_table_names_each_collective_once(tmp_path):
    assert generate(TABLE, tmp_path).returncode == 0
    names = (tmp_path / "collectives_list.h").read_text().split("LOGGP_COLLECTIVES(X) ")[1].split("\n")[0].split()
    assert len(names) == len(set(names))
    assert {"X(Barrier)", "X(Allreduce)", "X(Ialltoallv)"} <= set(names)


def test_a_bad_row_is_refused_with_its_line(tmp_path):
    table = tmp_path / "bad.tbl"
    table.write_text("Barrier | MPI_Comm comm | 0\nBcast | void *buf, int count\n")
    proc = generate(table, tmp_path / "out")
    assert proc.returncode != 0
    assert "bad.tbl:2" in proc.stderr and "Bcast" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_the_layer_wraps_every_nonblocking_collective_the_replay_models(tmp_path):
    # an unwrapped one is not recorded at its post, and its Wait's completion then names a
    # request the trace never saw posted: the whole trace is refused
    from loggp.analysis.trace import NONBLOCKING_COLLECTIVES
    assert generate(TABLE, tmp_path).returncode == 0
    listing = (tmp_path / "collectives_list.h").read_text()
    wrapped = {"MPI_" + name for name in re.findall(r"X\((\w+)\)", listing)}
    modelled = {name for name in NONBLOCKING_COLLECTIVES if not name.startswith("MPI_Ineighbor")}
    assert modelled <= wrapped, sorted(modelled - wrapped)
