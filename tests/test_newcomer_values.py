"""Values: one rule everywhere. Each case walks the command a user types
and checks its exit code and what it says."""
import json

import pytest

from tests.testkit import installed, run


def knobs(*args, **kw):
    return run([installed("loggp-knobs"), *args], **kw)


def loggp(*args, **kw):
    return run([installed("loggp"), *args], **kw)


@pytest.mark.parametrize("flag", ["--o", "--os", "--g", "--L", "--G"])
def test_zero_needs_no_unit(flag):
    proc = knobs("set", flag, "0")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(knobs("show", "--json").stdout)["knobs_ns"] == {
        "o_s": 0, "o_r": 0, "g": 0, "G_per_byte": 0, "L": 0}


def test_zero_in_the_environment_is_accepted_by_show():
    proc = knobs("show", "--json", env={"LOGGP_LATENCY": "0"})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["effective"]["L"] == {"value": "0ns", "from": "LOGGP_LATENCY"}


@pytest.mark.parametrize("value,words", [
    ("10", "only 0 may go without one"),
    ("5 us", "the unit follows the number without a space"),
    ("10 \u00b5s", "the unit follows the number without a space"),
    ("1US", "units are case-sensitive: did you mean 'us'?"),
    ("0.4ps", "resolution of 1 ps"),
    ("0.5ps", "resolution of 1 ps"),
    ("+1us", "a sign is not accepted"),
])
def test_refused_values_say_why(value, words):
    proc = knobs("set", "--L", value)
    assert proc.returncode == 2
    assert f"'{value}'" in proc.stderr and words in proc.stderr, proc.stderr
    if "space" in words or "case" in words:
        assert "ps, ns, us" in proc.stderr, "the message names the accepted units"


def test_micro_sign_is_a_documented_spelling_of_us():
    assert json.loads(knobs("parse", "--L", "10\u00b5s").stdout) == {"L": {"ns": 10000, "text": "10us"}}
    assert "\u00b5s" in knobs("--help").stdout


def test_the_greek_mu_that_looks_like_the_micro_sign_is_us_too():
    assert json.loads(knobs("parse", "--L", "10\u03bcs").stdout) == {"L": {"ns": 10000, "text": "10us"}}
    assert "Greek mu" in knobs("--help").stdout
    proc = run([installed("loggp"), "run", "-n", "2", "--L", "50\u03bcs", "--dry-run", "--", "true"])
    assert proc.returncode == 0 and "LOGGP_LATENCY=50us" in proc.stdout, proc.stdout + proc.stderr
    refused = knobs("set", "--L", "5\u03bcsec")
    assert refused.returncode == 2 and "micro sign or the Greek mu" in refused.stderr, refused.stderr


def test_show_refuses_a_bad_environment_value_naming_it():
    proc = knobs("show", env={"LOGGP_LATENCY": "garbage"})
    assert proc.returncode == 1
    assert "LOGGP_LATENCY=garbage" in proc.stderr and "MPI_Init" in proc.stderr


def test_show_gives_effective_values_and_their_source():
    knobs("set", "--g", "2us", "--L", "1us", check=True)
    proc = knobs("show", env={"LOGGP_LATENCY": "7us"})
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:3] for line in proc.stdout.splitlines()[1:6]}
    assert rows["L"] == ["7us", "LOGGP_LATENCY"]
    assert rows["g"] == ["2us", "file"]
    shown = json.loads(knobs("show", "--json", env={"LOGGP_LATENCY": "7us"}).stdout)
    assert shown["knobs"]["L"] == "1us", "knobs stays the file's values"
    assert shown["effective"]["L"]["value"] == "7us" and shown["effective"]["g"]["from"] == "file"


def test_a_knob_the_file_does_not_name_reads_as_zero(private_knob_file):
    knobs("set", "--o", "1us", check=True)
    private_knob_file.write_text("# edited by hand\no_s = 3us\n")
    proc = knobs("show", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["knobs_ns"] == {"o_s": 3000, "o_r": 0, "g": 0, "G_per_byte": 0, "L": 0}


def test_calibrate_sweep_takes_values_with_units():
    from loggp.experiments import calibrate as cal
    args = cal.parser().parse_args(["--knobs", "L,G", "--sweep", "L=0,1us,10us", "--sweep", "G=0,500ps/B"])
    assert cal.parse_sweeps(args) == {"L": [0.0, 1.0, 10.0], "G": [0.0, 0.5]}
    bare = cal.parser().parse_args(["--knobs", "L", "--sweep", "L=0,5"])
    with pytest.raises(cal.CalibrationError, match="'5': a bare number has no unit"):
        cal.parse_sweeps(bare)


def test_calibrate_sweep_refuses_a_bad_unit_in_the_parsers_words():
    proc = loggp("calibrate", "--knobs", "L", "--sweep", "L=1us,10US")
    assert proc.returncode == 2
    assert "L=1us,10US" in proc.stderr and "did you mean 'us'" in proc.stderr


def test_bench_knobs_values_carry_units():
    from loggp.shim import bench
    assert bench.time_list("1us,250ns,2ms") == [1.0, 0.25, 2000.0]
    proc = loggp("bench", "knobs", "--values", "10")
    assert proc.returncode == 2 and "'10'" in proc.stderr and "only 0" in proc.stderr
    proc = loggp("bench", "knobs", "--values", "1us", "--values-us", "1")
    assert proc.returncode == 2 and "not allowed with" in proc.stderr
    help_text = loggp("bench", "knobs", "--help").stdout
    assert "--values T1,T2" in help_text and "old spelling" in help_text


def test_study_sweep_accepts_zero(tmp_path):
    from loggp.harness import studyfile
    path = tmp_path / "s.toml"
    path.write_text('name = "z"\nrepetitions = 1\nnp = 2\n[sweep]\nL = [0, "0", "10us"]\n'
                    '[[benchmark]]\nkernel = "ep"\nclass = "S"\n')
    study = studyfile.load(str(path))
    assert study.sweep == {"L": [("10us", 10000.0)]}


def test_a_bare_zero_in_the_environment_starts_mpi():
    proc = run([installed("loggp"), "run", "-n", "2", "--", installed("loggp-timing"), "pingpong", "8", "10"],
               env={"LOGGP_LATENCY": "0", "LOGGP_OS": "0"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "halfrtt_us=" in proc.stdout and "L=0ns(env)" in proc.stderr


def test_a_study_with_no_knob_setting_says_only_baselines_run(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('name = "z"\nrepetitions = 1\nnp = 2\n[sweep]\nL = ["0"]\n'
                    '[[benchmark]]\nkernel = "ep"\nclass = "S"\n')
    proc = run([installed("loggp"), "study", "run", path, "--no-report", "--out", tmp_path / "r"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning: no knob setting to measure" in proc.stderr and "only the baselines run" in proc.stderr
