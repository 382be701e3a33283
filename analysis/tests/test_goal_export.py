"""`loggp trace export --goal`: hand-made traces (written in our format) become GOAL
schedules whose own critical path, computed here from the text (not by
LogGOPSim), is the program's; collectives carry the replay's MPICH schedules."""
import re
from collections import defaultdict, deque

import pytest

from loggp.analysis import schedules, trace_write
from loggp.analysis.trace_write import WORLD
from tests.testkit import installed, run

MS = 1_000_000
LABEL = r"[a-zA-Z][a-zA-Z0-9_]*"
OP = re.compile(rf"^({LABEL}): (?:calc (\d+)|send (\d+)b to (\d+) tag (\d+)|recv (\d+)b from (\d+) tag (\d+))$")
DEP = re.compile(rf"^({LABEL}) (requires|irequires) ({LABEL})$")


def parse_goal(text):
    """{rank: [(label, kind, number, peer, tag, [(dependency kind, label)])]} from GOAL text,
    checked against txt2bin's grammar: num_ranks first, rank blocks 0..N-1 in order,
    dependencies only on labels already defined in the block."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("//")]
    count = int(re.fullmatch(r"num_ranks (\d+)", lines[0]).group(1))
    ranks, rank, ops = {}, None, None
    for line in lines[1:]:
        if rank is None:
            rank = int(re.fullmatch(r"rank (\d+) \{", line).group(1))
            assert rank == len(ranks)
            ops, by_label = [], {}
        elif line == "}":
            ranks[rank], rank = ops, None
        elif m := OP.match(line):
            label = m.group(1)
            if m.group(2) is not None:
                op = (label, "calc", int(m.group(2)), None, None, [])
            elif m.group(3) is not None:
                op = (label, "send", int(m.group(3)), int(m.group(4)), int(m.group(5)), [])
            else:
                op = (label, "recv", int(m.group(6)), int(m.group(7)), int(m.group(8)), [])
            assert label not in by_label
            by_label[label] = op
            ops.append(op)
        else:
            m = DEP.match(line)
            assert m, f"not GOAL: {line!r}"
            assert m.group(1) in by_label and m.group(3) in by_label, line
            by_label[m.group(1)][5].append((m.group(2), m.group(3)))
    assert rank is None and sorted(ranks) == list(range(count))
    return ranks


def critical_path(ranks, L):
    """Earliest start and finish of every operation when messages take L and
    nothing else costs (o = g = G = 0), and the chain of operations that made the
    last finish: [(rank, kind, number)] from the start."""
    start, finish, why = {}, {}, {}
    sends, recvs = defaultdict(deque), {}
    for r, ops in ranks.items():
        for label, kind, _, peer, tag, _ in ops:
            if kind == "send":
                sends[(r, peer, tag)].append((r, label))
    for r, ops in ranks.items():  # matching: per (source, destination, tag), in order
        for label, kind, _, peer, tag, _ in ops:
            if kind == "recv":
                recvs[(r, label)] = sends[(peer, r, tag)].popleft()
    pending = [(r, op) for r, ops in ranks.items() for op in ops]
    while pending:
        left = []
        for r, op in pending:
            label, kind, number, _, _, deps = op
            needs = [(r, d) for _, d in deps] + ([recvs[(r, label)]] if kind == "recv" else [])
            if any(n not in start for n in needs) or any(d not in finish for k, d in
                                                           [(k, (r, x)) for k, x in deps] if k == "requires"):
                left.append((r, op))
                continue
            bound = [(0, None)] + [(finish[(r, d)] if k == "requires" else start[(r, d)], (r, d)) for k, d in deps]
            at, by = max(bound, key=lambda b: b[0])
            start[(r, label)] = at
            if kind == "calc":
                finish[(r, label)], why[(r, label)] = at + number, by
            elif kind == "send":
                finish[(r, label)], why[(r, label)] = at, by
            else:
                arrival = start[recvs[(r, label)]] + L
                finish[(r, label)], why[(r, label)] = max((at, by), (arrival, recvs[(r, label)]),
                                                          key=lambda b: b[0])
        assert len(left) < len(pending), "the schedule deadlocks"
        pending = left
    last = max(finish, key=finish.get)
    kinds = {(r, op[0]): (r, op[1], op[2]) for r, ops in ranks.items() for op in ops}
    path, node = [], last
    while node is not None:
        path.append(kinds[node])
        node = why[node]
    return finish[last], path[::-1]


def world(**row):
    return {"comm_id": WORLD, "comm_size": 3, **row}


def write_pipeline(folder):
    """Rank 0 computes 5 ms and sends to 1; rank 1 posts its receive, computes 4 ms
    (overlapping), waits, computes 2 ms and sends to 2; rank 2 computes 3 ms and
    receives, then computes 1 ms. Critical path: 5 + 2 + 1 ms and two messages."""
    r0 = [world(call="MPI_Send", start_ns=5 * MS, end_ns=5 * MS + 10_000, peer=1, tag=1, bytes=8)]
    r1 = [world(call="MPI_Irecv", start_ns=10_000, end_ns=20_000, peer=0, tag=1, bytes=8, request=0xA),
          {"call": "MPI_Wait", "start_ns": 4 * MS, "end_ns": 5 * MS + 100_000},
          {"call": "MPI_Wait", "kind": 1, "start_ns": 4 * MS, "end_ns": 5 * MS + 100_000, "peer": 0, "tag": 1,
           "bytes": 8, "request": 0xA, "index": 0},
          world(call="MPI_Send", start_ns=7 * MS + 100_000, end_ns=7 * MS + 110_000, peer=2, tag=2, bytes=64)]
    r2 = [world(call="MPI_Recv", start_ns=3 * MS, end_ns=7 * MS + 200_000, peer=1, tag=2, bytes=64),
          {"call": "MPI_Recv", "kind": 1, "start_ns": 3 * MS, "end_ns": 7 * MS + 200_000, "peer": 1, "tag": 2,
           "bytes": 64}]
    ends = [5 * MS + 10_000, 7 * MS + 110_000, 8 * MS + 200_000]
    trace_write.write_folder(folder, [trace_write.make(r, 3, 0, end, rows)
                                      for r, (rows, end) in enumerate(zip((r0, r1, r2), ends))])


def export(folder, out):
    proc = run([installed("loggp"), "trace", "export", "--goal", folder, out])
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


def test_the_schedule_carries_the_programs_critical_path(tmp_path):
    write_pipeline(tmp_path / "tr")
    ranks = parse_goal(export(tmp_path / "tr", tmp_path / "p.goal"))
    L = 1000
    length, path = critical_path(ranks, L)
    calcs = [(r, n) for r, kind, n in path if kind == "calc" and n > 0]
    assert calcs == [(0, 5 * MS), (1, 2 * MS), (2, 1 * MS)]
    assert [(r, kind) for r, kind, _ in path if kind != "calc"] == [(0, "send"), (1, "recv"), (1, "send"),
                                                                    (2, "recv")]
    # rank 1's 4 ms overlaps the message (its receive was posted before: irequires), rank 2's 3 ms too
    assert length == 8 * MS + 2 * L


def test_a_blocking_call_is_required_and_a_nonblocking_one_started(tmp_path):
    write_pipeline(tmp_path / "tr")
    ranks = parse_goal(export(tmp_path / "tr", tmp_path / "p.goal"))
    recv = next(op for op in ranks[1] if op[1] == "recv")
    after = [op for op in ranks[1] if ("irequires", recv[0]) in op[5]]
    assert len(after) == 1 and after[0][1] == "calc" and after[0][2] == 4 * MS - 20_000
    wait = next(op for op in ranks[1] if ("requires", recv[0]) in op[5])
    assert wait[1:3] == ("calc", 0)
    send = next(op for op in ranks[1] if op[1] == "send")
    # the next operation starts once the send has started; MPI_Send's own wait requires it done
    assert sorted(k for op in ranks[1] for k, d in op[5] if d == send[0]) == ["irequires", "requires"]


@pytest.mark.parametrize("size", [3, 4])
def test_collectives_are_the_replays_mpich_schedules(tmp_path, size):
    rows = lambda r: [{"call": "MPI_Allreduce", "start_ns": 100, "end_ns": 200, "comm_id": WORLD,
                       "comm_size": size, "bytes": 8},
                      {"call": "MPI_Bcast", "start_ns": 300, "end_ns": 400, "comm_id": WORLD, "comm_size": size,
                       "bytes": 64, "peer": 1},
                      {"call": "MPI_Barrier", "start_ns": 500, "end_ns": 600, "comm_id": WORLD, "comm_size": size}]
    trace_write.write_folder(tmp_path / "tr", [trace_write.make(r, size, 0, 1000, rows(r)) for r in range(size)])
    ranks = parse_goal(export(tmp_path / "tr", tmp_path / "c.goal"))
    for r in range(size):
        expected = [(op, peer, max(n, 1)) for name, n, root in (("Allreduce", 8, 0), ("Bcast", 64, 1),
                                                                  ("Barrier", 0, 0))
                    for rnd in schedules.schedule(name, r, size, n, root) for op, peer, n in rnd]
        got = [(kind, peer, n) for _, kind, n, peer, _, _ in ranks[r] if kind != "calc"]
        assert got == expected
    length, _ = critical_path(ranks, 1000)
    assert length > 0  # every message pairs up: the schedule runs to its end


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    proc = run([installed("loggp"), "trace", "export", "--goal", tmp_path / "none", tmp_path / "x.goal"])
    assert proc.returncode == 2 and "none: no such folder" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = run([installed("loggp"), "trace", "export", "--goal", tmp_path / "empty", tmp_path / "x.goal"])
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "no trace.<rank>.bin" in proc.stderr
    proc = run([installed("loggp"), "trace", "export", "--goal", tmp_path / "empty", tmp_path / "no" / "x.goal"])
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    assert not (tmp_path / "x.goal").exists()


def test_a_wait_on_several_requests_requires_every_one(tmp_path):
    # rank 0 posts receives from 1 (sent at 1 ms) and 2 (sent at 3 ms), waits for both, then
    # computes 1 ms: the path runs through the later message, 3 + 1 ms and one L
    r0 = [world(call="MPI_Irecv", start_ns=10_000, end_ns=20_000, peer=1, tag=1, bytes=8, request=0xA),
          world(call="MPI_Irecv", start_ns=20_000, end_ns=30_000, peer=2, tag=2, bytes=8, request=0xB),
          {"call": "MPI_Waitall", "start_ns": 40_000, "end_ns": 3 * MS + 50_000},
          {"call": "MPI_Waitall", "kind": 1, "start_ns": 40_000, "end_ns": 3 * MS + 50_000, "peer": 1, "tag": 1,
           "bytes": 8, "request": 0xA, "index": 0},
          {"call": "MPI_Waitall", "kind": 1, "start_ns": 40_000, "end_ns": 3 * MS + 50_000, "peer": 2, "tag": 2,
           "bytes": 8, "request": 0xB, "index": 1}]
    r1 = [world(call="MPI_Send", start_ns=1 * MS, end_ns=1 * MS + 10_000, peer=0, tag=1, bytes=8)]
    r2 = [world(call="MPI_Send", start_ns=3 * MS, end_ns=3 * MS + 10_000, peer=0, tag=2, bytes=8)]
    ends = [4 * MS + 50_000, 1 * MS + 10_000, 3 * MS + 10_000]
    trace_write.write_folder(tmp_path / "tr", [trace_write.make(r, 3, 0, end, rows)
                                               for r, (rows, end) in enumerate(zip((r0, r1, r2), ends))])
    ranks = parse_goal(export(tmp_path / "tr", tmp_path / "w.goal"))
    recvs = [op[0] for op in ranks[0] if op[1] == "recv"]
    wait = next(op for op in ranks[0] if op[1] == "calc" and ("requires", recvs[0]) in op[5])
    assert sorted(d for k, d in wait[5] if k == "requires" and d in recvs) == sorted(recvs)
    length, _ = critical_path(ranks, 1000)
    assert length == 4 * MS + 1000


def test_two_tags_between_one_pair_keep_their_own_messages(tmp_path):
    # rank 0 sends 8 B on tag 1 then 64 B on tag 2; rank 1 receives tag 2 first (both eager)
    r0 = [world(call="MPI_Send", start_ns=1000, end_ns=2000, peer=1, tag=1, bytes=8, comm_size=2),
          world(call="MPI_Send", start_ns=3000, end_ns=4000, peer=1, tag=2, bytes=64, comm_size=2)]
    r1 = [world(call="MPI_Recv", start_ns=1000, end_ns=5000, peer=0, tag=2, bytes=64, comm_size=2),
          {"call": "MPI_Recv", "kind": 1, "start_ns": 1000, "end_ns": 5000, "peer": 0, "tag": 2, "bytes": 64},
          world(call="MPI_Recv", start_ns=6000, end_ns=7000, peer=0, tag=1, bytes=8, comm_size=2),
          {"call": "MPI_Recv", "kind": 1, "start_ns": 6000, "end_ns": 7000, "peer": 0, "tag": 1, "bytes": 8}]
    trace_write.write_folder(tmp_path / "tr", [trace_write.make(r, 2, 0, end, rows)
                                               for r, (rows, end) in enumerate(zip((r0, r1), (5000, 8000)))])
    ranks = parse_goal(export(tmp_path / "tr", tmp_path / "t.goal"))
    tag_of_size = {n: tag for _, kind, n, _, tag, _ in ranks[0] if kind == "send"}
    assert len(set(tag_of_size.values())) == 2
    for _, kind, n, _, tag, _ in ranks[1]:
        if kind == "recv":
            assert tag == tag_of_size[n]
