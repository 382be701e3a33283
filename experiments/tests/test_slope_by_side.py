"""bulk_slope_by_side: the slope arithmetic, the pairing of each side with the armed
baseline of its round, the table, and bad input; the probe is replaced by synthetic results."""
import pytest

from loggp.experiments import slope_by_side as sbs
from loggp.experiments.calibration_plan import ARMED
from loggp.experiments.probe import ProbeError


def result(small, large):
    """One knob set's probe result with per-round stream intervals (us) at the two sizes."""
    return {"sizes": [{"bytes": sbs.SMALL, "g_us": {"rounds_us": list(small)}},
                      {"bytes": sbs.LARGE, "g_us": {"rounds_us": list(large)}}]}


def test_the_slope_spans_calibrates_bulk_sizes_in_ns_per_byte():
    assert (sbs.SMALL, sbs.LARGE) == (16384, 65536)
    assert sbs.slope_ns_per_byte(5.0, 5.0) == 0.0
    assert sbs.slope_ns_per_byte(5.0, 6.0) == pytest.approx(1000.0 / 49152)
    assert sbs.slope_ns_per_byte(6.0, 5.0) == pytest.approx(-1000.0 / 49152)
    assert sbs.slope_ns_per_byte(1.0, 2.0, small=1000, large=2000) == pytest.approx(1.0)


def test_each_side_spins_o_there_only_over_the_armed_baseline():
    sets = sbs.knob_sets(1.5)
    assert sets[0] == ARMED and len(sets) == 1 + len(sbs.SIDES)
    both, receive, send, g, L = sets[1:]
    assert (both["o_s"], both["o_r"]) == (1.5, 1.5)
    assert (receive["o_s"], receive["o_r"]) == (ARMED["o_s"], 1.5)
    assert (send["o_s"], send["o_r"]) == (1.5, ARMED["o_r"])
    assert g == {**ARMED, "g": 1.5} and L == {**ARMED, "L": 1.5}
    for s in sets[1:4]:
        assert all(s[k] == ARMED[k] for k in ("g", "G", "L"))


def test_a_launch_pairs_every_side_with_the_armed_baseline_of_its_round():
    armed = result([5.0, 7.0], [9.0, 11.0])
    both = result([6.0, 8.0], [10.0, 11.9])       # round 2: 64 KiB grew 0.9, 16 KiB 1.0
    receive = result([5.5, 7.5], [9.5, 11.5])     # the same growth at both sizes
    send = result([6.0, 8.0], [10.2, 12.2])       # 64 KiB grew 0.2 more
    g = result([5.1, 7.1], [9.1, 11.1])
    L = result([6.5, 8.5], [10.5, 12.4])
    out = sbs.launch_differences([armed, both, receive, send, g, L])
    assert list(out) == ["both", "receive", "send", "g", "L"]
    assert [r[1] for r in out["both"]] == pytest.approx([1.0, 1.0])
    assert [r[2] for r in out["both"]] == pytest.approx([1.0, 0.9])
    assert [r[0] for r in out["both"]] == pytest.approx([0.0, -100.0 / 49152])
    assert [r[0] for r in out["receive"]] == pytest.approx([0.0, 0.0])
    assert [r[0] for r in out["send"]] == pytest.approx([200.0 / 49152] * 2)
    assert [r[0] for r in out["g"]] == pytest.approx([0.0, 0.0])
    assert [r[0] for r in out["L"]] == pytest.approx([0.0, -100.0 / 49152])


def test_a_launch_with_uneven_rounds_or_a_missing_size_is_refused():
    armed = result([5.0, 7.0], [9.0, 11.0])
    with pytest.raises(ProbeError, match="numbers of rounds"):
        sbs.launch_differences([armed, result([6.0], [10.0]), armed, armed, armed, armed])
    with pytest.raises(ProbeError, match="no 65536 B size"):
        sbs.launch_differences([{"sizes": [{"bytes": sbs.SMALL, "g_us": {"rounds_us": [1.0]}}]}] * 6)


def test_the_summary_pools_rounds_and_counts_launches_below_zero():
    # eight rounds each; the send side's slope falls in three launches of four, the pooled median with it
    # g's slope sits 0.0002 above the send side's in every round, L's on the receive side's
    def launch(drop):
        moves = {"send": -drop, "g": -drop + 0.0002}
        return {side: [(moves.get(side, 0.0), 1.0, 1.0)] * 8 for side in sbs.SIDES}
    table = sbs.summarise([launch(0.001), launch(0.002), launch(0.0), launch(0.003)])
    assert table["g less send"].estimate == pytest.approx(0.0002) and table["g less send"].n == 32
    assert table["L less receive"].estimate == pytest.approx(0.0)
    assert table["send"]["below_zero"] == 3 and table["both"]["below_zero"] == 0
    assert table["send"]["slope"].estimate == pytest.approx(-0.0015)
    assert table["send"]["launch_medians"].estimate == pytest.approx(-0.0015)
    assert table["send"]["slope"].n == 32 and table["send"]["launch_medians"].n == 4
    text = sbs.report(table, 1.0, 4)
    assert "| o, send side | -0.0015 [" in text and "(3 of 4)" in text and "too few for an interval" in text
    assert "under g less under o on the send side, paired per round: +0.0002 [" in text


def test_the_command_runs_the_probe_per_launch_and_writes_its_table(monkeypatch, tmp_path, capsys):
    calls = []

    def fake(probe_args, knob_sets, rounds):
        calls.append((probe_args, knob_sets, rounds))
        armed = result([5.0] * rounds, [9.0] * rounds)
        return [armed, result([6.0] * rounds, [10.0] * rounds), result([5.5] * rounds, [9.4] * rounds),
                result([6.0] * rounds, [10.0] * rounds), result([5.2] * rounds, [9.2] * rounds),
                result([5.5] * rounds, [9.5] * rounds)]
    monkeypatch.setattr(sbs, "run_probe_sets", fake)
    out = tmp_path / "table.md"
    assert sbs.main(["--o", "2us", "--runs", "3", "--out", str(out)]) == 0
    assert len(calls) == 3 and calls[0][1][1]["o_s"] == pytest.approx(2.0) and calls[0][2] == sbs.ROUNDS
    assert "--sizes" in calls[0][0] and f"{sbs.SMALL},{sbs.LARGE}" in calls[0][0]
    printed = capsys.readouterr().out
    assert out.read_text() == printed and "o = 2 us" in printed and "3 launches" in printed
    assert f"| o, receive side | {-100.0 / 49152:+.4f} [" in printed
    assert f"under L less under o on the receive side, paired per round: {100.0 / 49152:+.4f} [" in printed


def test_a_failing_probe_exits_1_and_says_why(monkeypatch, tmp_path, capsys):
    def broken(*_, **__):
        raise ProbeError("probe failed (exit 9): loggp-probe")
    monkeypatch.setattr(sbs, "run_probe_sets", broken)
    out = tmp_path / "table.md"
    assert sbs.main(["--runs", "2", "--out", str(out)]) == 1
    assert "probe failed (exit 9)" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("argv, named", [(["--o", "5"], "'5'"), (["--o", "2ms"], "'2ms'"), (["--o", "0us"], "'0us'"), (["--o=-1us"], "-1us"),
                                         (["--runs", "0"], "'0'"), (["--runs", "x"], "'x'"),
                                         (["--runs", "1001"], "'1001'"), (["--runs", "2.5"], "'2.5'")])
def test_bad_input_is_refused_by_name(argv, named, capsys):
    with pytest.raises(SystemExit) as exit_:
        sbs.parse_args(argv)
    assert exit_.value.code == 2 and named in capsys.readouterr().err
