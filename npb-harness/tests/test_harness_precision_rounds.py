"""The rounds a study adds for precision, decided on hand-made runs (no benchmark runs): which
benchmarks need one, in which order, what fits the budget at exactly its edge, what the
added rounds have spent, and the slopes and pairs they are judged by."""
import pytest

from loggp.experiments import precision
from loggp.harness import paired, precision_rounds, steps, store, studyfile

TWO_BENCHMARKS = """
name = "two"
repetitions = 2
np = 2
precision = "5%"

[launcher]
kind = "template"
template = "{program}"

[sweep]
L = ["10us", "20us"]

[[benchmark]]
name = "a"
command = ["{fake}", "S"]
runtime_regex = '(x)'

[[benchmark]]
name = "b"
command = ["{fake}", "S"]
runtime_regex = '(x)'
"""


@pytest.fixture
def study(write_study):
    return studyfile.load(write_study(TWO_BENCHMARKS))


def row(bench, rnd, sweep, seconds, L_ns=0.0, wall=1.0, status="ok"):
    return {"benchmark": bench, "np": 2, "class": None, "round": rnd, "sweep": sweep, "status": status,
            "runtime_seconds": seconds, "o_s_ns": 0.0, "o_r_ns": 0.0, "g_ns": 0.0, "G_ns_per_byte": 0.0,
            "L_ns": L_ns, "wall_seconds": wall}


def group(bench, per_ns, rounds=3, zero_s=1.0, status="ok"):
    """Rounds of one benchmark whose L runs add per_ns[k] of the zero-knob runtime per ns of L
    over the armed run (1 ns of L): one slope per L run, L = 10 us then 20 us in each round."""
    out, k = [], 0
    for r in range(rounds):
        out += [row(bench, r, "baseline", zero_s), row(bench, r, "armed", 2.0, L_ns=1.0)]
        for L_ns in (10_000.0, 20_000.0):
            dx = L_ns - 1.0
            out.append(row(bench, r, "L", 2.0 + per_ns[k] * zero_s * dx, L_ns=L_ns, status=status))
            k += 1
    return out


# six slopes each: [min, max] is the median's 95 % interval (MIN_SAMPLES = 6)
WIDE = [1.0, 1.0, 1.0, 1.0, 2.0, 0.5]        # half-width 1 of 1: 20 times the 5 % allowed
NARROWER = [1.0, 1.0, 1.0, 1.0, 1.5, 0.75]   # half-width 0.5: 10 times
EXACT = [1.0] * 6                            # half-width 0: settled


def scaled(slopes):
    return [s * 1e-6 for s in slopes]


def test_the_furthest_off_benchmark_comes_first(study):
    assert precision.MIN_SAMPLES == 6
    runs = group("b", scaled(NARROWER)) + group("a", scaled(WIDE))
    study_needs = precision_rounds.needs(study, runs)
    assert [n.group[0] for n in study_needs] == ["a", "b"]
    assert [n.shortfall for n in study_needs] == pytest.approx([20.0, 10.0])


def test_a_round_fits_a_budget_of_exactly_its_cost_and_not_one_less(study):
    # a's round: its zero-knob, armed and two L runs at 2 s each, 8 s; b's: four runs at 1 s, 4 s
    runs = group("a", scaled(WIDE)) + group("b", scaled(NARROWER))
    walls = {"a": 2.0, "b": 1.0}
    chosen = precision_rounds.next_round(study, runs, 8.0, walls)
    # a, the furthest off, first; b's 4 s more would pass the budget
    assert sorted((s.benchmark, s.sweep) for s in chosen) == [("a", "L"), ("a", "L"), ("a", "armed"),
                                                              ("a", "baseline")]
    # a second short: a does not fit, b does
    chosen = precision_rounds.next_round(study, runs, 7.999, walls)
    assert {s.benchmark for s in chosen} == {"b"} and len(chosen) == 4
    # both at 12 s exactly
    assert len(precision_rounds.next_round(study, runs, 12.0, walls)) == 8
    assert precision_rounds.next_round(study, runs, 0.0, walls) == []


def test_a_precise_slope_or_a_knob_without_pairs_gets_no_round(study):
    runs = group("a", scaled(EXACT)) + group("b", scaled(WIDE), status="failed")
    # a is settled; every L run of b failed: more rounds would retry failures, not narrow an interval
    assert precision_rounds.needs(study, runs) == []
    assert precision_rounds.next_round(study, runs, 1e9, {"a": 1.0, "b": 1.0}) == []


def test_the_budget_counts_every_added_round_from_the_first():
    # repetitions = 2: rounds 0 and 1 are planned, round 2 is the first added one
    runs = [row("a", r, "baseline", 1.0, wall=w) for r, w in ((0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0))]
    assert precision_rounds.spent_s(runs, 2) == 12.0
    assert precision_rounds.spent_s(runs, 4) == 0.0


def test_a_slope_is_relative_to_the_median_zero_knob_runtime_not_the_mean():
    # one slow zero-knob run of six: the median stays 1 s (the mean would be 2 s and halve the slope)
    runs = group("a", scaled(EXACT))
    zero = [r for r in runs if r["sweep"] == "baseline"]
    zero[0]["runtime_seconds"] = 7.0
    for r in zero[1:]:
        r["runtime_seconds"] = 1.0
    assert precision_rounds.reference_s(runs) == 1.0
    assert precision_rounds.slopes(runs, ["L"])["L"].estimate == pytest.approx(1e-6)


def test_a_slope_is_settled_at_exactly_its_precision_and_not_a_hair_wider():
    goal = precision.Precision(0.125)   # binary-exact: 1/8 of an estimate of 4 is 0.5
    assert paired.settled(precision.Interval(4.0, 3.5, 4.5, 6), goal)
    assert not paired.settled(precision.Interval(4.0, 3.5, 4.5000001, 6), goal)
    assert not paired.settled(precision.Interval(4.0, 3.4999999, 4.5, 6), goal)


def test_a_setting_pairs_with_the_first_baseline_run_of_its_round():
    runs = [row("a", 0, "armed", 2.0, L_ns=1.0), row("a", 0, "armed", 5.0, L_ns=1.0),
            row("a", 0, "L", 3.0, L_ns=1001.0)]
    assert paired.slope_pairs(runs, "L") == [(1000.0, 1.0)]


def test_node_sets_are_judged_against_the_spread_of_settings_run_more_than_once():
    # one setting run twice, on two nodes: its spread is the noise, so its nodes are no outlier;
    # settings run once have no spread and must not pull the noise down to zero
    def r(sweep, host, seconds):
        return {"benchmark": "a", "np": 2, "sweep": sweep, "knobs": sweep, "host": host,
                "runtime_seconds": seconds, "status": "ok"}
    runs = [r("baseline", "n0", 1.0), r("baseline", "n1", 1.1), r("L", "n0", 2.0), r("g", "n1", 3.0),
            r("o", "n0", 4.0)]
    assert steps.node_set_flags(runs) == []


def test_the_mean_wall_time_of_a_benchmark_is_over_all_its_runs(tmp_path, study):
    db = store.Store(str(tmp_path / store.DB_NAME))
    try:
        db.initialise(study, {})
        plan = db.pending()
        for entry, wall in zip(plan[:3], (1.0, 2.0, 6.0)):
            db.record({"plan_id": entry["id"], "round": entry["round"], "benchmark": "a", "kind": "command",
                       "class": None, "np": 2, "sweep": entry["sweep"], "knobs": entry["knobs"], "o_s_ns": 0.0,
                       "o_r_ns": 0.0, "g_ns": 0.0, "G_ns_per_byte": 0.0, "L_ns": 0.0, "command": "x",
                       "started_at": "t", "finished_at": "t", "wall_seconds": wall, "status": "ok"})
        assert db.mean_wall_by_benchmark() == {"a": pytest.approx(3.0)}
    finally:
        db.close()
