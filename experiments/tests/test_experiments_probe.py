"""loggp-probe itself at np=2: it runs, reports sane numbers in valid JSON, and rejects
bad arguments with exit 2. Tolerances are coarse: the machine is shared and noisy."""
import json
import subprocess

import pytest

from loggp.experiments import probe as probemod
from tests.testkit import skip_if_busy


def run(args, np_ranks=2, timeout=120):
    cmd = [probemod.find_program("mpiexec"), "-n", str(np_ranks), probemod.find_program("loggp-probe"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def medians(data, key):
    return [e[key]["median"] for e in sorted(data["sizes"], key=lambda e: e["bytes"])]


def timing_shape_misses(data):
    """The relations between a probe's own figures that any machine's show when it is not
    loaded (none is a fixed time); [] when all hold."""
    T, o_s, o_r, g = (medians(data, k) for k in ("T_us", "o_s_us", "o_r_us", "g_us"))
    misses = [f"{name} {series}: not all positive" for name, series in (("o_s", o_s), ("o_r", o_r), ("g", g))
              if not all(v > 0 for v in series)]   # estimates from differences: noise can turn them
    # Monotone-ish: a 256 KiB message costs clearly more than a 1 B one, in every quantity.
    if not (T[-1] > 3 * T[0] and g[-1] > 3 * g[0]):
        misses.append(f"T {T}, g {g}: 256 KiB not above 3x 1 B")
    # An overhead is part of the one-way time of a small message.
    if not (o_s[0] < 2 * T[0] and o_r[0] < 2 * T[0]):
        misses.append(f"o_s {o_s[0]}, o_r {o_r[0]} not below 2 T(1 B) = {2 * T[0]}")
    # Bulk transfer: its time per byte is a share of the largest message's own one-way time
    # (judged against this machine's figures, not a fixed bandwidth range).
    if not 0 < data["summary"]["G_ns_per_byte"] * 262144 / 1e3 < 1.5 * T[-1]:
        misses.append(f"G {data['summary']['G_ns_per_byte']} ns/B against T(256 KiB) {T[-1]}")
    return misses


def test_probe_reports_a_sane_signature(tmp_path):
    for attempt in range(3):   # a loaded machine bends the figures: measured again, never widened
        out = tmp_path / f"probe{attempt}.json"
        proc = run(["--sizes", "1,64,1K,16K,256K", "--time-limit", "1", "--json", str(out)])
        assert proc.returncode == 0, proc.stderr
        data = json.loads(out.read_text())
        assert data["schema"] == "loggp-probe/1" and data["np"] == 2
        assert [e["bytes"] for e in data["sizes"]] == [1, 64, 1024, 16384, 262144]
        assert all(v > 0 for v in medians(data, "T_us")), medians(data, "T_us")   # a time, measured
        for e in data["sizes"]:
            assert e["T_us"]["samples"] >= 11
            assert e["residual_us"] == pytest.approx(
                e["T_us"]["median"] - e["o_s_us"]["median"] - e["o_r_us"]["median"], abs=1e-5)
        assert "bytes" in proc.stdout and "T(m)" in proc.stdout  # the table
        misses = timing_shape_misses(data)
        if not misses:
            return
    skip_if_busy("the probe's signature")
    assert not misses, misses


def check_physical_signature(data, stdout):
    """What holds on any run, however noisy: L is never negative, and exactly the sizes
    past the switch have their o_s, o_r and L marked in the table and the JSON."""
    summary = data["summary"]
    assert summary["L_us"] >= 0
    assert summary["L_clamped"] == (summary["L_unclamped_us"] < 0)
    assert summary["L_us"] == pytest.approx(max(summary["L_unclamped_us"], 0.0), abs=1e-6)
    assert summary["L_note"]
    assert summary["not_meaningful_past_switch"] == ["o_s_us", "o_r_us", "L_us"]
    switch = summary["protocol_switch_bytes"]
    rows = {int(line.split()[0]): line for line in stdout.splitlines() if line[:9].strip().isdigit()}
    assert sorted(rows) == [e["bytes"] for e in data["sizes"]]
    for e in data["sizes"]:
        assert e["past_switch"] == (switch is not None and e["bytes"] >= switch)
        line = rows[e["bytes"]]
        if e["past_switch"]:
            assert e["L_us"] is None
            assert "n/a*" in line and line.count("*") == 3, line
        else:
            assert "*" not in line, line
            if e["L_us"] is None:  # o_s + o_r exceed T beyond noise
                assert e["residual_us"] < 0 and line.split()[-1] == "n/a", line
            else:
                assert e["L_us"] == pytest.approx(max(e["residual_us"], 0.0), abs=1e-6)
                assert float(line.split()[-1]) >= 0, line
    assert ("* past the protocol switch (from %d B)" % switch in stdout) if switch else "* past" not in stdout
    assert ("clamped at 0" in stdout) == summary["L_clamped"]


def test_physical_signature_marks_what_the_protocol_switch_changes(tmp_path):
    # MPICH's shared memory switches protocol between 1 KiB and 16 KiB: from there on the
    # receive (and the blocking send) moves the data, so they are no overheads and
    # T - o_s - o_r is no latency. A run disturbed by other work may hide the switch:
    # up to three runs.
    out = tmp_path / "probe.json"
    found = []
    for _ in range(3):
        proc = run(["--sizes", "1,64,1K,16K,256K", "--time-limit", "1", "--json", str(out)])
        assert proc.returncode == 0, proc.stderr
        data = json.loads(out.read_text())
        check_physical_signature(data, proc.stdout)
        assert data["summary"]["L_from_bytes"] == [1, 64]
        found.append(data["summary"]["protocol_switch_bytes"])
        if found[-1] == 16384:
            break
    assert found[-1] == 16384, found


def test_nonblocking_send_keeps_its_overhead_past_the_switch(tmp_path):
    out = tmp_path / "probe.json"
    proc = run(["--sizes", "8,64K", "--time-limit", "0.5", "--send-mode", "isend", "--json", str(out)])
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(out.read_text())["summary"]
    assert summary["not_meaningful_past_switch"] == ["o_r_us", "L_us"]
    assert summary["L_us"] >= 0


def test_full_signature_is_fast(tmp_path):
    # what the minimum sample counts alone take on this machine, measured first
    least = tmp_path / "least.json"
    assert run(["--json", str(least), "--quiet", "--time-limit", "0"]).returncode == 0
    least_s = json.loads(least.read_text())["elapsed_s"]
    out = tmp_path / "probe.json"
    proc = run(["--json", str(out), "--quiet"])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    sizes = [e["bytes"] for e in data["sizes"]]
    assert sizes[0] == 1 and sizes[-1] == 1 << 20
    assert all(1 << i in sizes for i in range(21))
    # Budget 4 s, then at most the minimum samples it cannot go without (twice, for load)
    assert data["target"]["time_limit_s"] == 4
    assert data["elapsed_s"] < 2 * (data["target"]["time_limit_s"] + least_s), (data["elapsed_s"], least_s)
    assert proc.stdout == ""


@pytest.mark.parametrize("modes", [["--send-mode", "isend", "--recv-mode", "irecv"], ["--send-mode", "ssend"]])
def test_send_and_receive_modes(tmp_path, modes):
    out = tmp_path / "probe.json"
    proc = run(["--sizes", "8,64K", "--time-limit", "0.5", "--quiet", "--json", str(out), *modes])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["send_mode"] == modes[1]
    assert all(e["T_us"]["median"] > 0 for e in data["sizes"])


def test_refinement_adds_sizes_inside_a_bend(tmp_path):
    # Between 4 KiB and 64 KiB MPICH switches protocol; the probe measures sizes in between.
    out = tmp_path / "probe.json"
    proc = run(["--min-size", "1K", "--max-size", "128K", "--time-limit", "1", "--quiet", "--json", str(out)])
    assert proc.returncode == 0, proc.stderr
    sizes = json.loads(out.read_text())["sizes"]
    powers = {1 << i for i in range(10, 18)}
    assert {e["bytes"] for e in sizes if not e["refined"]} == powers
    for e in sizes:
        if e["refined"]:
            assert e["bytes"] not in powers and 1024 < e["bytes"] < 131072


@pytest.mark.parametrize("args, message", [
    (["--send-mode", "bogus"], "'bogus'"),
    (["--recv-mode", "wait"], "'wait'"),
    (["--max-size", "12parsecs"], "'12parsecs'"),
    (["--sizes", "8,x"], "'x'"),
    (["--min-size", "1M", "--max-size", "1K"], "--min-size"),
    (["--rel-ci", "2"], "'2'"),
    (["--burst", "1"], "'1'"),
    (["--min-samples", "50", "--max-samples", "10"], "--max-samples 10"),
    (["--frobnicate"], "'--frobnicate'"),
    (["--json"], "needs a value"),
    (["--knob-set", "x=1us"], "unknown knob 'x'"),
    (["--knob-set", "o=5"], "'o=5'"),
    (["--knob-set", "o=1us,o_s=2us"], "given twice"),
    (["--knob-set", "L"], "not name=value"),
    (["--rounds", "0"], "--rounds '0'"),
    (["--rounds", "2"], "--knob-set runs only"),
])
def test_bad_arguments_exit_2(args, message):
    proc = run(args, timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr


def test_one_rank_is_a_usage_error():
    proc = run(["--sizes", "8"], np_ranks=1, timeout=60)
    assert proc.returncode == 2
    assert "at least 2 ranks" in proc.stderr


def test_unwritable_json_fails_without_a_partial_file(tmp_path):
    target = tmp_path / "no-such-dir" / "probe.json"
    proc = run(["--sizes", "8", "--time-limit", "0.2", "--quiet", "--json", str(target)])
    assert proc.returncode != 0
    assert "no-such-dir" in proc.stderr
    assert not target.parent.exists()


def test_loggp_probe_command(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert probemod.main(["--sizes", "8", "--time-limit", "0.2s", "--quiet", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["sizes"][0]["bytes"] == 8
    assert probemod.main(["--np", "1"]) == 2
    assert "--np '1'" in capsys.readouterr().err


def test_knob_sets_need_a_private_knob_file_and_libloggp(tmp_path, monkeypatch):
    for var in probemod.KNOB_ENV + ("LOGGP_KNOB_FILE",):
        monkeypatch.delenv(var, raising=False)
    proc = run(["--knob-set", "zero", "--sizes", "8"], timeout=60)
    assert proc.returncode == 2 and "LOGGP_KNOB_FILE" in proc.stderr
    monkeypatch.setenv("LOGGP_KNOB_FILE", str(tmp_path / "knobs"))
    proc = run(["--knob-set", "zero", "--sizes", "8"], timeout=60)
    assert proc.returncode == 2 and "libloggp.so preloaded" in proc.stderr
    monkeypatch.setenv("LOGGP_OS", "1us")
    proc = run(["--knob-set", "zero", "--sizes", "8"], timeout=60)
    assert proc.returncode == 2 and "LOGGP_OS is set" in proc.stderr
    monkeypatch.delenv("LOGGP_OS")
    monkeypatch.setenv("LOGGP_LIVE", "0")
    with pytest.raises(probemod.ProbeError, match="LOGGP_LIVE=0"):
        probemod.run_probe_sets(["--sizes", "8", "--time-limit", "0.2"], [{}, {"L": 1.0}], rounds=1)
    assert not (tmp_path / "knobs").exists()


def test_knob_sets_are_measured_side_by_side_in_one_run(tmp_path, capsys):
    zero, slow = probemod.run_probe_sets(["--sizes", "8", "--time-limit", "0.3"],
                                         [{}, {"o_s": 20.0}], rounds=2)
    assert (zero["knob_set"], slow["knob_set"]) == ("zero", "o_s=20us")
    assert slow["knobs"]["o_s"] == "20us" and slow["knobs"]["L"] == "0ns"
    rise = slow["sizes"][0]["o_s_us"]["median"] - zero["sizes"][0]["o_s_us"]["median"]
    assert 15 < rise < 30, rise  # the set's o_s is in force while it is measured, and only then
    for run_ in (zero, slow):
        assert len(run_["sizes"][0]["T_us"]["rounds_us"]) == 2
    # `loggp probe` passes --knob-set through, with a private knob file
    out = tmp_path / "sets.json"
    assert probemod.main(["--sizes", "8", "--time-limit", "0.2s", "--rounds", "1", "--quiet", "--knob-set", "zero",
                          "--knob-set", "L=5us", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [s["spec"] for s in data["knob_sets"]] == ["zero", "L=5us"] and data["rounds"] == 1
    assert probemod.main(["--L", "1us", "--knob-set", "zero"]) == 2
    assert "not both" in capsys.readouterr().err
