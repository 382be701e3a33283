"""The collective-flights bench's own arithmetic and refusals (no MPI run here: its
measured column is a functional check for a quiet machine, docs/predict.md)."""
import pytest

from loggp.analysis import collective_flights as cf
from loggp.analysis.loggops import Params

L = 200000.0
QUIET = Params(L=L, **cf.QUIET)


@pytest.mark.parametrize("name, size, nbytes, flights", [
    ("Allreduce", 2, 8, 1), ("Allreduce", 2, 16, 2),   # measured 1.02 and 2.03 L a call
    ("Allreduce", 3, 8, 2), ("Allreduce", 3, 16, 4),   # measured 2.07 and 4.12
    ("Allreduce", 4, 24, 2), ("Allreduce", 4, 32, 4)])
def test_a_loop_of_allreduces_replays_to_its_flights_a_call(name, size, nbytes, flights):
    assert cf.replayed_per_call_ns(name, size, nbytes, 20, False, QUIET) == pytest.approx(flights * L, rel=0.01)


def test_a_barrier_after_each_call_adds_its_own_rounds():
    alone = cf.replayed_per_call_ns("Barrier", 4, 0, 10, False, QUIET)
    assert alone == pytest.approx(2 * L, rel=0.01)
    assert cf.replayed_per_call_ns("Barrier", 4, 0, 10, True, QUIET) == pytest.approx(2 * alone, rel=0.01)


def test_cases_read_as_the_loop_runs_them():
    assert cf.parse_case("Allreduce:16:d") == ("Allreduce", 16, "d", False)       # synchronising by itself
    assert cf.parse_case("Reduce:2049") == ("Reduce", 2049, "c", True)
    assert cf.parse_case("Reduce:2049:c:nobarrier") == ("Reduce", 2049, "c", False)
    assert cf.parse_case("Alltoall:32769np") == ("Alltoall", "32769np", "c", True)
    assert cf.case_bytes("32769np", 3) == 3 * 32769 and cf.case_bytes(8, 3) == 8
    assert all(cf.parse_case(":".join(map(str, c))) for c in cf.DEFAULT_CASES)


@pytest.mark.parametrize("argv, says", [
    (["--case", "Allgatherv:8"], "'Allgatherv' is not one of"),
    (["--case", "Allreduce:12:d"], "12 B is no whole number of 'd' elements"),
    (["--case", "Allreduce:12np:d"], "12 B is no whole number of 'd' elements"),
    (["--case", "Allreduce:8:q"], "type 'q' is not d"),
    (["--case", "Allreduce:8:c:later"], "expected NAME:BYTES"),
    (["--case", "Allreduce:eight"], "'eight' is not a byte count"),
    (["--np", "2,x"], "--np '2,x'"),
    (["--np", "2,0"], "--np '2,0'"),
    (["--iters", "0"], "--iters 0"),
    (["--L", "0us"], "--L 0us"),
    (["--L", "5parsecs"], "parsecs")])
def test_bad_input_is_refused_before_any_run(argv, says, capsys):
    assert cf.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and err.count("\n") == 0


def test_the_least_valid_settings_go_on_to_the_run(monkeypatch, capsys):
    # one rank and one call a loop are the smallest --np and --iters: not refused, the run starts
    # (here it fails at once, before any MPI: exit 1, not the usage error's 2)
    def no_loop(folder):
        raise RuntimeError("no loop here")
    monkeypatch.setattr(cf, "build_loop", no_loop)
    assert cf.main(["--np", "1", "--iters", "1", "--case", "Allreduce:8"]) == 1
    assert capsys.readouterr().err.strip() == "collective_flights.py: no loop here"


def test_the_table_has_a_row_a_case_and_a_column_a_rank_count():
    cases = [cf.parse_case("Allreduce:16:d"), cf.parse_case("Alltoall:8np")]
    results = {(0, 2): (2.03 * L, 2 * L), (0, 3): (4.1 * L, 4 * L), (1, 2): (2.1 * L, 2 * L), (1, 3): (3.2 * L, 3 * L)}
    lines = cf.table(cases, [2, 3], results, L).splitlines()
    assert lines[0] == "| collective | bytes | type | barrier after each | np = 2 | np = 3 |"
    assert lines[2] == "| Allreduce | 16 | d | no | 2.03 / 2.00 | 4.10 / 4.00 |"
    assert lines[3] == "| Alltoall | 8 a rank | c | yes | 2.10 / 2.00 | 3.20 / 3.00 |"


def test_a_measured_cell_gives_the_median_call_and_its_interval():
    from loggp.experiments import precision
    calls = [2.0 * L + i * 1000 for i in range(40)]   # 2.00-2.195 L
    cell = cf.table([cf.parse_case("Allreduce:16:d")], [2], {(0, 2): (precision.median_interval(calls), 2 * L)}, L)
    interval = precision.median_interval(calls)
    assert f"| {interval.estimate / L:.2f} [{interval.low / L:.2f}, {interval.high / L:.2f}] / 2.00 |" in cell
    assert interval.low < interval.estimate < interval.high
    few = precision.median_interval(calls[:3])
    assert "(no interval) / 2.00" in cf.table([cf.parse_case("Allreduce:16:d")], [2], {(0, 2): (few, 2 * L)}, L)


@pytest.mark.parametrize("name", ["Bcast", "Scatter"])
def test_the_loop_roots_its_collectives_at_rank_zero(name):
    # collective_loop.c roots every call at rank 0: rank 0 only sends in it, every other rank receives
    programs = cf.loop_programs(name, 3, 24, 2, True)
    seqs = {op[2][1] for op in programs[1] if op[0] == "irecv"}
    inside = [op for op in programs[0] if op[0] in ("isend", "irecv") and op[2][1] in (1, 3)]
    assert inside and all(op[0] == "isend" for op in inside), inside
    assert {1, 3} <= seqs
