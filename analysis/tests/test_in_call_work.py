"""The replay with the calls' own time it leaves out put back as CPU work
(loggp.analysis.in_call_work): where the work goes decides whether the flights overlap it."""
import numpy as np
import pytest

from loggp.analysis import in_call_work as icw
from loggp.analysis import replay, trace_write
from loggp.analysis.loggops import Params

M = Params(o_s=100.0, o_r=200.0, g=50.0, G=0.01, L=1000.0, S=4096)
DELTA = {"L": 5000.0}
INIT = 1_000_000
BIG = 1 << 20   # bytes a peer: a rendezvous message (> S)


def row(name, start, took, nbytes=0, peer=0):
    return {"call": name, "start_ns": start, "end_ns": start + took, "peer": peer, "tag": 0, "bytes": nbytes,
            "request": 0, "comm_id": trace_write.WORLD, "comm_size": 2}


def traces(took, rounds=2):
    """Two ranks: rounds of 10 us computation, then an alltoall of BIG bytes a peer that took `took` ns."""
    out = []
    for me in range(2):
        rows, clock = [], INIT
        for _ in range(rounds):
            rows.append(row("MPI_Alltoall", clock + 10_000, took, BIG))
            clock += 10_000 + took
        out.append(trace_write.make(me, 2, INIT, clock + 1000, rows))
    return out


def test_a_calls_unexplained_time_is_its_traced_length_less_the_replays():
    start = np.array([1000.0, 5000.0, 9000.0])
    end = np.array([3000.0, 8000.0, 9500.0])          # traced: 2000, 3000, 500 in the calls
    predicted = np.array([1500.0, 4000.0, 5100.0])    # replayed: 500, 500 (after 2000 computation), 100
    assert list(icw.unexplained_ns(start, end, predicted)) == [1500.0, 2500.0, 400.0]
    # a call the replay makes longer than traced has nothing left out, not a negative share
    assert list(icw.unexplained_ns([0.0], [100.0], [300.0])) == [0.0]


def test_work_goes_before_a_calls_posts_or_before_its_first_wait():
    program = [("calc", 5.0), ("isend", 1, "k", 8, "a"), ("irecv", 1, "k", 8, "b"), ("wait", ("a", "b")),
               ("isend", 1, "k", 8, "c")]
    calls = [("MPI_Foo", 1), ("MPI_Alltoall", 2), ("MPI_Alltoall", 2), ("MPI_Alltoall", 2), ("MPI_Isend", 3)]
    before, before_calls = icw.with_work(program, calls, {2: 70.0}, icw.BEFORE_POSTS)
    assert before == [program[0], ("calc", 70.0), *program[1:]]
    assert before_calls == [calls[0], ("MPI_Alltoall", 2), *calls[1:]]
    at_wait, _ = icw.with_work(program, calls, {2: 70.0}, icw.BEFORE_WAIT)
    assert at_wait == [*program[:3], ("calc", 70.0), *program[3:]]
    # a call without a wait takes its work at its end; one given none, or left out, is as it was
    no_wait, _ = icw.with_work(program, calls, {3: 9.0}, icw.BEFORE_WAIT)
    assert no_wait == [*program, ("calc", 9.0)]
    assert icw.with_work(program, calls, {2: 0.0}, icw.BEFORE_WAIT)[0] == program
    assert icw.with_work(program, calls, {2: 70.0}, icw.LEFT_OUT)[0] == program
    with pytest.raises(icw.InCallWorkError, match="'after'"):
        icw.with_work(program, calls, {2: 70.0}, "after")


def test_work_before_the_first_wait_hides_the_flights_and_before_the_posts_does_not():
    # 200 us in each alltoall, far more than its three flights even at L + 5 us
    b = icw.bracket(traces(took=200_000), M, DELTA, {"MPI_Alltoall"})
    left_len, left_added = b[icw.LEFT_OUT]
    posts_len, posts_added = b[icw.BEFORE_POSTS]
    wait_len, wait_added = b[icw.BEFORE_WAIT]
    assert left_added == pytest.approx(2 * 3 * DELTA["L"], rel=0.02)   # two rounds of three flights
    assert posts_added == pytest.approx(left_added, rel=1e-9)
    assert wait_added == pytest.approx(0.0, abs=1.0)
    # with the work back, the replay is as long as the traced run, give or take the model's own time
    traced = 2 * (10_000 + 200_000)
    assert posts_len == pytest.approx(traced, rel=0.05) and left_len < traced / 2
    assert wait_len == pytest.approx(posts_len - 2 * (left_len / 2 - 10_000), rel=0.05)


def test_a_call_absent_from_the_trace_is_an_error():
    with pytest.raises(icw.InCallWorkError, match="MPI_Alltoallv"):
        icw.bracket(traces(took=200_000), M, DELTA, {"MPI_Alltoallv"})


@pytest.mark.parametrize("argv,named", [
    (["--calls", "MPI_Alltoall", "--L", "1ms"], "required"),
    (["DIR", "--calls", "Alltoall", "--L", "1ms"], "'Alltoall'"),
    (["DIR", "--calls", "MPI_Alltoall", "--L", "1parsec"], "1parsec"),
    (["DIR", "--calls", "MPI_Alltoall"], "no setting"),
    (["nowhere", "--calls", "MPI_Alltoall", "--L", "1ms"], "nowhere: no such folder"),
])
def test_bad_input_is_named_and_exits_2(argv, named, tmp_path, capsys):
    argv = [str(tmp_path) if a == "DIR" else a for a in argv]
    if named == "required":  # argparse's own refusal
        with pytest.raises(SystemExit) as exited:
            icw.main(argv)
        code = exited.value.code
    else:
        code = icw.main(argv)
    assert code == 2 and named in capsys.readouterr().err


def test_the_command_prints_each_trace_and_the_medians(tmp_path, capsys):
    folder = tmp_path / "run"
    trace_write.write_folder(folder, traces(took=200_000))
    assert icw.main([str(folder), "--calls", "MPI_Alltoall", "--L", "5us"]) == 0
    out = capsys.readouterr().out
    assert f"| {folder} | 0.4 |" in out
    assert "Median added: left out +0.03, before the posts +0.03, before the first wait +0.00." in out
