"""`loggp trace export --otf2`: a hand-made trace in our format becomes an OTF2
archive that OTF2's own otf2-print reads, with Score-P's MPI events."""
import re
import shutil

import pytest

from loggp.analysis import trace_write
from loggp.analysis.trace_write import WORLD
from tests.testkit import installed, run

US = 1000


def p2p(**row):
    return {"comm_id": WORLD, "comm_size": 2, **row}


def done(call, at, **row):
    return {"call": call, "kind": 1, "start_ns": at[0], "end_ns": at[1], **row}


def program(rank):
    """Rank 0 and 1 exchange every kind of call the export writes events for."""
    other = 1 - rank
    t = lambda k: (k * 10 * US, k * 10 * US + 2 * US)
    rows = []
    if rank == 0:
        rows += [p2p(call="MPI_Send", start_ns=t(1)[0], end_ns=t(1)[1], peer=1, tag=3, bytes=800),
                 p2p(call="MPI_Isend", start_ns=t(2)[0], end_ns=t(2)[1], peer=1, tag=4, bytes=16, request=0x77),
                 {"call": "MPI_Wait", "start_ns": t(3)[0], "end_ns": t(3)[1]},
                 done("MPI_Wait", t(3), request=0x77, index=0)]
    else:
        rows += [p2p(call="MPI_Recv", start_ns=t(1)[0], end_ns=t(1)[1], peer=0, tag=3, bytes=800),
                 done("MPI_Recv", t(1), peer=0, tag=3, bytes=800),
                 p2p(call="MPI_Irecv", start_ns=t(2)[0], end_ns=t(2)[1], peer=-2, tag=-1, bytes=64, request=0x99),
                 {"call": "MPI_Waitall", "start_ns": t(3)[0], "end_ns": t(3)[1]},
                 done("MPI_Waitall", t(3), request=0x99, index=0, peer=0, tag=4, bytes=16)]
    rows += [p2p(call="MPI_Sendrecv", start_ns=t(4)[0], end_ns=t(4)[1], peer=other, tag=5, bytes=8),
             done("MPI_Sendrecv", t(4), peer=other, tag=5, bytes=8),
             p2p(call="MPI_Allreduce", start_ns=t(5)[0], end_ns=t(5)[1], bytes=8),
             p2p(call="MPI_Bcast", start_ns=t(6)[0], end_ns=t(6)[1], bytes=4096, peer=0),
             p2p(call="MPI_Ibarrier", start_ns=t(7)[0], end_ns=t(7)[1], request=0x55),
             {"call": "MPI_Wait", "start_ns": t(8)[0], "end_ns": t(8)[1]},
             done("MPI_Wait", t(8), request=0x55, index=0),
             {"call": "MPI_Send", "start_ns": t(9)[0], "end_ns": t(9)[1], "comm_id": 0x84000002, "comm_size": 1,
              "peer": 0, "tag": 1, "bytes": 8}]
    return trace_write.make(rank, 2, 0, 100 * US, rows)


@pytest.fixture
def archive(tmp_path):
    trace_write.write_folder(tmp_path / "tr", [program(0), program(1)])
    proc = run([installed("loggp"), "trace", "export", "--otf2", tmp_path / "tr", tmp_path / "out"])
    assert proc.returncode == 0, proc.stderr
    assert "MPI_Send x2" in proc.stdout  # each rank's send on a one-rank communicator: no MPI event
    return tmp_path / "out"


def otf2_print(*args):
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print is missing (Debian otf2-tools; ./setup.sh installs it)")
    proc = run(["otf2-print", *args])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def events(text):
    """[(event, location, timestamp, attributes)] of otf2-print's event lines."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$", line)
        if m:
            out.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


def test_otf2_print_reads_the_mpi_events(archive):
    assert sorted(p.name for p in archive.iterdir()) == ["traces", "traces.def", "traces.otf2"]
    got = events(otf2_print(archive / "traces.otf2"))
    rank0 = [(e, attrs) for e, loc, _, attrs in got if loc == 0]
    rank1 = [(e, attrs) for e, loc, _, attrs in got if loc == 1]
    kinds0 = [e for e, _ in rank0 if e not in ("ENTER", "LEAVE")]
    kinds1 = [e for e, _ in rank1 if e not in ("ENTER", "LEAVE")]
    assert kinds0 == ["MPI_SEND", "MPI_ISEND", "MPI_ISEND_COMPLETE", "MPI_SEND", "MPI_RECV",
                      "MPI_COLLECTIVE_BEGIN", "MPI_COLLECTIVE_END", "MPI_COLLECTIVE_BEGIN", "MPI_COLLECTIVE_END",
                      "NON_BLOCKING_COLLECTIVE_REQUEST", "NON_BLOCKING_COLLECTIVE_COMPLETE"]
    assert kinds1 == ["MPI_RECV", "MPI_IRECV_REQUEST", "MPI_IRECV"] + kinds0[3:]
    send = next(a for e, a in rank0 if e == "MPI_SEND")
    assert "Receiver: 1" in send and "Tag: 3" in send and "Length: 800" in send and "MPI_COMM_WORLD" in send
    irecv = dict(rank1)["MPI_IRECV"]
    assert "Sender: 0" in irecv and "Tag: 4" in irecv and "Length: 16" in irecv
    ends = [a for e, a in rank0 if e == "MPI_COLLECTIVE_END"]
    assert "ALLREDUCE" in ends[0] and "Sent: 16" in ends[0]           # Score-P's convention: n * 8 B
    assert "BCAST" in ends[1] and "Root: 0" in ends[1] and "Sent: 8192" in ends[1]
    entered = [a for e, a in rank0 if e == "ENTER"]
    assert [re.search(r'"(\w+)"', a).group(1) for a in entered] == [
        "MPI_Init", "MPI_Send", "MPI_Isend", "MPI_Wait", "MPI_Sendrecv", "MPI_Allreduce", "MPI_Bcast",
        "MPI_Ibarrier", "MPI_Wait", "MPI_Send", "MPI_Finalize"]
    stamps = [ts for e, loc, ts, _ in got if loc == 0 and e == "ENTER"]
    assert stamps[1] == 10 * US and stamps[-1] == 100 * US  # nanoseconds, as traced



def test_a_send_is_stamped_at_its_calls_start_and_a_receive_at_its_completion(archive):
    # as Score-P writes them: a message leaves when its send is called and has arrived when the
    # receive (or the wait that completes it) returns
    got = events(otf2_print(archive / "traces.otf2"))
    at = {(e, loc): ts for e, loc, ts, _ in reversed(got)}   # each event's first stamp on its rank
    assert at[("MPI_SEND", 0)] == 10 * US and at[("MPI_ISEND", 0)] == 20 * US
    assert at[("MPI_RECV", 1)] == 12 * US                     # MPI_Recv of 10..12 us
    assert at[("MPI_IRECV_REQUEST", 1)] == 20 * US and at[("MPI_IRECV", 1)] == 32 * US
    assert at[("MPI_ISEND_COMPLETE", 0)] == 32 * US

def test_the_definitions_say_the_clock_and_the_ranks(archive):
    text = otf2_print("-G", archive / "traces.otf2")
    assert "Ticks per Seconds: 1000000000," in text  # our clock's nanoseconds
    assert text.count("MPI Rank") >= 2 and "MPI_COMM_WORLD" in text


def test_an_existing_folder_is_refused(archive, tmp_path):
    proc = run([installed("loggp"), "trace", "export", "--otf2", tmp_path / "tr", archive])
    assert proc.returncode == 2 and "exists" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert not list(tmp_path.glob(".out.tmp*"))
