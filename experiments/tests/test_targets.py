"""Target networks: signatures read from probe files and TOML, the catalogue, and the
knobs `loggp run --target` sets (target - host), refuses or clips. No MPI job runs: the
host's signature is a probe file written here, and `loggp run` is asked for --dry-run."""
import json
import os
import re

import pytest

from loggp.experiments import signature, target
from tests.testkit import installed, run


def probe_json(o_s=0.2, o_r=0.5, g=0.3, L=0.4, G=0.05, switch=8192, knobs=None):
    """A `loggp probe --json` result with the given summary (us, G in ns/B)."""
    sizes = [1, 64, 4096, 8192, 65536, 1048576]
    return {"schema": "loggp-probe/1", "host": "h", "np": 2, "preload": "none",
            "summary": {"o_s_us": o_s, "o_r_us": o_r, "g_us": g, "L_us": L, "G_ns_per_byte": G,
                        "protocol_switch_bytes": switch, "G_fit_bytes": [65536, 1048576], "T_us": o_s + o_r + L},
            "knobs": knobs if knobs is not None else {"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B", "L": "0ns"},
            "sizes": [{"bytes": b} for b in sizes]}


@pytest.fixture
def host_file(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(probe_json()))
    return path


def toml_target(tmp_path, body, name="t"):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nsource = "a test"\n' + body)
    return path


def dry_run(*args):
    proc = run([installed("loggp"), "run", "-n", "2", *args, "--dry-run", "--", "/bin/true"])
    env = {}
    if proc.returncode == 0:
        for word in proc.stdout.split():
            name, eq, value = word.partition("=")
            if eq and name.startswith("LOGGP_"):
                env[name] = value
    return proc, env


# ---- the catalogue -----------------------------------------------------------

def test_every_catalogue_entry_parses_and_names_its_source():
    entries = signature.catalogue()
    assert {"now", "100baset", "ib-hdr", "slingshot", "aws-efa"} <= set(entries)
    for name, sig in entries.items():
        assert sig.source and len(sig.source) > 20, name
        assert sig.regimes and all(r.values for r in sig.regimes), name
        # each small regime says something about start-up: o and L, or T0
        small = sig.small
        assert small.get("T0") is not None or {"o_s", "o_r", "L"} <= small.values.keys(), name
        assert sig.bulk.get("G") is not None, name
        # every derived or unverified figure is one the entry gives, and derived ones say how
        for r in sig.regimes:
            assert all(how.strip() for how in r.derived.values()), name


def test_now_carries_martins_table_and_says_what_is_unverified():
    now = signature.resolve("now")
    r = now.small
    assert r.get("o_s") == pytest.approx(2900) and r.get("o_r") == pytest.approx(2900)
    assert r.get("g") == pytest.approx(5800) and r.get("L") == pytest.approx(5000)
    assert r.get("G") == pytest.approx(1e9 / 38e6, rel=1e-3)  # 38 MB/s
    assert "ISCA 1997" in now.source and "85-97" in now.source
    assert "from 3 to 103" in now.cites  # the abstract's overhead range: the one checked figure
    assert "25.4" in now.notes and "148.5" in now.notes


# Where a figure sits in its source: a table, a figure, a page, an abstract or a file.
LOCATOR = re.compile(r"\b(Table|Figure|Fig\.|p\.|pp\.|page|[Aa]bstract|[Ff]ile|issue|comment)\b")


def test_every_catalogue_figure_is_cited_or_says_why_not():
    """Each entry says where in its source its figures are (cites), and each figure is
    either checked there, derived (saying how) from checked or nominal figures, or marked
    unverified with the reason."""
    for name, sig in signature.catalogue().items():
        assert sig.cites.strip(), f"{name}: no cites"
        located = bool(LOCATOR.search(sig.cites)) and not sig.cites.lower().startswith("not ")
        for r in sig.regimes:
            for figure in r.values:
                why = r.unverified.get(figure, "")
                if why:
                    assert len(why.split()) >= 8, f"{name}: {figure}: the reason says too little: {why!r}"
                elif figure not in r.derived:
                    assert located, f"{name}: {figure} is marked verified but cites locates nothing: {sig.cites!r}"


def test_the_efa_entry_agrees_with_the_points_it_cites():
    """aws-efa's figures are the cited osu_latency points: T0 at 1 B, G the slope from
    1 to 4 MiB and the large-message start-up its intercept, to the knobs' whole ps."""
    efa = signature.resolve("aws-efa")
    points = {}
    for value, size, unit in re.findall(r"([0-9.]+) us at ([0-9]+) (B|KiB|MiB)", efa.cites):
        points[int(size) * {"B": 1, "KiB": 1024, "MiB": 1 << 20}[unit]] = float(value) * 1000
    assert {1, 1 << 20, 4 << 20} <= points.keys(), efa.cites
    small, bulk = efa.regimes
    assert small.get("T0") == pytest.approx(points[1])
    slope = (points[4 << 20] - points[1 << 20]) / (3 << 20)
    assert bulk.get("G") == pytest.approx(round(slope * 1000) / 1000)
    assert bulk.get("T0") == pytest.approx(points[1 << 20] - (1 << 20) * slope, abs=10)
    assert small.high < bulk.low and not small.unverified and not bulk.unverified


def test_the_netgauge_entry_agrees_with_the_rows_it_cites():
    """tukey-ib's figures are Netgauge's rows, to the ns; T0 is half the 1-byte round trip,
    so the L it emulates is T0 less both overheads."""
    tukey = signature.resolve("tukey-ib")
    cited = {k: float(v) * 1000 for k, v in re.findall(r"\b(PRTT\(1,0,s\)|o_s|o_r|g) ([0-9.]+) us", tukey.cites)}
    small, bulk = tukey.regimes
    assert small.get("T0") == pytest.approx(round(cited["PRTT(1,0,s)"] / 2))
    for figure in ("o_s", "o_r", "g"):
        assert small.get(figure) == pytest.approx(round(cited[figure]), abs=0.5), figure
    low, high = re.search(r"G ([0-9.]+)-([0-9.]+) us/B", tukey.cites).groups()
    assert float(low) * 1000 <= bulk.get("G") <= float(high) * 1000
    values = target.target_values(tukey, signature.from_probe(probe_json(), None))
    assert values["L"][0] == pytest.approx(7404 - 982 - 1141)


def test_loggp_targets_lists_and_shows():
    listed = run([installed("loggp"), "targets"])
    assert listed.returncode == 0, listed.stderr
    for name in signature.catalogue():
        assert any(line.split()[0].rstrip("*") == name for line in listed.stdout.splitlines()[1:-1])
    shown = run([installed("loggp"), "targets", "show", "100baset"])
    assert shown.returncode == 0 and "T0 143 us" in shown.stdout and "source:" in shown.stdout
    # where the figures are read, and why the one unverified figure is not checked
    assert "cites:" in shown.stdout and "T0 unverified: The study itself was not found" in shown.stdout
    bad = run([installed("loggp"), "targets", "show", "no-such-net"])
    assert bad.returncode == 2 and "unknown target 'no-such-net'" in bad.stderr and "now" in bad.stderr


# ---- reading and validating signatures -----------------------------------------

@pytest.mark.parametrize("body, said", [
    ('[[regime]]\nbytes = [1, 64]\nL = "5"\n', "L = '5'"),                       # no unit
    ('[[regime]]\nbytes = [1, 64]\nL = "-1us"\n', "L = '-1us'"),                 # negative
    ('[[regime]]\nbytes = [1, 64]\nG = "1GB/s"\n', "G = '1GB/s'"),               # a bandwidth, not a time per byte
    ('[[regime]]\nbytes = [1, 64]\nL = 5\n', "L = 5"),                           # a bare number
    ('[[regime]]\nbytes = [1, 64]\nlatency = "5us"\n', "unknown key 'latency'"),
    ('[[regime]]\nbytes = [64, 1]\nL = "5us"\n', "bytes = [64, 1]"),
    ('[[regime]]\nbytes = [1, 64]\nL = "5us"\n[[regime]]\nbytes = [32, 128]\nG = "1ns/B"\n', "overlaps"),
    ('[[regime]]\nbytes = [1, 64]\nL = "5us"\nunverified = { g = "not read" }\n', "unverified = {'g'"),
    ('[[regime]]\nbytes = [1, 64]\nL = "5us"\nunverified = ["L"]\n', "unverified = ['L']: expected {figure"),
    ('[[regime]]\nbytes = [1, 64]\nL = "5us"\nunverified = { L = " " }\n', "unverified = {'L': ' '}"),
    ('cites = 3\n[[regime]]\nbytes = [1, 64]\nL = "5us"\n', "cites = 3"),
    ('eager_limit_bytes = -3\n[[regime]]\nbytes = [1, 64]\nL = "5us"\n', "eager_limit_bytes = -3"),
    ('', "no [[regime]]"),
])
def test_a_bad_target_file_is_refused_naming_the_value(tmp_path, body, said):
    path = toml_target(tmp_path, body)
    with pytest.raises(signature.SignatureError) as err:
        signature.load_file(path)
    assert said in str(err.value) and str(path) in str(err.value)


def test_a_target_without_a_source_is_refused(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('name = "x"\n[[regime]]\nbytes = [1, 64]\nL = "5us"\n')
    with pytest.raises(signature.SignatureError, match="'source' is missing"):
        signature.load_file(path)


def test_a_probe_file_is_a_signature_with_its_eager_limit(host_file):
    sig = signature.load_file(host_file)
    assert sig.small.values == pytest.approx({"o_s": 200, "o_r": 500, "g": 300, "L": 400, "G": 0.05})
    assert sig.eager_limit == 4096  # the largest size measured below the switch at 8192
    assert sig.measured_at == pytest.approx(os.stat(host_file).st_mtime)


def test_a_probe_file_with_a_negative_figure_is_refused(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(probe_json(g=-0.1)))
    with pytest.raises(signature.SignatureError, match="g_us = -0.1"):
        signature.load_file(path)


def test_a_probe_without_a_switch_has_no_eager_limit_and_a_zero_figure_is_a_figure():
    sig = signature.from_probe(probe_json(g=0.0, switch=None))
    assert sig.eager_limit is None   # no switch measured: no limit known, not the largest size
    assert sig.small.get("g") == 0.0


def test_the_bulk_regime_is_the_last_that_gives_G_and_a_regime_may_start_at_0_bytes(tmp_path):
    sig = signature.load_file(toml_target(tmp_path, """
[[regime]]
bytes = [0, 64]
o_s = "1us"
G = "1ns/B"
[[regime]]
bytes = [65, 8192]
G = "2ns/B"
[[regime]]
bytes = [8193, "inf"]
L = "5us"
"""))
    assert sig.small.low == 0
    assert sig.bulk.low == 65 and sig.bulk.get("G") == 2.0


def test_a_figure_is_written_back_rounded_to_the_ps_and_ages_turn_at_their_unit():
    assert signature.knob_text("L", 1234.5678) == "1234.568ns"
    assert signature.knob_text("G", 0.0126) == "0.013ns/B"
    assert signature.knob_text("L", 0.0004) == "0"
    assert signature.age_text(0.0, now=119.0) == "119 s ago"
    assert signature.age_text(0.0, now=120.0) == "2 min ago"

# ---- the knobs: target - host ------------------------------------------------------

def test_the_hosts_own_signature_as_target_sets_no_knob(host_file):
    host = signature.load_file(host_file)
    plan = target.compute(signature.load_file(host_file), host)
    assert plan.knobs() == {} and all(r.status == "equal" and r.delta == 0 for r in plan.rows)
    assert plan.cannot == [] and target.refusal(plan) is None
    proc, env = dry_run("--target", str(host_file), "--host-signature", str(host_file))
    assert proc.returncode == 0, proc.stderr
    assert {env[v] for v in ("LOGGP_OS", "LOGGP_OR", "LOGGP_GAP", "LOGGP_LATENCY")} == {"0ns"}
    assert env["LOGGP_GAP_PER_BYTE"] == "0ns/B"


def test_a_slower_target_applies_exactly_target_minus_host(tmp_path, host_file):
    path = toml_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\no_s = "1.7us"\no_r = "2.5us"\ng = "3.3us"\n'
                                 'L = "10.4us"\nG = "1.25ns/B"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file))
    assert plan.knobs() == pytest.approx({"o_s": 1500, "o_r": 2000, "g": 3000, "L": 10000, "G": 1.2})
    proc, env = dry_run("--target", str(path), "--host-signature", str(host_file))
    assert proc.returncode == 0, proc.stderr
    assert (env["LOGGP_OS"], env["LOGGP_OR"], env["LOGGP_GAP"], env["LOGGP_LATENCY"]) == \
        ("1.5us", "2us", "3us", "10us")
    assert env["LOGGP_GAP_PER_BYTE"] == "1.2ns/B"
    assert "target t" in proc.stderr and "measured" in proc.stderr  # the banner and the file's age


def test_a_faster_target_is_refused_naming_the_parameter_and_both_values(tmp_path, host_file):
    path = toml_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\no_s = "1us"\nL = "0.1us"\n')
    proc, _ = dry_run("--target", str(path), "--host-signature", str(host_file))
    assert proc.returncode == 2
    refusal = [line for line in proc.stderr.splitlines() if "faster than this host" in line]
    assert len(refusal) == 1
    assert "L (target 0.1 us, this host 0.4 us)" in refusal[0] and "o_s" not in refusal[0]


def test_clip_runs_a_faster_parameter_at_the_hosts_value_and_says_how_far(tmp_path, host_file):
    path = toml_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\no_s = "1us"\nL = "0.1us"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file), clip=True)
    assert plan.knobs() == pytest.approx({"o_s": 800})
    lines = target.summary_lines(plan)
    assert any("L: target 0.1 us" in line and "4.00x the target" in line for line in lines)
    assert any("reached 1 of the 2 parameters" in line and "clipped: L" in line for line in lines)
    proc, env = dry_run("--target", str(path), "--host-signature", str(host_file), "--clip")
    assert proc.returncode == 0, proc.stderr
    assert env["LOGGP_LATENCY"] == "0ns" and env["LOGGP_OS"] == "800ns"


def test_clip_says_how_far_a_target_of_zero_is_without_a_ratio(tmp_path, host_file):
    # a target of exactly 0 (an ideal network's L) has no "x the target": the host's value above it
    path = toml_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\no_s = "1us"\nL = "0us"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file), clip=True)
    assert [r.param for r in plan.clipped()] == ["L"]
    lines = target.summary_lines(plan)
    assert any("L: target 0" in line and "0.4 us above a target of 0" in line for line in lines), lines


def test_a_start_up_time_goes_into_L_and_keeps_the_hosts_o(tmp_path, host_file):
    path = toml_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\nT0 = "10.7us"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file))
    # L = T0 - host o_s - host o_r = 10.7 - 0.2 - 0.5 = 10.0 us; host L 0.4 -> knob 9.6 us
    assert plan.knobs() == pytest.approx({"L": 9600})
    kept = {r.param for r in plan.rows if r.status == "kept"}
    assert kept == {"o_s", "o_r", "g", "G"}


def test_what_no_knob_can_reach_is_named(tmp_path, host_file):
    path = toml_target(tmp_path, 'eager_limit_bytes = 65536\n[[regime]]\nbytes = [1, 65536]\nL = "5us"\n'
                                 '[[regime]]\nbytes = [65537, "inf"]\nT0 = "20us"\nG = "1ns/B"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file))
    assert plan.knobs() == pytest.approx({"L": 4600, "G": 0.95})  # L from the small regime, G from the bulk one
    text = "\n".join(plan.cannot)
    assert "65537 B and up (T0 20 us)" in text and "eager limit 65536 B (this host's: 4096 B)" in text


def test_a_host_file_measured_under_knobs_is_refused(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(probe_json(knobs={"o_s": "0ns", "o_r": "0ns", "g": "0ns", "G": "0ns/B",
                                                 "L": "10us"})))
    proc, _ = dry_run("--target", "now", "--host-signature", str(path))
    assert proc.returncode == 2 and "measured with knobs L=10us" in proc.stderr


def test_target_and_knob_flags_do_not_mix(host_file):
    proc, _ = dry_run("--target", "now", "--host-signature", str(host_file), "--L", "1us")
    assert proc.returncode == 2 and "drop --L" in proc.stderr
    proc, _ = dry_run("--clip")
    assert proc.returncode == 2 and "go with --target" in proc.stderr


def test_across_hosts_a_host_signature_must_be_given(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n")
    proc, _ = dry_run("--target", "now", "--hostfile", str(hosts))
    assert proc.returncode == 2 and "give --host-signature FILE" in proc.stderr
    assert "measuring" not in proc.stderr


def test_the_age_of_a_host_file_is_said_in_words():
    assert signature.age_text(1000.0, now=1030.0) == "30 s ago"
    assert signature.age_text(0.0, now=3 * 3600.0) == "3.0 h ago"
    assert signature.age_text(0.0, now=5 * 86400.0) == "5 days ago"


# ---- loggp calibrate --target: target vs host vs measured under emulation -----------

from loggp.experiments import calibrate as calmod, target_calibration  # noqa: E402
from exp_synthetic import BASE, synthetic_probe  # noqa: E402


def synthetic_host(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(probe_json(o_s=BASE["o_s"], o_r=BASE["o_r"], g=BASE["g"], L=BASE["L"], G=BASE["G"])))
    return path


def calibrate_target(tmp_path, target_spec, scale=None, noise=0.0, extra=(), first_only=None):
    """`loggp calibrate --target` against a synthetic apparatus; (exit code, stdout, runner calls).
    first_only: a scale the apparatus has in its first run only."""
    calls = []

    def runner(knob_sets, probe_args):
        sizes = [int(x) for x in probe_args[probe_args.index("--sizes") + 1].split(",")]
        calls.append(knob_sets)
        now = first_only if first_only and len(calls) == 1 else scale
        return [synthetic_probe(sizes, k, scale=now, noise=noise) for k in knob_sets]

    argv = ["--target", str(target_spec), "--host-signature", str(synthetic_host(tmp_path)),
            "--out", str(tmp_path / "cal"), *extra]
    return calmod.CalibrateCommand(runner).main(argv), calls


def test_calibrate_target_meets_every_parameter_with_a_perfect_apparatus(tmp_path, capsys):
    code, calls = calibrate_target(tmp_path, "now")
    out = capsys.readouterr().out
    assert calls == [[{}, pytest.approx({"o_s": 2.75, "o_r": 2.0, "g": 5.0, "L": 4.7, "G": 26.216})]]
    assert code == 0, out
    assert "5 met, 0 missed, 0 unresolved" in out
    record = json.loads((tmp_path / "cal" / "target.json").read_text())
    assert {r["param"]: r["verdict"] for r in record["rows"]} == {p: "met" for p in ("o_s", "o_r", "g", "L", "G")}


def test_calibrate_target_says_missed_for_a_knob_doing_half_its_job(tmp_path, capsys):
    code, calls = calibrate_target(tmp_path, "now", scale={"L": 0.5})
    out = capsys.readouterr().out
    assert code == 3 and len(calls) == 2    # measured again: the miss repeated
    line = next(line for line in out.splitlines() if line.startswith("L "))
    assert line.endswith("missed (a second run read 2.65 us: missed again)"), line
    assert "4 met, 1 missed" in out


def test_calibrate_target_a_miss_one_run_only_shows_is_unresolved(tmp_path, capsys):
    code, calls = calibrate_target(tmp_path, "now", first_only={"L": 0.5})
    out = capsys.readouterr().out
    assert code == 0 and len(calls) == 2
    line = next(line for line in out.splitlines() if line.startswith("L "))
    assert line.endswith("unresolved (a second run read 5 us: not repeated)"), line
    assert "4 met, 0 missed, 1 unresolved" in out
    record = json.loads((tmp_path / "cal" / "target.json").read_text())
    assert "emulated_again" in record["probes"]
    assert next(r for r in record["rows"] if r["param"] == "L")["again"]["verdict"] == "met"


def test_calibrate_target_is_unresolved_when_the_interval_crosses_the_goal(tmp_path, capsys):
    # 5 % noise: each reading's interval is wider than the 2 % goal
    code, _ = calibrate_target(tmp_path, "now", noise=0.05)
    out = capsys.readouterr().out
    assert "0 met, 0 missed, 5 unresolved" in out.splitlines()[-2]
    assert code == 0  # the noise hid the answer: not a failure, as `loggp calibrate`
    assert "0 met" in out


def test_calibrate_target_judges_a_kept_parameter_against_the_host(tmp_path, capsys):
    code, calls = calibrate_target(tmp_path, "100baset")
    out = capsys.readouterr().out
    assert calls[0][1].keys() == {"L", "G"}
    o_s = next(line for line in out.splitlines() if line.startswith("o_s "))
    assert "aim: the host's" in o_s and o_s.split()[1] == "-"
    assert code == 0, out


def test_the_verdict_is_three_way():
    r = target_calibration.reading
    assert target_calibration.verdict(r(1.0, 0.01, 50), 0.98, 1.02) == "met"
    assert target_calibration.verdict(r(1.5, 0.1, 50), 0.98, 1.02) == "missed"
    assert target_calibration.verdict(r(1.0, 0.1, 50), 0.98, 1.02) == "unresolved"
    assert target_calibration.verdict(r(1.0, float("inf"), 50), 0.98, 1.02) == "unresolved"
    assert target_calibration.tolerance("L", 1000.0, 65536) == 100.0
    assert target_calibration.tolerance("L", 50000.0, 65536) == 1000.0
    assert target_calibration.tolerance("G", 26.0, 65536) == pytest.approx(0.52)


def test_G_is_read_on_one_side_of_the_protocol_switch():
    sizes = [8, 4096, 6144, 16384, 65536]
    result = synthetic_probe(sizes, {"G": 2.0}, eager_limit=8192)
    result["summary"] = {"protocol_switch_bytes": 16384}
    assert target_calibration.readings(result)["G"].estimate == pytest.approx(2.1, rel=1e-3)
    result = synthetic_probe(sizes, {"G": 2.0}, eager_limit=32768)
    result["summary"] = {"protocol_switch_bytes": 65536}  # one size past it: those below are used
    assert target_calibration.readings(result)["G"].estimate == pytest.approx(2.1, rel=1e-3)


def test_a_reading_has_the_samples_of_its_scarcest_part_and_a_zero_half_width_is_exact():
    sizes = [8, 4096, 16384, 65536]
    result = synthetic_probe(sizes, {"G": 2.0}, eager_limit=8192)
    result["summary"] = {"protocol_switch_bytes": 16384}
    by_size = {s["bytes"]: s for s in result["sizes"]}
    by_size[8]["T_us"]["samples"] = 30       # L = T - o_s - o_r: as many as its fewest part
    by_size[8]["o_r_us"]["samples"] = 40
    by_size[65536]["g_us"]["samples"] = 20   # G: a slope between two sizes' g
    by_size[8]["o_s_us"]["ci95_half"] = 0.0  # every sample alike: an interval of no width, not none
    got = target_calibration.readings(result)
    assert got["L"].n == 30 and got["o_r"].n == 40 and got["o_s"].n == 50
    assert got["G"].n == 20
    o_s = got["o_s"]
    assert o_s.low == o_s.estimate == o_s.high == pytest.approx(1e3 * (BASE["o_s"] + 8 * 0.00002))


def test_calibrate_target_refuses_the_sweeps_options(tmp_path, capsys):
    code, calls = calibrate_target(tmp_path, "now", extra=["--quick"])
    assert code == 2 and calls == [] and "drop --quick" in capsys.readouterr().err


def test_calibrate_target_says_when_the_host_moved_from_its_signature(tmp_path, capsys):
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(probe_json(o_s=BASE["o_s"], o_r=BASE["o_r"] - 0.5, g=BASE["g"], L=BASE["L"],
                                          G=BASE["G"])))
    calls = []

    def runner(knob_sets, probe_args):
        sizes = [int(x) for x in probe_args[probe_args.index("--sizes") + 1].split(",")]
        calls.append(knob_sets)
        return [synthetic_probe(sizes, k) for k in knob_sets]
    code = calmod.CalibrateCommand(runner).main(["--target", "now", "--host-signature", str(path),
                                                  "--out", str(tmp_path / "cal")])
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note: this host reads")]
    assert len(notes) == 1 and "o_r 0.9002 us now, its signature 0.4 us" in notes[0], out
    assert code == 3  # o_r reads 0.5 us above the target: the knob came from a stale signature


# ---- both sides of each size boundary ------------------------------------------

@pytest.mark.parametrize("second, overlaps", [("[64, 128]", True), ("[65, 128]", False)])
def test_a_regime_may_start_one_byte_after_the_last_one_ends(tmp_path, second, overlaps):
    path = toml_target(tmp_path, f'[[regime]]\nbytes = [1, 64]\nL = "5us"\n[[regime]]\nbytes = {second}\n'
                                 'G = "1ns/B"\n')
    if overlaps:
        with pytest.raises(signature.SignatureError, match="overlaps"):
            signature.load_file(path)
    else:
        sig = signature.load_file(path)
        assert [(r.low, r.high) for r in sig.regimes] == [(1, 64), (65, 128)]


@pytest.mark.parametrize("bytes_, ok", [("[64, 64]", True), ("[64, 63]", False)])
def test_a_regime_of_one_size_is_read_and_a_reversed_one_refused(tmp_path, bytes_, ok):
    path = toml_target(tmp_path, f'[[regime]]\nbytes = {bytes_}\nL = "5us"\n')
    if ok:
        assert signature.load_file(path).small.covers() == "64-64 B"
    else:
        with pytest.raises(signature.SignatureError, match="LOW <= HIGH"):
            signature.load_file(path)


@pytest.mark.parametrize("switch, limit", [(8192, 4096), (8193, 8192), (4097, 4096), (4096, 64)])
def test_a_probe_files_eager_limit_is_the_largest_size_below_its_switch(tmp_path, switch, limit):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(probe_json(switch=switch)))
    assert signature.load_file(path).eager_limit == limit


@pytest.mark.parametrize("eager, named", [(4096, False), (4097, True), (4095, True)])
def test_an_eager_limit_off_the_hosts_by_one_byte_is_named(tmp_path, host_file, eager, named):
    path = toml_target(tmp_path, f'eager_limit_bytes = {eager}\n[[regime]]\nbytes = [1, 4096]\nL = "5us"\n')
    plan = target.compute(signature.load_file(path), signature.load_file(host_file))
    assert any("eager limit" in line for line in plan.cannot) == named
