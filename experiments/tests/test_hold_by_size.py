"""hold_by_size: the holds it sets, the pairing of each set with the armed baseline of its
round, the table, and bad input; the probe is replaced by synthetic results."""
import pytest

from loggp.experiments import hold_by_size as hbs
from loggp.experiments import precision as pr
from loggp.experiments.calibration_plan import ARMED
from loggp.experiments.probe import ProbeError


def result(per_size):
    """One knob set's probe result: per size, per-round T, o_s and o_r (us)."""
    return {"sizes": [{"bytes": size, "T_us": {"rounds_us": list(t)}, "o_s_us": {"rounds_us": list(s)},
                       "o_r_us": {"rounds_us": list(r)}} for size, (t, s, r) in per_size.items()]}


def flat(T, rounds=2, o_s=0.2, o_r=0.3):
    """Every small size at the same T (a dict size -> T for per-size values)."""
    return result({size: ([T[size] if isinstance(T, dict) else T] * rounds, [o_s] * rounds, [o_r] * rounds)
                   for size in hbs.SIZES})


def test_the_sizes_are_those_calibrate_reads_L_over_and_each_hold_is_over_the_armed_step():
    assert hbs.SIZES == [8, 64, 512, 4096]
    assert hbs.hold_us(1, 2.0) == 0.0
    assert hbs.hold_us(512, 2.0) == pytest.approx(511 * (2.0 - ARMED["G"]) / 1000.0)
    assert hbs.hold_us(4096, 0.5) == pytest.approx(4095 * 0.499 / 1000.0)


def test_one_G_set_then_one_L_set_per_size_at_that_sizes_hold():
    sets = hbs.knob_sets(2.0)
    assert sets[0] == ARMED and len(sets) == 2 + len(hbs.SIZES)
    assert sets[1] == {**ARMED, "G": 2.0}
    for size, s in zip(hbs.SIZES, sets[2:]):
        assert s == {**ARMED, "L": ARMED["L"] + hbs.hold_us(size, 2.0)}
        assert s["L"] - ARMED["L"] == pytest.approx(hbs.hold_us(size, 2.0))


def test_a_launch_takes_each_sets_latency_less_the_armed_one_of_its_round_less_its_hold():
    G = 1.0
    holds = {size: hbs.hold_us(size, G) for size in hbs.SIZES}
    armed = result({size: ([2.0, 3.0], [0.2, 0.2], [0.3, 0.4]) for size in hbs.SIZES})
    # under G every size grows by its hold and 0.1 us more in round 2; o_r's growth is not latency
    under_G = result({size: ([2.0 + h, 3.1 + h + 0.05], [0.2, 0.2], [0.3, 0.45]) for size, h in holds.items()})
    # each L set grows only its own size by exactly the hold
    under_L = [result({s: ([2.0 + (h if s == size else 0.0), 3.0 + (h if s == size else 0.0)], [0.2, 0.2],
                           [0.3, 0.4]) for s, h in holds.items()}) for size in hbs.SIZES]
    out = hbs.launch_excess([armed, under_G, *under_L], G)
    assert list(out) == hbs.SIZES
    for size in hbs.SIZES:
        assert [r[0] for r in out[size]] == pytest.approx([0.0, 100.0])
        assert [r[1] for r in out[size]] == pytest.approx([0.0, 0.0])


def test_a_launch_of_the_wrong_shape_is_refused():
    armed = flat(1.0)
    with pytest.raises(ProbeError, match="expected 6 knob sets"):
        hbs.launch_excess([armed, armed, armed], 1.0)
    with pytest.raises(ProbeError, match="numbers of rounds"):
        hbs.launch_excess([armed, flat(1.0, rounds=3)] + [armed] * 4, 1.0)
    with pytest.raises(ProbeError, match="no 64 B size"):
        hbs.launch_excess([result({8: ([1.0], [0.0], [0.0])})] * 6, 1.0)
    uneven = result({size: ([1.0, 1.0], [0.1], [0.1, 0.1]) for size in hbs.SIZES})
    with pytest.raises(ProbeError, match="different numbers of rounds"):
        hbs.launch_excess([uneven] * 6, 1.0)


def test_the_summary_pairs_G_with_L_per_round_and_reads_L_under_G_as_calibrate_does():
    # at 512 B G's excess is L's plus 5 ns in every round; the median over sizes is the 2nd/3rd of four
    def launch(shift):
        return {size: [(10.0 * i + shift + (5.0 if size == 512 else 0.0), 10.0 * i + shift) for i in range(8)]
                for size in hbs.SIZES}
    table = hbs.summarise([launch(0.0), launch(1.0)])
    assert table[512]["difference"].estimate == pytest.approx(5.0) and table[512]["difference"].n == 16
    assert table[8]["difference"].estimate == pytest.approx(0.0)
    assert table[512]["G"].estimate - table[512]["L"].estimate == pytest.approx(5.0)
    # per round the median over sizes of (x, x, x, x + 5) is x: one size cannot move it
    per_round = [10.0 * i + s for s in (0.0, 1.0) for i in range(8)]
    assert table["L under G"].estimate == pytest.approx(pr.median(per_round)) and table["L under G"].n == 16
    text = hbs.report(table, 1.0, 2)
    assert "| 512 | 510 ns |" in text and "+5 [" in text and "2 launches" in text
    assert "L's cross-talk under G, as calibrate reads it" in text


def test_the_command_runs_the_probe_per_launch_and_writes_its_table(monkeypatch, tmp_path, capsys):
    calls = []

    def fake(probe_args, knob_sets, rounds):
        calls.append((probe_args, knob_sets, rounds))
        G = knob_sets[1]["G"]
        base = {size: 2.0 for size in hbs.SIZES}
        return [flat(base, rounds), flat({s: 2.0 + hbs.hold_us(s, G) + 0.02 for s in hbs.SIZES}, rounds)] + \
            [flat({s: 2.0 + (hbs.hold_us(size, G) if s == size else 0) for s in hbs.SIZES}, rounds)
             for size in hbs.SIZES]
    monkeypatch.setattr(hbs, "run_probe_sets", fake)
    out = tmp_path / "table.md"
    assert hbs.main(["--G", "2ns/B", "--runs", "3", "--out", str(out)]) == 0
    assert len(calls) == 3 and calls[0][1][1]["G"] == pytest.approx(2.0) and calls[0][2] == hbs.ROUNDS
    assert calls[0][0][:2] == ["--sizes", "8,64,512,4096"]
    printed = capsys.readouterr().out
    assert out.read_text() == printed and "G = 2 ns/B" in printed and "3 launches" in printed
    assert "| 4096 | 8186 ns | +20 [" in printed
    # every size 20 ns beyond its hold under G, none under L: the cross-talk is G's 20, not L's 0
    assert "(median over the sizes): +20 [" in printed


def test_a_failing_probe_exits_1_and_says_why(monkeypatch, tmp_path, capsys):
    def broken(*_, **__):
        raise ProbeError("probe failed (exit 9): loggp-probe")
    monkeypatch.setattr(hbs, "run_probe_sets", broken)
    out = tmp_path / "table.md"
    assert hbs.main(["--runs", "2", "--out", str(out)]) == 1
    assert "probe failed (exit 9)" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("argv, named", [(["--G", "5"], "'5'"), (["--G", "1us"], "'1us'"),
                                         (["--G", "0.001ns/B"], "'0.001ns/B'"), (["--G", "0"], "'0'"),
                                         (["--runs", "0"], "'0'"), (["--runs", "x"], "'x'"),
                                         (["--runs", "1001"], "'1001'"), (["--runs", "2.5"], "'2.5'")])
def test_bad_input_is_refused_by_name(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_:
        hbs.parse_args(argv)
    assert exit_.value.code == 2 and named in capsys.readouterr().err
