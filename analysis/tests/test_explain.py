"""`loggp explain` on hand-made traces whose answer is known: a setting's trace made of the
baseline's with exactly what the replay predicts added to each call, plus a known extra on
one class of call (or on the computation before it); the tool must put the extra there and
nowhere else. Also: the classes calls fall in, the reference replay's timeline, bad input."""
import numpy as np
import pytest

from loggp.analysis import explain, loggops, replay, trace, trace_write
from loggp.analysis.loggops import Params
from tests.testkit import installed, run

WORLD = trace_write.WORLD
M = Params(o_s=100.0, o_r=200.0, g=50.0, G=0.01, L=1000.0, S=4096)
DELTA = {"L": 5000.0}
INIT = 1_000_000
BIG = 65536   # bytes: a rendezvous message (> S)


class Rank:
    """One rank's rows for trace_write.make; after: computation before the call, took: its length."""

    def __init__(self, me, size=2):
        self.me, self.size, self.clock, self.rows = me, size, INIT, []

    def call(self, name, peer=-1, nbytes=0, tag=0, request=0, after=1000, took=500, done=(), comm_size=None):
        start = self.clock + after
        self.clock = end = start + took
        self.rows.append({"call": name, "start_ns": start, "end_ns": end, "peer": peer, "tag": tag,
                          "bytes": nbytes, "request": request, "comm_id": WORLD,
                          "comm_size": self.size if comm_size is None else comm_size})
        for k, (handle, status) in enumerate(done):  # status: (source, tag, bytes) of a receive, or None
            src, t, b = status or (-1, -1, 0)
            self.rows.append({"call": name, "start_ns": start, "end_ns": end, "kind": trace.COMPLETE,
                              "request": handle, "peer": src, "tag": t, "bytes": b, "index": k})
        return self

    def trace(self):
        return trace_write.make(self.me, self.size, INIT, self.clock + 2000, self.rows)


def exchange(rounds=3):
    """Two ranks: an eager message 0 -> 1, a rendezvous one back, a message rank 0 sends itself,
    an allreduce; rounds times."""
    r0, r1 = Rank(0), Rank(1)
    for k in range(rounds):
        r0.call("MPI_Send", 1, 8, after=3000)
        r0.call("MPI_Recv", 1, BIG, done=[(0, (1, 0, BIG))])
        r0.call("MPI_Isend", 0, 8, tag=7, request=0x100 + k)
        r0.call("MPI_Recv", 0, 8, tag=7, done=[(0, (0, 7, 8))])
        r0.call("MPI_Wait", done=[(0x100 + k, None)])
        r0.call("MPI_Allreduce", 0, 8, took=800)
        r1.call("MPI_Recv", 0, 8, done=[(0, (0, 0, 8))], after=1500)
        r1.call("MPI_Send", 0, BIG, took=3000)
        r1.call("MPI_Allreduce", 0, 8, after=9000, took=800)
    return [r0.trace(), r1.trace()]


def predicted_intervals(traces, params):
    """Per rank, each call's predicted interval: the reference replay's per-rank clock after each
    operation, read at the last operation of each call."""
    programs = replay.build(traces)
    stamps = []
    loggops.simulate_reference(programs.programs, params, timeline=stamps)
    out = []
    for me, t in enumerate(traces):
        count = int((t.records["kind"] == trace.CALL).sum())
        out.append(explain.intervals(explain.predicted_ends(programs.calls[me], stamps[me], count)))
    return out


def with_added(traces, added, computation=None):
    """The traces with added[rank][i] ns more in call i (and computation[rank][i] more before it)."""
    out = []
    for me, t in enumerate(traces):
        recs = t.records.copy()
        calls = np.flatnonzero(recs["kind"] == trace.CALL)
        shift = 0.0
        for i, at in enumerate(calls):
            before = computation[me][i] if computation else 0.0
            shift += before
            start = recs[at]["start_ns"] + shift
            took = float(recs[at]["end_ns"] - recs[at]["start_ns"]) + added[me][i]
            assert took >= 0, "a hand-made call cannot end before it starts"
            shift += added[me][i]
            end = start + took
            following = at + 1
            while following < len(recs) and recs[following]["kind"] == trace.COMPLETE:
                following += 1
            recs["start_ns"][at:following] = int(round(start))
            recs["end_ns"][at:following] = int(round(end))
        out.append(trace.Trace(path=t.path, rank=t.rank, size=t.size, init_ns=t.init_ns,
                               finalize_ns=int(round(t.finalize_ns + shift)), clock_offset_ns=0, names=t.names,
                               records=recs, records_offset=t.records_offset))
    return out


def setting_trace(base, extra_on=None, extra=0.0, computation_on=None):
    """The setting's trace: each call's interval grows by what the replay predicts, plus extra
    ns in each call of class extra_on (or, computation_on a rank, extra ns more computation
    before each of its calls, on top of the prediction)."""
    at_base, at_setting = predicted_intervals(base, M), predicted_intervals(base, M.plus(**DELTA))
    added, computation = [], []
    for me, t in enumerate(base):
        classes = [c for c, _ in explain.classify(t, M.S)]
        grow = at_setting[me] - at_base[me]
        added.append([g + (extra if c == extra_on else 0.0) for g, c in zip(grow, classes)])
        computation.append([extra if me == computation_on else 0.0 for _ in classes])
    return with_added(base, added, computation)


def test_the_timeline_ends_where_the_replay_ends_and_changes_no_result():
    programs = replay.build(exchange()).programs
    for params in (M, M.plus(**DELTA)):
        plain = loggops.simulate_reference(programs, params)
        stamps = ["left over"]
        timed = loggops.simulate_reference(programs, params, timeline=stamps)
        assert timed == plain
        assert [len(s) for s in stamps] == [len(p) for p in programs]
        assert [s[-1] for s in stamps] == pytest.approx(plain.end_ns)
        assert all(np.all(np.diff(s) >= 0) for s in stamps), "a rank's clock never goes back"
        assert plain.end_ns == pytest.approx(loggops.simulate(programs, params).end_ns)


def test_a_call_ends_at_its_last_operation_or_where_the_one_before_ended():
    calls = [("MPI_Send", 1), ("MPI_Send", 1), ("MPI_Recv", 2), ("MPI_Barrier", 4), ("MPI_Finalize", 5)]
    stamps = [10.0, 30.0, 70.0, 100.0, 150.0]
    ends = explain.predicted_ends(calls, stamps, 4)
    assert ends.tolist() == [30.0, 70.0, 70.0, 100.0]  # call 3 has no operation: it ends where call 2 did
    assert explain.intervals(ends).tolist() == [30.0, 40.0, 0.0, 30.0]
    assert explain.predicted_ends([("MPI_Comm_rank", 2)], [5.0], 2).tolist() == [0.0, 5.0]


def test_calls_fall_in_their_class():
    r0 = Rank(0, size=3)
    r0.call("MPI_Send", 0, 8)                                          # to itself
    r0.call("MPI_Send", 1, 4096)                                       # S bytes: still eager
    r0.call("MPI_Send", 1, 4097)                                       # one more: rendezvous
    r0.call("MPI_Send", 1, BIG, comm_size=2)                           # another communicator
    r0.call("MPI_Recv", -2, BIG, done=[(0, (2, 0, 16))])               # any source: as received
    r0.call("MPI_Isend", 2, BIG, request=0x9)
    r0.call("MPI_Irecv", 2, 8, request=0xa)
    r0.call("MPI_Waitall", done=[(0x9, None), (0xa, (2, 0, 8))])       # a rendezvous send and an eager receive
    r0.call("MPI_Isend", 2, BIG, request=0x9)
    r0.call("MPI_Wait", done=[(0x9, None)])
    r0.call("MPI_Test")                                                 # completed nothing
    r0.call("MPI_Bcast", 0, BIG)
    r0.call("MPI_Send_init", 1, BIG, request=0xb)
    r0.call("MPI_Start", request=0xb)
    got = explain.classify(r0.trace(), 4096)
    assert got == [(("MPI_Send", "self"), 8), (("MPI_Send", "eager"), 4096), (("MPI_Send", "rendezvous"), 4097),
                   (("MPI_Send", "rendezvous"), BIG), (("MPI_Recv", "eager"), 16),
                   (("MPI_Isend", "rendezvous"), BIG), (("MPI_Irecv", "eager"), 8),
                   (("MPI_Waitall", explain.MIXED), BIG), (("MPI_Isend", "rendezvous"), BIG),
                   (("MPI_Wait", "rendezvous"), BIG), (("MPI_Test", explain.NO_PEER), 0),
                   (("MPI_Bcast", explain.COLLECTIVE), BIG), (("MPI_Send_init", "rendezvous"), BIG),
                   (("MPI_Start", "rendezvous"), BIG)]


def test_a_wait_completing_the_traces_very_first_call_takes_its_message():
    # the post a completion pairs with may be record 0: a program's first MPI call is often its Irecv
    r0 = Rank(0)
    r0.call("MPI_Irecv", 1, BIG, request=0x9)
    r0.call("MPI_Isend", 1, 8, request=0xa)
    r0.call("MPI_Wait", done=[(0x9, (1, 0, BIG))])
    r0.call("MPI_Wait", done=[(0xa, None)])
    assert explain.classify(r0.trace(), 4096) == [
        (("MPI_Irecv", "rendezvous"), BIG), (("MPI_Isend", "eager"), 8),
        (("MPI_Wait", "rendezvous"), BIG), (("MPI_Wait", "eager"), 8)]


def test_a_message_to_oneself_is_told_by_the_communicators_members():
    # a split with reversed keys (its rank 1 is world rank 0) and one whose members are not listed
    reversed_comm, unknown = 0x20000021, 0x20000022
    rows = [{"call": "MPI_Send", "start_ns": INIT + k * 1000, "end_ns": INIT + k * 1000 + 10, "peer": peer,
             "bytes": 8, "tag": 0, "comm_id": comm, "comm_size": 2}
            for k, (peer, comm) in enumerate([(1, reversed_comm), (0, reversed_comm), (0, unknown), (0, WORLD)])]
    t = trace_write.make(0, 2, INIT, INIT + 9000, rows, comms={reversed_comm: (1, 0)})
    assert [kind for (_, kind), _ in explain.classify(t, 4096)] == ["self", "eager", "self", "self"]
    t = trace_write.make(0, 3, INIT, INIT + 9000, [dict(r, comm_id=unknown) for r in rows])
    assert [kind for (_, kind), _ in explain.classify(t, 4096)] == ["eager"] * 4  # not mapped: never itself


def test_a_setting_the_replay_predicts_exactly_leaves_nothing_to_explain():
    base = exchange()
    ex = explain.explain(base, setting_trace(base), M, DELTA)
    assert ex.totals.predicted_ns > 3 * 5000, "the setting adds L to every round"
    assert all(abs(r.gap_ns) < 5 for r in ex.classes), ex.classes  # the traces' whole-ns rounding
    assert ex.totals.emulated_ns == pytest.approx(ex.totals.predicted_ns, abs=30)


@pytest.mark.parametrize("cls", [("MPI_Recv", "rendezvous"), ("MPI_Recv", "self"), ("MPI_Allreduce", "collective"),
                                 ("MPI_Send", "eager")])
def test_an_extra_on_one_class_is_put_on_that_class(cls):
    base = exchange()
    ex = explain.explain(base, setting_trace(base, extra_on=cls, extra=7000.0), M, DELTA, top=3)
    count = sum(c == cls for t in base for c, _ in explain.classify(t, M.S))
    first, rest = ex.classes[0], ex.classes[1:]
    assert (first.name, first.kind) == cls and first.calls == count
    assert first.gap_ns == pytest.approx(count * 7000.0, abs=10)
    assert all(abs(r.gap_ns) < 5 for r in rest), rest
    assert ex.totals.gap_ns == pytest.approx(count * 7000.0, abs=30)
    assert len(ex.worst) == 3 and all((r.name, r.kind) == cls for r in ex.worst)
    assert all(r.gap_ns == pytest.approx(7000.0, abs=5) for r in ex.worst)
    # the extra was inside the calls: no rank's computation changed
    assert all(abs(r.computation_ns) < 5 for r in ex.ranks), ex.ranks


def test_more_computation_on_one_rank_is_said_as_computation():
    base = exchange()
    ex = explain.explain(base, setting_trace(base, computation_on=1, extra=2000.0), M, DELTA)
    calls = int((base[1].records["kind"] == trace.CALL).sum())
    r0, r1 = ex.ranks
    assert r1.computation_ns == pytest.approx(calls * 2000.0, abs=10)
    assert abs(r0.computation_ns) < 5
    assert r1.emulated_ns == pytest.approx(r1.in_calls_ns + r1.computation_ns)
    assert r1.predicted_ns == pytest.approx(r0.predicted_ns, abs=10_000)  # the replay keeps computation
    assert ex.totals.gap_ns == pytest.approx(calls * 2000.0, abs=30)
    # each class on rank 1 got 2 us before each of its calls, outside the call
    rank1 = {c for c, _ in explain.classify(base[1], M.S)}
    outside = sum(c.emulated_ns - c.in_call_ns for c in ex.classes if (c.name, c.kind) in rank1)
    assert outside == pytest.approx(calls * 2000.0, abs=30)


def test_classes_sum_over_ranks_and_the_worst_calls_come_from_every_rank():
    def calls(rank, classes, emulated, in_call, predicted):
        zero = np.zeros(len(classes))
        return explain.RankCalls(rank, classes, [8] * len(classes), zero, np.array(emulated, dtype="f8"), zero,
                                 np.array(in_call, dtype="f8"), zero, np.array(predicted, dtype="f8"))
    send, wait = ("MPI_Send", "eager"), ("MPI_Wait", "rendezvous")
    classes, totals, worst = explain.aggregate([
        calls(0, [send, wait, send], [10, 50, 30], [4, 50, 30], [10, 20, 30]),
        calls(1, [wait, send], [100, 5], [100, 5], [0, 5])], top=2)
    assert [(c.name, c.kind, c.calls, c.emulated_ns, c.in_call_ns, c.predicted_ns) for c in classes] == [
        ("MPI_Wait", "rendezvous", 2, 150.0, 150.0, 20.0), ("MPI_Send", "eager", 3, 45.0, 39.0, 45.0)]
    assert (totals.calls, totals.emulated_ns, totals.in_call_ns, totals.predicted_ns) == (5, 195.0, 189.0, 65.0)
    assert [(c.rank, c.number, c.gap_ns) for c in worst] == [(1, 1, 100.0), (0, 2, 30.0)]


def test_traces_of_different_calls_are_refused_naming_the_rank():
    base = exchange()
    other = exchange(rounds=2)
    with pytest.raises(explain.ExplainError, match="rank 0: the baseline trace has 18 calls, the setting's 12"):
        explain.explain(base, [other[0], base[1]], M, DELTA)
    swapped = exchange()
    swapped[1].records["call"][0] = swapped[1].names.index("MPI_Send")
    with pytest.raises(explain.ExplainError, match="rank 1: call 1 is MPI_Recv in the baseline trace, MPI_Send"):
        explain.check_alike(base, swapped)
    with pytest.raises(explain.ExplainError, match="the baseline trace has 2 ranks, the setting's 1"):
        explain.check_alike(base, base[:1])


def test_the_report_shows_the_class_that_differs_first():
    base = exchange()
    text = explain.report(explain.explain(base, setting_trace(base, ("MPI_Send", "eager"), 7000.0), M, DELTA),
                          "--L 5us")
    table = [line for line in text.splitlines() if line.startswith("| MPI_")]
    assert table[0].startswith("| MPI_Send | eager | 3 | ") and table[0].endswith("| +21.0 |")
    assert "| all calls | | 27 |" in text


def loggp(*args):
    return run([installed("loggp"), "explain", *map(str, args)])


def test_the_command_explains_two_trace_folders(tmp_path):
    base = exchange()
    trace_write.write_folder(tmp_path / "base", base)
    trace_write.write_folder(tmp_path / "setting", setting_trace(base, ("MPI_Recv", "rendezvous"), 7000.0))
    machine = tmp_path / "probe.json"
    machine.write_text('{"schema": "loggp-probe/1", "summary": {"o_s_us": 0.1, "o_r_us": 0.2, "g_us": 0.05, '
                       '"G_ns_per_byte": 0.01, "L_us": 1, "protocol_switch_bytes": 8192}, '
                       '"sizes": [{"bytes": 4096}, {"bytes": 8192}]}')
    proc = loggp(tmp_path / "base", tmp_path / "setting", "--L", "5us", "--machine", machine, "--top", "2")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| MPI_")]
    assert rows[0].startswith("| MPI_Recv | rendezvous | 3 |") and rows[0].endswith("| +21.0 |"), proc.stdout
    assert proc.stdout.count("| 0 | ") >= 3  # rank 0's row and its listed calls


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    base = exchange()
    trace_write.write_folder(tmp_path / "base", base)
    trace_write.write_folder(tmp_path / "short", exchange(rounds=2))
    for args, said in (
            ([tmp_path / "base", tmp_path / "none", "--L", "5us"], "none: no such folder"),
            ([tmp_path / "base", tmp_path / "base"], "no knob given"),
            ([tmp_path / "base", tmp_path / "base", "--L", "5us", "--L", "6us"], "--L is given twice"),
            ([tmp_path / "base", tmp_path / "short", "--L", "5us"],
             "rank 0: the baseline trace has 18 calls, the setting's 12"),
            ([tmp_path / "base", tmp_path, "--L", "5us"], "no trace.<rank>.bin files"),
            ([tmp_path / "base", tmp_path / "base", "--L", "5"], "--L")):
        proc = loggp(*args)
        assert proc.returncode == 2 and said in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and not proc.stdout
