"""Study files: the plan they give and the errors bad ones get."""
import collections

import pytest

from loggp.harness import studyfile

GOOD = """
name = "t"
repetitions = 4
np = [2]
seed = 7

[launcher]
kind = "template"
template = "{program}"

[sweep]
o = ["1us", "5us"]
G = ["0.5ns/B"]
L = ["0us", "10us"]     # zero is the baseline, not a second one

[[benchmark]]
name = "fake"
command = ["{fake}", "S"]
runtime_regex = 'Time in seconds =\\s*(\\S+)'
"""


def test_plan_has_every_setting_once_per_round_with_baseline(write_study):
    study = studyfile.load(write_study(GOOD))
    plan = study.plan()
    # baseline + armed baseline + o:2 + G:1 + L:1 (the zero L is the baseline)
    assert len(study.settings()) == 6
    assert len(plan) == 6 * 4
    per_round = collections.defaultdict(list)
    for rnd, _, s in plan:
        per_round[rnd].append(s.key())
    for keys in per_round.values():
        assert sorted(keys) == sorted(s.key() for s in study.settings())
        assert sum(1 for k in keys if "|baseline|" in k) == 1
        assert sum(1 for k in keys if "|armed|" in k) == 1
    orders = {tuple(keys) for keys in per_round.values()}
    assert len(orders) > 1, "every round ran in the same order"
    assert [(r, p, s.key()) for r, p, s in plan] == \
        [(r, p, s.key()) for r, p, s in studyfile.load(study.path).plan()], "plan not deterministic"


def test_one_knob_at_a_time_and_o_moves_both_overheads(write_study):
    study = studyfile.load(write_study(GOOD))
    smallest = {"o_s": 1.0, "o_r": 1.0, "g": 1.0, "G": 0.001, "L": 1.0}
    for s in study.settings():
        knobs = s.knob_ns()
        # every knob setting keeps the others armed at their smallest step, as the armed baseline
        moved = {k for k, v in knobs.items() if v != smallest[k]}
        if s.sweep == "baseline":
            assert set(knobs.values()) == {0.0}
        elif s.sweep == "armed":
            assert knobs == smallest
        elif s.sweep == "o":
            assert moved == {"o_s", "o_r"} and knobs["o_s"] == knobs["o_r"]
        else:
            assert moved == {s.sweep}


def test_a_benchmarks_runs_stay_together_with_its_baselines_among_its_settings(write_study):
    text = GOOD.replace('name = "fake"', 'name = "one"') + GOOD[GOOD.index("[[benchmark]]"):].replace(
        'name = "fake"', 'name = "two"')
    study = studyfile.load(write_study(text))
    for r in range(study.repetitions):
        row = [s for rnd, _, s in study.plan() if rnd == r]
        names = [s.benchmark for s in row]
        # two blocks, one per benchmark: a setting's baselines are runs of its own block
        assert names == sorted(names, key=names.index) and len(set(names[:6])) == 1
        for block in (row[:6], row[6:]):
            where = [i for i, s in enumerate(block) if s.sweep in ("baseline", "armed")]
            assert where == [2, 3], [s.sweep for s in block]   # in the middle, next to each other


def test_precision_and_budget_have_defaults_and_are_checked(write_study):
    study = studyfile.load(write_study(GOOD))
    assert (study.precision, study.budget) == ("5%", "5min")
    assert study.precision_goal().relative == 0.05 and study.budget_s() == 300
    tuned = studyfile.load(write_study(GOOD.replace('seed = 7', 'seed = 7\nprecision = "2%"\nbudget = "90s"')))
    assert tuned.precision_goal().relative == 0.02 and tuned.budget_s() == 90
    e = _error(write_study, GOOD.replace('seed = 7', 'seed = 7\nbudget = "90"'))
    assert e.line == 5 and "'budget'" in e.message and "'90'" in e.message
    e = _error(write_study, GOOD.replace('seed = 7', 'seed = 7\nprecision = "0%"'))
    assert e.line == 5 and "'precision'" in e.message


def test_interleave_rotates_and_grid_crosses(write_study):
    text = GOOD.replace('seed = 7', 'seed = 7\norder = "interleave"\ngrid = true')
    study = studyfile.load(write_study(text))
    # grid: (2 o values + off) x (1 G + off) x (1 L + off) = 12, all-off is the baseline; + armed
    assert len(study.settings()) == 13
    rounds = [[s.key() for r, _, s in study.plan() if r == k] for k in range(4)]
    assert rounds[0] != rounds[1] and sorted(rounds[0]) == sorted(rounds[1])


def _error(write_study, text):
    with pytest.raises(studyfile.StudyError) as e:
        studyfile.load(write_study(text))
    return e.value


def test_syntax_error_names_the_line(write_study):
    e = _error(write_study, GOOD.replace('seed = 7', 'seed = = 7'))
    assert e.line == 4 and "TOML syntax error" in e.message
    assert str(e).startswith(e.path + ":4:")


@pytest.mark.parametrize("old,new,line,words", [
    ('seed = 7', 'sed = 7', 4, ["unknown key 'sed'"]),
    ('o = ["1us", "5us"]', 'o = ["1us", "5 parsecs"]', 11, ["'5 parsecs'", "[sweep]"]),
    ('o = ["1us", "5us"]', 'o = ["1us", "5"]', 11, ["'5'"]),
    ('G = ["0.5ns/B"]', 'G = ["0.5ns"]', 12, ["time per byte", "'0.5ns'"]),
    ('o = ["1us", "5us"]', 'x = ["1us"]', 11, ["unknown knob 'x'"]),
    ('template = "{program}"', 'template = "run {prog}"', 8, ["{program}"]),
    ('template = "{program}"', 'template = "{program} {nodes}"', 8, ["{nodes}"]),
    ('kind = "template"', 'kind = "torque"', 7, ["'torque'"]),
    ('repetitions = 4', 'repetitions = 0', 2, ["repetitions", "0"]),
    ('repetitions = 4', 'repetitions = "4"', 2, ["repetitions", "'4'"]),
    ('np = [2]', 'np = [2, 0]', 3, ["'np' value 0"]),
    ('np = [2]', 'np = true', 3, ["'np'"]),
    ("runtime_regex = 'Time in seconds =\\s*(\\S+)'", "runtime_regex = 'Time (('", 18,
     ["runtime_regex", "not a valid regular expression"]),
    ('name = "fake"', 'name = "fake"\ncolour = "red"', 17, ["unknown key 'colour'"]),
])
def test_semantic_errors_name_key_value_and_line(write_study, old, new, line, words):
    assert old in GOOD
    e = _error(write_study, GOOD.replace(old, new))
    assert e.line == line, str(e)
    for w in words:
        assert w in e.message, e.message


def test_benchmark_errors(write_study):
    base = GOOD.split("[[benchmark]]")[0]
    e = _error(write_study, base + '[[benchmark]]\nkernel = "xx"\nclass = "S"\n')
    assert "unknown kernel 'xx'" in e.message and e.line == 16
    e = _error(write_study, base + '[[benchmark]]\nkernel = "cg"\n')
    assert "needs a 'class'" in e.message
    e = _error(write_study, base + '[[benchmark]]\nkernel = "cg"\nclass = "Q"\n')
    assert "'Q'" in e.message and e.line == 17
    e = _error(write_study, base + '[[benchmark]]\ncommand = ["{fake}"]\n')
    assert "runtime_regex" in e.message
    e = _error(write_study, base + '[[benchmark]]\ncommand = ["/nonexistent/prog"]\n'
               'runtime_regex = "(x)"\n')
    assert "/nonexistent/prog" in e.message and "does not exist" in e.message
    e = _error(write_study, base + '[[benchmark]]\ncommand = ["{fake}"]\nruntime_regex = "(x)"\n'
               '[[benchmark]]\ncommand = ["{fake}"]\nruntime_regex = "(x)"\n')
    assert "two benchmarks are named" in e.message and e.line == 19
    e = _error(write_study, base + '[[benchmark]]\nnpb_binary = "cg"\nclass = "A"\n'
               'npb_dir = "nowhere"\n')
    assert "cg.A.x" in e.message
    e = _error(write_study, base)
    assert "no benchmarks" in e.message


def test_optional_missing_benchmark_is_skipped(write_study):
    text = GOOD + ('\n[[benchmark]]\nname = "gone"\ncommand = ["/nonexistent/prog"]\n'
                   'runtime_regex = "(x)"\noptional = true\n')
    study = studyfile.load(write_study(text))
    assert [b.name for b in study.benchmarks] == ["fake"]
    assert "gone" in study.skipped[0]


def test_unreadable_and_non_utf8_files(tmp_path):
    with pytest.raises(studyfile.StudyError, match="cannot read"):
        studyfile.load(str(tmp_path / "missing.toml"))
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"name = \"\xff\"\n")
    with pytest.raises(studyfile.StudyError, match="UTF-8"):
        studyfile.load(str(bad))


def test_knob_units():
    from loggp.harness import units
    assert units.parse("o_s", "1.5us") == 1500
    assert units.parse("L", "800ps") == pytest.approx(0.8)
    assert units.parse("g", "0.1s") == 1e8
    # G is kept in whole picoseconds per byte, so 2us/KiB applies as 1.953 ns/B
    assert units.parse("G", "2us/KiB") == pytest.approx(2000 / 1024, abs=1e-3)
    assert units.parse("G", "1ms/MB") == pytest.approx(1.0)
    for knob, bad in (("o_s", "5"), ("o_s", "-1us"), ("o_s", "1 lightyear"), ("G", "1ns"),
                      ("L", "1ns/B"), ("L", "11s"), ("g", 5), ("o_s", "nanus")):
        with pytest.raises(units.UnitError):
            units.parse(knob, bad)


def test_timeout_and_np_are_taken_up_to_their_largest_and_not_one_past(write_study):
    def with_top(line):
        return GOOD.replace('seed = 7', f'seed = 7\n{line}')
    assert studyfile.load(write_study(with_top('timeout = "168h"'))).benchmarks[0].timeout_s == 7 * 86400
    e = _error(write_study, with_top('timeout = "604801s"'))
    assert "'timeout'" in e.message and "7 days" in e.message
    assert studyfile.load(write_study(GOOD.replace('np = [2]', 'np = [1000000]'))).benchmarks[0].nps == (1000000,)
    e = _error(write_study, GOOD.replace('np = [2]', 'np = [1000001]'))
    assert "'np' value 1000001" in e.message


def test_a_knobs_sweep_runs_in_increasing_order_whatever_the_files(write_study):
    study = studyfile.load(write_study(GOOD.replace('L = ["0us", "10us"]', 'L = ["10us", "0us", "2us", "500ns"]')))
    assert [ns for _, ns in study.sweep["L"]] == [500.0, 2000.0, 10000.0]
