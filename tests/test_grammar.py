"""The one grammar of every command (docs/cli.md), as a user meets it on the
command line: sizes, durations, knob names, outputs, exit codes."""
import os
import signal
import subprocess
import time

import pytest

from loggp.knobs import grammar
from loggp.knobs.command import EXIT_INTERRUPTED, EXIT_MISSED, EXIT_USAGE
from tests.testkit import installed, run


STUDY = '''name = "s"
repetitions = 1
np = 1

[[benchmark]]
command = ["true"]
runtime_regex = "t=(\\\\S+)"
'''


def loggp(*args, **kw):
    return run([installed("loggp"), *args], **kw)


# ---- the grammar's own parsers -------------------------------------------------------

@pytest.mark.parametrize("text, size", [("4096", 4096), ("64K", 65536), ("64KiB", 65536), ("1M", 1 << 20),
                                        ("1MiB", 1 << 20), ("1.5K", 1536), ("8B", 8), ("1G", 1 << 30)])
def test_sizes_take_K_KiB_M_MiB(text, size):
    assert grammar.parse_size(text) == size
    assert grammar.parse_size(grammar.format_size(size)) == size


@pytest.mark.parametrize("text, said", [("64kb", "not a size"), ("1.1B", "not a whole number"),
                                        ("-8", "not a size"), ("", "not a size")])
def test_a_bad_size_is_named(text, said):
    with pytest.raises(grammar.GrammarError, match=said):
        grammar.parse_size(text)


@pytest.mark.parametrize("text, seconds", [("1s", 1.0), ("250ms", 0.25), ("10min", 600.0), ("2h", 7200.0),
                                           ("0", 0.0), ("1.5s", 1.5), ("20us", 20e-6)])
def test_durations_carry_their_unit(text, seconds):
    assert grammar.parse_duration(text) == pytest.approx(seconds)
    assert grammar.parse_duration(grammar.format_duration(seconds)) == pytest.approx(seconds)


@pytest.mark.parametrize("seconds, text", [
    (3600.0, "1h"), (3599.0, "3599s"), (90.0, "90s"), (60.0, "1min"), (59.0, "59s"), (1.0, "1s"), (0.999, "999ms"),
    (1e-3, "1ms"), (999e-6, "999us"), (1e-6, "1us"), (999e-9, "999ns"), (1e-9, "1ns")])
def test_a_duration_is_written_in_the_largest_unit_it_reaches(seconds, text):
    # both sides of each unit's switch: a duration of exactly one unit is written in it (hours
    # and minutes only when whole)
    assert grammar.format_duration(seconds) == text


@pytest.mark.parametrize("text, ok", [("7", False), ("8", True), ("1K", True), ("1025", False), ("1.0K", True)])
def test_a_size_limit_holds_both_its_ends(text, ok):
    if ok:
        assert 8 <= grammar.parse_size(text, low=8, high=1024) <= 1024
    else:
        with pytest.raises(grammar.GrammarError, match=r"must be in \[8, 1K\]"):
            grammar.parse_size(text, low=8, high=1024)


@pytest.mark.parametrize("text, low_open, ok", [("0", False, True), ("0", True, False), ("1ns", True, True),
                                                ("10s", False, True), ("10000000001ns", False, False)])
def test_a_duration_limit_holds_both_its_ends_open_or_closed(text, low_open, ok):
    if ok:
        assert 0 <= grammar.parse_duration(text, low=0.0, high=10.0, low_open=low_open) <= 10
    else:
        with pytest.raises(grammar.GrammarError, match=r"must be in [\[(]0, 10s\]"):
            grammar.parse_duration(text, low=0.0, high=10.0, low_open=low_open)


@pytest.mark.parametrize("value, said", [("20", "needs its unit (e.g. 20s)"), (20, "with a unit"),
                                         ("1 parsec", "not a duration"), ("5sec", "unknown unit 'sec'")])
def test_a_duration_without_its_unit_is_refused(value, said):
    with pytest.raises(grammar.GrammarError, match=said.replace("(", r"\(").replace(")", r"\)")):
        grammar.parse_duration(value)


def test_settings_take_knob_names_and_the_flag_spelling_with_a_note():
    notes = []
    assert grammar.parse_settings("o_s=1us,G=0.5ns/B", warn=notes.append) == {"o_s": "1us", "G": "0.5ns/B"}
    assert not notes
    assert grammar.parse_settings("os=1us", warn=notes.append) == {"o_s": "1us"}
    assert notes == ["setting 'os=1us': 'os' is the flag's spelling; write 'o_s' (the old spelling will go)"]
    with pytest.raises(grammar.GrammarError, match="unknown knob 'q'"):
        grammar.parse_settings("q=1us")


# ---- exit codes -----------------------------------------------------------------------

def test_the_exit_codes_are_the_documented_ones():
    assert (EXIT_USAGE, EXIT_MISSED, EXIT_INTERRUPTED) == (2, 3, 130)


def test_ctrl_c_during_loggp_run_exits_130():
    # as from a terminal: a suite started in the background (`cmd &`) runs with SIGINT ignored,
    # which its children would inherit
    proc = subprocess.Popen([installed("loggp"), "run", "-n", "1", "--quiet", "--", "sh", "-c",
                             "echo started; exec sleep 30"],
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # once the program runs, however slowly this machine starts it
    assert proc.stdout.readline() == "started\n"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert err.rstrip().endswith("loggp run: interrupted")


# ---- the options that differed from command to command, as a user meets them ----------

def test_calibrate_takes_sizes_with_K_and_a_time_limit_with_its_unit():
    from loggp.experiments import calibrate as cal
    args = cal.parser().parse_args(["--sizes", "8,64K,1M", "--time-limit", "1s"])
    assert cal.parse_sizes(args.sizes) == [8, 65536, 1 << 20] and args.time_limit == 1.0
    # on the command line: sizes and time limit taken, so the next check is the one that speaks
    proc = loggp("calibrate", "--sizes", "8,16K,64K", "--time-limit", "1s", "--rounds", "0")
    assert proc.returncode == EXIT_USAGE and proc.stderr.startswith("loggp calibrate: --rounds 0"), proc.stderr
    proc = loggp("calibrate", "--sizes", "8,64Q")
    assert proc.returncode == EXIT_USAGE and "'64Q' is not a size" in proc.stderr
    proc = loggp("calibrate", "--time-limit", "1")
    assert proc.returncode == EXIT_USAGE and "'1': a duration needs its unit (e.g. 1s)" in proc.stderr
    help_text = " ".join(loggp("calibrate", "--help").stdout.split())
    assert "(default 1.5s)" in help_text and "(default 8,64,512,4K,16K,64K)" in help_text
    assert "(default results/calibrate)" in help_text


def test_tune_takes_sizes_with_K_and_a_timeout_with_its_unit():
    from loggp.experiments import tune
    parser = tune.TuneCommand().parser()
    args = parser.parse_args(["packet", "--max-size", "64K", "--min-size", "1K", "--timeout", "90s"])
    assert (args.max_size, args.min_size, args.timeout) == (65536, 1024, 90.0)
    proc = loggp("tune", "packet", "--max-size", "64K", "--min-size", "128K", "--timeout", "90s")
    assert proc.returncode == EXIT_USAGE and "--min-size 131072 is larger than --max-size 65536" in proc.stderr
    proc = loggp("tune", "packet", "--timeout", "600")
    assert proc.returncode == EXIT_USAGE and "'600': a duration needs its unit" in proc.stderr
    assert "(default 10min)" in loggp("tune", "packet", "--help").stdout


def test_probe_takes_a_time_limit_with_its_unit_only():
    proc = loggp("probe", "--time-limit", "1", "--sizes", "8")
    assert proc.returncode == EXIT_USAGE
    assert proc.stderr.startswith("loggp probe: --time-limit '1': a duration needs its unit (e.g. 1s)")


def test_a_study_timeout_needs_its_unit_as_a_string_or_a_number(tmp_path):
    for value, said in (('"20"', "'20': a duration needs its unit (e.g. 20s)"), ("20", "20 is not a duration")):
        path = tmp_path / "s.toml"
        path.write_text(STUDY.replace('name = "s"', f'name = "s"\ntimeout = {value}'))
        proc = loggp("study", "run", path, "--out", tmp_path / "r", "--no-report")
        assert proc.returncode == EXIT_USAGE and said in proc.stderr, proc.stderr
        assert not (tmp_path / "r").exists(), "refused before any run"


def test_probe_knob_set_and_tune_setting_take_the_same_names(tmp_path):
    from loggp.experiments import packet_sweep, probe
    assert probe.probe_knob_set("o_s=1us,L=5us") == "o_s=1us,L=5us"
    assert packet_sweep.parse_setting("o_s=1us,L=5us")[1] == {"o_s": 1000.0, "L": 5000.0}
    # the flag spelling is an alias with a note, in both
    proc = loggp("tune", "packet", "--setting", "os=1us", "--min-size", "64K", "--max-size", "1K")
    assert proc.returncode == EXIT_USAGE and "--min-size 65536 is larger" in proc.stderr
    assert "loggp tune packet: --setting 'os=1us': 'os' is the flag's spelling; write 'o_s'" in proc.stderr
    out = tmp_path / "p.json"
    proc = loggp("probe", "--knob-set", "os=1us", "--knob-set", "zero", "--sizes", "8", "--time-limit", "0.1s",
                 "--rounds", "1", "--quiet", "--json", out, timeout=300)
    assert "--knob-set 'os=1us': 'os' is the flag's spelling; write 'o_s'" in proc.stderr
    assert proc.returncode == 0, proc.stderr


def test_fit_has_g_and_says_did_you_mean_within_the_knob():
    proc = loggp("fit", "x.json", "--g", "1us")
    assert "unrecognized" not in proc.stderr and "--g" not in proc.stderr.split(":")[0]
    proc = loggp("fit", "x.json", "--gap", "1us")
    assert "(did you mean --g?)" in proc.stderr


def test_calibrate_sweep_and_bench_values_refuse_bare_numbers():
    proc = loggp("calibrate", "--knobs", "L", "--sweep", "L=0,5")
    assert proc.returncode == EXIT_USAGE and "'5': a bare number has no unit" in proc.stderr
    proc = loggp("bench", "knobs", "--values", "5")
    assert proc.returncode == EXIT_USAGE and "'5': a bare number has no unit" in proc.stderr


def test_old_spellings_say_which_one_to_use(tmp_path):
    import contextlib
    import io
    from loggp import cli
    bench = cli.command("bench")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        args = bench.parser().parse_args(["knobs", "--compute-ns", "2000", "--values-us", "1"])
    assert args.compute_ns == 2000 and args.values_us == [1.0]
    assert "--compute-ns is the old spelling of --compute" in err.getvalue()
    assert "--values-us is the old spelling of --values" in err.getvalue()
    args = bench.parser().parse_args(["knobs", "--compute", "2us", "--G-sizes", "4K,1M"])
    assert args.compute_ns == 2000 and args.g_sizes == [4096, 1 << 20]


def test_study_results_folder_is_out_with_results_as_an_old_spelling(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    proc = loggp("study", "run", path, "--results", tmp_path / "r", "--no-report", timeout=300)
    assert "--results is the old spelling of --out" in proc.stderr
    assert (tmp_path / "r").is_dir()
    from loggp.harness import study, studyfile
    assert study.results_dir_for(studyfile.load(str(path)), None).endswith("/results/study/s")


def test_study_report_names_a_probe_file_given_as_calibration(tmp_path):
    probe_file = tmp_path / "probe.json"
    probe_file.write_text('{"schema": "loggp-probe/1", "knobs": {"L": "0ns"}, "knob_sets": []}')
    (tmp_path / "s.toml").write_text(STUDY)
    loggp("study", "run", tmp_path / "s.toml", "--out", tmp_path / "r", "--no-report", timeout=300)
    proc = loggp("study", "report", tmp_path / "r", "--calibration", probe_file, timeout=300)
    assert proc.returncode == EXIT_USAGE
    assert "is a loggp-probe file (written by `loggp probe --json`), not a calibration" in proc.stderr
    assert "--no-baseline" not in proc.stderr


def test_run_on_a_named_testbed_advises_commands_for_that_testbed():
    if subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode != 0:
        pytest.skip("network namespaces cannot be made here")
    name = f"gr{os.getpid() % 100000}"
    assert loggp("testbed", "up", "--hosts", "2", "--name", name, timeout=120).returncode == 0
    try:
        proc = loggp("run", "-n", "3", "--testbed", name, "--", "true")
    finally:
        assert loggp("testbed", "down", "--name", name, timeout=120).returncode == 0
    assert proc.returncode == EXIT_USAGE
    assert f"`loggp testbed down --name {name}` and `loggp testbed up --hosts 3 --name {name}`" in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_launcher_never_outlives_loggp_run(sig, tmp_path):
    """loggp run waits for its launcher instead of becoming it: a signal that ends it,
    even SIGKILL, ends the launcher and the program too."""
    marker = tmp_path / "alive"
    proc = subprocess.Popen([installed("loggp"), "run", "-n", "1", "--quiet", "--", "sh", "-c",
                             f"echo $$ > {marker}; sleep 60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    program = int(marker.read_text())
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == (128 + sig if sig != signal.SIGKILL else -sig)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(program, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(program, signal.SIGKILL)
        pytest.fail(f"the program (pid {program}) outlived loggp run")


@pytest.mark.parametrize("command", [["run", "-n", "2", "--dry-run"], ["predict", "."], ["fit", "x.json"]])
def test_a_knob_name_as_a_flag_is_read_as_the_flag_with_a_note(command):
    proc = loggp(*command, "--o_s", "1us", *(["--", "true"] if command[0] == "run" else []))
    assert f"loggp {command[0]}: --o_s is written --os on the command line; read as --os" in proc.stderr
    if command[0] == "run":
        assert proc.returncode == 0 and "LOGGP_OS=1us" in proc.stdout


def test_a_knob_name_among_the_programs_arguments_is_left_alone():
    proc = loggp("run", "-n", "2", "--dry-run", "--", "echo", "--o_s", "1us")
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("echo --o_s 1us") and "--o_s" not in proc.stderr
