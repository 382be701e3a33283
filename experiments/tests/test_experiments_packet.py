"""`loggp tune packet`: the benchmark verifies what it rebuilt (and fails on a corrupted
structure), the LogGP predictor on synthetic parameters, bad input, and a tiny sweep."""
import json
import math
import subprocess
import sys

import pytest

from loggp.experiments import packet_model as model
from loggp.experiments import packet_output, packet_sweep, tune
from loggp.knobs.programs import find_program


def bench(args, timeout=120):
    cmd = [find_program("mpiexec"), "-n", "2", find_program("loggp-packet"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- the benchmark

def test_benchmark_rebuilds_and_reports_every_size():
    proc = bench(["--records", "777", "--record-size", "40", "--sizes", "64,100,4096,1M", "--reps", "2"])
    assert proc.returncode == 0, proc.stderr
    setup, runs = packet_sweep.parse_lines(proc.stdout)
    assert setup["records"] == 777 and setup["pack_ns_per_record"] > 0 and setup["unpack_ns_per_record"] > 0
    assert [(r["packet_size"], r["rep"]) for r in runs] == [(s, k) for k in (0, 1) for s in (64, 100, 4096, 1 << 20)]
    for r in runs:
        be = max(1, r["packet_size"] // 40)  # 64 and 100 B hold one and two records of 40 B
        assert r["records_per_packet"] == be and r["packets"] == math.ceil(777 / be)
        assert r["bytes"] == 777 * 40 and r["time_s"] > 0


def test_benchmark_fails_loudly_on_a_corrupted_structure():
    proc = bench(["--records", "500", "--record-size", "32", "--sizes", "256", "--reps", "1", "--corrupt"])
    assert proc.returncode == 1
    assert "VERIFY FAILED at packet size 256" in proc.stderr
    assert '"kind":"run"' not in proc.stdout  # no time is reported for a broken transfer


@pytest.mark.parametrize("args,bad", [(["--record-size", "8"], "--record-size '8'"),
                                      (["--sizes", "64,x"], "--sizes entry 'x'"),
                                      (["--reps", "0"], "--reps '0'")])
def test_benchmark_rejects_bad_arguments(args, bad):
    proc = bench(args)
    assert proc.returncode == 2 and f"bad {bad}" in proc.stderr


# ---------------------------------------------------------------- the predictor

BASE = model.Params(o_s=1000.0, o_r=1000.0, g=500.0, G=0.1, L=1000.0, pack_ns=5.0, unpack_ns=3.0)


def best(p, records=4096, record_size=64):
    return model.predicted_best(records, record_size, p, 1 << 22)[0]


def brute_force_us(size, records, record_size, p):
    """The pipeline packet by packet, without the steady-state short cut."""
    be, left = model.records_per_packet(size, record_size), records
    c, u, G = p.pack_ns, p.unpack_ns, p.G
    sender = link = receiver = 0.0
    while left:
        b = min(be, left)
        m = b * record_size
        rise, g_rise = p.regime_extra(m)
        per_byte = G + g_rise
        start = max(sender + b * c, link)
        receiver = max(start + p.o_s + rise + (m - 1) * per_byte + p.L, receiver) + p.o_r + b * u
        sender, link, left = start + p.o_s + rise, start + max(p.g, (m - 1) * per_byte), left - b
    return (receiver + p.o_s + p.L + p.o_r) / 1e3


@pytest.mark.parametrize("p", [BASE, BASE.plus({"o_s": 20e3}), BASE.plus({"G": 3}), BASE.plus({"o_r": 30e3}),
                               BASE.plus({"g": 40e3}), model.Params(pack_ns=2),
                               model.Params(o_s=1e3, G=0.1, regimes=((8192, 3e3, 0.2), (1 << 16, 5e3, -0.05)))])
@pytest.mark.parametrize("size,records", [(64, 1000), (1000, 999), (4096, 4097), (1 << 20, 10)])
def test_the_short_cut_equals_the_packet_by_packet_pipeline(p, size, records):
    assert model.transfer_time_us(size, records, 64, p) == pytest.approx(brute_force_us(size, records, 64, p))


def test_larger_o_moves_the_optimum_up():
    sizes = [best(BASE.plus({"o_s": o, "o_r": o}), records=1 << 16) for o in (0, 5e3, 20e3, 80e3)]
    assert sizes == sorted(sizes) and sizes[-1] >= 4 * sizes[0]  # sqrt(81) without a cap


def test_larger_G_moves_the_optimum_down():
    sizes = [best(BASE.plus({"G": G})) for G in (0, 0.5, 2, 8)]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] >= 4 * sizes[-1]


def test_L_shifts_the_time_but_not_the_optimum():
    slow = BASE.plus({"L": 50e3})
    assert best(slow) == best(BASE)
    assert model.transfer_time_us(4096, 4096, 64, slow) == pytest.approx(
        model.transfer_time_us(4096, 4096, 64, BASE) + 2 * 50)  # the data and the acknowledgement


def test_a_costly_protocol_switch_keeps_packets_below_it():
    switch = model.Params(**{**vars(BASE), "regimes": ((8192, 50e3, 0.0),)})
    assert best(BASE) > 8192 and best(switch) < 8192
    assert switch.regime_extra(8191) == (0.0, 0.0) and switch.regime_extra(8192) == (50e3, 0.0)


def test_regimes_from_a_calibration(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"reference": {"o_s": 0.2, "o_r": 0.5, "g": 0.5, "L": -0.1},
                                "baseline": {"regimes": [{"m_min": 8192, "T0_us": 7.0, "G_ns_per_byte": 0.13},
                                                         {"m_min": 1, "T0_us": 5.0, "G_ns_per_byte": 0.03}]}}))
    machine, _ = packet_sweep.machine_from_calibration(path)
    assert machine["G"] == 0.03 and machine["L"] == 0.0  # a negative L read as none
    assert machine["regimes"] == [[8192, pytest.approx(2.0), pytest.approx(0.1)]]


def test_sender_bound_optimum_matches_the_closed_form():
    p = model.Params(o_s=10e3, o_r=500, G=0.2, L=1e3, pack_ns=5, unpack_ns=3)
    closed = model.steady_state_best_be(4096, 64, p) * 64
    assert model.within_one_octave(best(p), closed)


def test_one_record_per_packet_at_least():
    assert model.records_per_packet(10, 64) == 1 and model.records_per_packet(200, 64) == 3
    assert model.packets(1000, 10, 64) == 1000 and model.packets(1000, 1 << 20, 64) == 1


def test_a_size_has_its_median_interval_or_none_never_the_range():
    def runs(size, times):
        return [{"packet_size": size, "records_per_packet": 1, "packets": 1, "bytes": size, "time_s": t * 1e-6}
                for t in times]
    few, enough = packet_sweep.summarize(runs(64, [3, 1, 2]) + runs(128, range(1, 21)))
    assert few["median_us"] == pytest.approx(2) and few["ci_low_us"] is None and few["ci_high_us"] is None
    assert enough["median_us"] == pytest.approx(10.5)
    assert (enough["ci_low_us"], enough["ci_high_us"]) == pytest.approx((6, 15))  # binomial ranks, n = 20
    assert not hasattr(model, "median_interval")  # one definition: loggp.experiments.precision
    assert "(no interval: 3 reps, too few)" == packet_output.interval_text({**few, "reps": 3})
    assert packet_output.error_bars([few, enough]) == [[0.0, pytest.approx(4.5)], [0.0, pytest.approx(4.5)]]


# ---------------------------------------------------------------- settings and bad input

def test_settings_go_through_the_knob_parser():
    assert packet_sweep.parse_setting("zero") == ("zero", {})
    label, knobs = packet_sweep.parse_setting("o=10us,G=2ns/B")
    assert label == "o=10us,G=2ns/B" and knobs == {"o_s": 10e3, "o_r": 10e3, "G": 2.0}
    assert packet_sweep.parse_setting("L=500ns")[1] == {"L": 500.0}


@pytest.mark.parametrize("argv,message", [
    (["packet", "--setting", "o=ten"], "'ten'"),
    (["packet", "--setting", "q=1us"], "unknown knob 'q'"),
    (["packet", "--setting", "o=1us,o_s=2us"], "o_s is given twice"),
    (["packet", "--setting", "zero", "--setting", "zero"], "given twice"),
    (["packet", "--min-size", "4096", "--max-size", "64"], "--min-size 4096"),
    (["packet", "--min-size", "65", "--max-size", "127"], "no power of two"),
    (["packet", "--record-size", "8"], "'8'"),
    (["packet", "--records", "16777216", "--record-size", "1024"], "over 2147483647 bytes"),
    (["packet", "--calibration", "/nonexistent/calibration.json"], "no such file"),
    (["packet", "--bogus"], "--bogus"),
    ([], "required"),
])
def test_bad_input_is_a_usage_error(argv, message, capsys, tmp_path):
    assert tune.TuneCommand().main([*argv, "--out", str(tmp_path / "out")] if argv else argv) == 2
    assert message in capsys.readouterr().err


def test_a_calibration_without_a_reference_is_refused(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text('{"schema": "something else"}')
    with pytest.raises(packet_sweep.TuneError, match="no reference"):
        packet_sweep.machine_from_calibration(path)


# ---------------------------------------------------------------- end to end

def calibration_file(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"reference": {"o_s": 0.2, "o_r": 0.5, "g": 0.5, "L": 0.1},
                                "baseline": {"regimes": [{"m_min": 1, "T0_us": 1.0, "G_ns_per_byte": 0.1}]}}))
    return path


def test_a_tiny_sweep_end_to_end(tmp_path, capsys):
    out = tmp_path / "tune"
    rc = tune.TuneCommand().main(["packet", "--records", "300", "--min-size", "64", "--max-size", "1024",
                                  "--reps", "3", "--setting", "zero", "--setting", "o=20us",
                                  "--calibration", str(calibration_file(tmp_path)), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["packet.csv", "packet.json", "packet.png", "packet.txt"]
    summary = json.loads((out / "packet.json").read_text())
    zero, slow = summary["settings"]
    assert [s["setting"] for s in (zero, slow)] == ["zero", "o=20us"]
    for s in (zero, slow):
        sizes = [r["packet_size"] for r in s["rows"]]
        assert {64, 128, 256, 512, 1024} <= set(sizes) and s["measured_best"] in sizes
        assert all(r["reps"] == 3 and r["ci_low_us"] is None and r["ci_high_us"] is None for r in s["rows"])
    # 300 one-record packets each pay o_s = 20 us on the sender: at least 6 ms more
    assert slow["rows"][0]["median_us"] > zero["rows"][0]["median_us"] + 3000
    assert slow["params_ns"]["o_s"] == pytest.approx(20.2e3) and slow["predicted_best"] >= zero["predicted_best"]
    assert (out / "packet.png").stat().st_size > 10000
    assert "measured best" in capsys.readouterr().out


def test_outputs_are_written_whole(tmp_path):
    row = {"packet_size": 64, "records_per_packet": 1, "packets": 5, "bytes": 320, "reps": 1,
           "median_us": 5.0, "ci_low_us": 4.0, "ci_high_us": 6.0, "predicted_us": 5.5}
    summary = {"records": 5, "record_size": 64, "reps": 1, "machine": {"o_s": 1.0, "G": 0.1, "regimes": []},
               "machine_source": "test", "settings": [
                   {"setting": "zero", "rows": [row], "measured_best": 64, "predicted_best": 128,
                    "within_one_power_of_two": True, "verdict": "met", "tied_with_best": [64],
                    "pack_ns_per_record": 5.0, "unpack_ns_per_record": 3.0}]}
    text = packet_output.write_outputs(tmp_path, summary, with_plot=False)
    assert "zero" in text and sorted(p.name for p in tmp_path.iterdir()) == ["packet.csv", "packet.json", "packet.txt"]
    assert (tmp_path / "packet.csv").read_text().splitlines()[1].startswith("zero,64,1,5,320,1,5.0")
    summary["settings"][0]["rows"][0]["median_us"] = math.nan  # not JSON: nothing half-written
    with pytest.raises(ValueError):
        packet_output.write_outputs(tmp_path / "bad", summary, with_plot=False)
    assert not (tmp_path / "bad" / "packet.json").exists()
    assert not [p for p in (tmp_path / "bad").iterdir() if p.name.startswith(".")]


def test_refinement_stays_within_the_structure():
    assert packet_sweep.refined_sizes(4096, 64, 4096, {4096}) == [3072, 6144]
    # 256 KiB already holds all 4096 records: nothing bigger is worth a run
    assert packet_sweep.refined_sizes(1 << 18, 64, 4096, set()) == [196608]
    assert packet_sweep.refined_sizes(128, 64, 100, {64, 128, 192}) == []  # 3/4 of 2 records is 2 again


def test_the_tuning_modules_do_not_import_the_root():
    code = ("import sys, loggp.experiments.tune, loggp.experiments.packet_sweep, loggp.experiments.packet_output; "
            "print(' '.join(m for m in sys.modules if m.startswith('loggp')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not set(proc.stdout.split()) & {"loggp.cli", "loggp.main", "loggp.testbed"}


def test_a_failed_run_exits_1_and_leaves_no_results(monkeypatch, tmp_path, capsys):
    def failing(*args, **kw):
        raise packet_sweep.TuneError("loggp-packet failed (exit 1): VERIFY FAILED at packet size 64")
    monkeypatch.setattr(packet_sweep, "run_benchmark", failing)
    out = tmp_path / "tune"
    rc = tune.TuneCommand().main(["packet", "--records", "10", "--max-size", "128", "--setting", "zero",
                                  "--calibration", str(calibration_file(tmp_path)), "--out", str(out)])
    assert rc == 1 and "VERIFY FAILED" in capsys.readouterr().err
    assert list(out.iterdir()) == []


def test_a_packet_holds_a_further_record_from_exactly_its_size():
    # both sides of each multiple of the record size
    assert [model.records_per_packet(s, 64) for s in (63, 64, 127, 128, 129, 191, 192)] == [1, 1, 1, 2, 2, 2, 3]
    # a last, partial packet from one record past a multiple of BE
    assert [model.packets(n, 128, 64) for n in (1, 2, 3, 128, 129)] == [1, 1, 2, 64, 65]


def test_the_smallest_structure_is_one_message_and_its_acknowledgement():
    # 1 is the least of records, record size and packet size (0 is refused): one message of m
    # bytes is packed (c), sent (o_s), flies (m-1)G + L, is taken (o_r) and unpacked (u); the
    # acknowledgement adds o_s + L + o_r
    p = model.Params(o_s=100.0, o_r=200.0, g=50.0, G=0.5, L=1000.0, pack_ns=5.0, unpack_ns=7.0)
    ack = 100.0 + 1000.0 + 200.0
    for packet_size, records, record_size in ((1, 1, 1), (64, 1, 64), (1, 3, 1)):
        m = record_size
        one = 5.0 + 100.0 + (m - 1) * 0.5 + 1000.0 + 200.0 + 7.0
        # each further one-record packet adds the slowest stage: here the receiver's o_r + u (the
        # sender's c + o_s, g and (m-1)G are shorter)
        want = one + (records - 1) * (200.0 + 7.0) + ack
        assert model.transfer_time_us(packet_size, records, record_size, p) == pytest.approx(want / 1e3)
    for bad in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):
        with pytest.raises(ValueError):
            model.transfer_time_us(*bad, p)


def test_the_grid_of_packet_sizes_reaches_the_largest_size_asked():
    # from one record up to max_size itself: one record's size when that is all that is asked,
    # and an octave's end (two records) as the last size of a grid up to it
    assert model.candidate_sizes(64, 64) == [64]
    assert model.candidate_sizes(64, 128) == [64, 128]
    # whole octaves of steps end on max_size itself, however many (8 steps an octave)
    for record_size, max_size in ((8, 64), (64, 512), (64, 65536), (100, 102400)):
        assert model.candidate_sizes(record_size, max_size)[-1] == max_size
    p = model.Params(o_s=1000.0, o_r=200.0, G=0.5, L=1000.0)
    assert model.predicted_best(100, 64, p, 64)[0] == 64


def test_the_interface_is_busy_g_or_the_bytes_whichever_is_longer():
    # one full packet then the next: it starts max(g, (m-1)G) after the first, on both sides of g = (m-1)G
    m = 2 * 64
    for g in (m - 1 - 1, m - 1, m - 1 + 1):
        p = model.Params(g=float(g), G=1.0)
        two = model.transfer_time_us(m, 4, 64, p) * 1e3
        assert two == pytest.approx(max(g, m - 1) + (m - 1))  # the second packet starts, then flies


def test_a_message_in_a_later_regime_pays_its_rise_and_a_blocking_send_waits_for_it():
    # regimes given out of order: a message takes the one of the largest first size at or below it
    p = model.Params(regimes=((100000, 8000.0, 0.3), (1000, 2000.0, 0.1)))
    assert p.regime_extra(999) == (0.0, 0.0)
    assert p.regime_extra(5000) == (2000.0, 0.1)
    assert p.regime_extra(200000) == (8000.0, 0.3)
    # a switch that lowers T0 makes no message cheaper than the first regime's
    assert model.Params(regimes=((1000, -500.0, 0.0),)).regime_extra(2000) == (0.0, 0.0)
    # ten 1000-byte packets, o_s 1 us and a 5 us rise: the sender is held 6 us per packet,
    # the last arrives 6 us after it starts, then the ack's o_s (nothing else costs)
    slow = model.Params(o_s=1000.0, regimes=((1000, 5000.0, 0.0),))
    assert model.transfer_time_us(1000, 100, 100, slow) == pytest.approx((10 * 6000 + 1000) / 1000)


def test_a_negative_byte_rate_after_a_switch_costs_no_bytes():
    # G 0.1 ns/B, lowered by 0.5 past 1000 B: a 2000-byte packet moves its bytes for free
    lowered = model.Params(o_s=100.0, L=100.0, G=0.1, regimes=((1000, 0.0, -0.5),))
    assert model.transfer_time_us(2000, 10, 200, lowered) == pytest.approx(
        model.transfer_time_us(2000, 10, 200, model.Params(o_s=100.0, L=100.0)))


def test_the_closed_form_counts_the_unpacking_that_grows_with_be():
    # no per-byte cost: BE* = sqrt(N o_s / u) = sqrt(100 * 10000 / 100)
    p = model.Params(o_s=10000.0, unpack_ns=100.0)
    assert model.steady_state_best_be(100, 64, p) == pytest.approx(100.0)
    assert model.steady_state_best_be(100, 64, model.Params(o_s=10000.0)) == math.inf


def _row(size, low, high):
    return {"packet_size": size, "median_us": None if low is None else (low + high) / 2,
            "ci_low_us": low, "ci_high_us": high}


def test_the_size_verdict_is_three_way_from_the_intervals():
    # best 4096 in [90, 110]; 8192 overlaps it in [105, 130]; 65536 is clearly slower
    rows = [_row(4096, 90, 110), _row(8192, 105, 130), _row(65536, 200, 220)]
    assert packet_sweep.size_verdict(rows, 6000) == ("met", [4096, 8192])        # within 2x of both
    assert packet_sweep.size_verdict(rows, 16384) == ("unresolved", [4096, 8192])  # of 8192 only
    assert packet_sweep.size_verdict(rows, 1024) == ("missed", [4096, 8192])      # of neither
    # the same sizes, 8192 now clearly slower: the prediction at 16 KiB misses
    apart = [_row(4096, 90, 110), _row(8192, 111, 130), _row(65536, 200, 220)]
    assert packet_sweep.size_verdict(apart, 16384) == ("missed", [4096])
    assert packet_sweep.size_verdict(apart, 8192) == ("met", [4096])   # exactly 2x: within
    few = [dict(_row(4096, 90, 110), ci_low_us=None, ci_high_us=None), _row(65536, 200, 220)]
    assert packet_sweep.size_verdict(few, 4096)[0] == "unresolved"     # no interval: no verdict


def test_a_missed_prediction_exits_3_and_is_printed(monkeypatch, tmp_path, capsys):
    def swept(label, *args):
        verdict = "missed" if label == "zero" else "met"
        return {"setting": label, "rows": [], "measured_best": 4096, "predicted_best": 1024, "verdict": verdict,
                "tied_with_best": [4096], "within_one_power_of_two": False, "cost_of_predicted_size": 1.5,
                "pack_ns_per_record": 5.0, "unpack_ns_per_record": 3.0}
    monkeypatch.setattr(packet_sweep, "sweep_setting", swept)
    monkeypatch.setattr(packet_output, "plot", lambda summary, png: png.write_bytes(b"png"))
    argv = ["packet", "--records", "10", "--max-size", "128", "--calibration", str(calibration_file(tmp_path))]
    assert tune.TuneCommand().main(argv + ["--setting", "zero", "--out", str(tmp_path / "a")]) == 3
    assert "missed" in capsys.readouterr().out
    assert tune.TuneCommand().main(argv + ["--setting", "o=1us", "--out", str(tmp_path / "b")]) == 0
