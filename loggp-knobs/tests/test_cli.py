"""The loggp-knobs command: set/show/reset/env/parse/path, exit codes, help,
and refusal of unsafe or corrupt knob files."""
import json
import os
import subprocess

import pytest

from tests.testkit import installed, run


def knobs(*args, **kw):
    return run([installed("loggp-knobs"), *args], **kw)


def test_set_changes_only_the_knobs_given(private_knob_file):
    assert knobs("set", "--o", "10us").returncode == 0
    assert knobs("set", "--L", "2.5us", "--G", "0.5ns/B").returncode == 0
    shown = json.loads(knobs("show", "--json").stdout)
    assert shown["file"] == str(private_knob_file) and shown["exists"]
    assert shown["knobs"] == {"o_s": "10us", "o_r": "10us", "g": "0ns", "G": "0.5ns/B", "L": "2.5us"}
    assert shown["knobs_ns"] == {"o_s": 10000, "o_r": 10000, "g": 0, "G_per_byte": 0.5, "L": 2500}
    assert oct(private_knob_file.stat().st_mode & 0o777) == "0o600"
    assert oct(private_knob_file.parent.stat().st_mode & 0o777) == "0o700"


def test_show_table_and_reset(private_knob_file):
    knobs("set", "--os", "1us", check=True)
    table = knobs("show").stdout
    assert "o_s  1us" in table and str(private_knob_file) in table
    assert knobs("reset").returncode == 0
    assert json.loads(knobs("show", "--json").stdout)["knobs_ns"]["o_s"] == 0


def test_env_formats_carry_the_current_knobs(private_knob_file):
    knobs("set", "--g", "3us", check=True)
    sh = knobs("env").stdout
    assert "export LOGGP_GAP=3us\n" in sh and "export LOGGP_OS=0ns\n" in sh
    genv = knobs("env", "--format", "mpiexec", "--L", "7us").stdout.split()
    assert genv[:3] == ["-genv", "LOGGP_OS", "0ns"] and ["-genv", "LOGGP_LATENCY", "7us"] == genv[-3:]
    srun = knobs("env", "--format", "srun").stdout.strip()
    assert srun.startswith("--export=ALL,LOGGP_OS=0ns,") and "LOGGP_GAP=3us" in srun
    # env with overrides does not change the file
    assert json.loads(knobs("show", "--json").stdout)["knobs"]["L"] == "0ns"


def test_parse_prints_numbers():
    out = json.loads(knobs("parse", "--L", "5us", "--G", "1us/KiB").stdout)
    assert out == {"G": {"ns": 0.977, "text": "0.977ns/B"}, "L": {"ns": 5000, "text": "5us"}}


@pytest.mark.parametrize("args,mention", [
    (["set", "--o", "10"], "'10'"),
    (["set", "--L", "-1us"], "negative"),
    (["set", "--G", "5ns"], "'5ns'"),
    (["set", "--g", "nan"], "'nan'"),
    (["set", "--L", "11s"], "10 s"),
    (["set", "--x", "1us"], "--x"),
    (["set"], "at least one knob"),
    (["set", "--o", "1us", "--os", "2us"], "given twice"),
    (["set", "--L"], "needs a value"),
    (["set", "--o", "1us", "--via", "netem"], "only L and G"),
    (["set", "--L", "1us", "--via", "carrier-pigeon"], "carrier-pigeon"),
    (["show", "--yaml"], "--yaml"),
    (["env", "--format", "csh"], "csh"),
    (["reset", "now"], "now"),
    (["frobnicate"], "frobnicate"),
    ([], "usage"),
])
def test_bad_use_exits_2_naming_the_problem(args, mention, private_knob_file):
    proc = knobs(*args)
    assert proc.returncode == 2, proc
    assert mention in proc.stderr
    assert not private_knob_file.exists(), "bad use must not write the knob file"


@pytest.mark.parametrize("command", ["set", "show", "reset", "env", "path", "parse"])
def test_help_on_each_command(command):
    proc = knobs(command, "--help")
    assert proc.returncode == 0 and "usage:" in proc.stdout


def test_corrupt_file_is_refused_until_reset(private_knob_file):
    knobs("set", "--o", "1us", check=True)
    private_knob_file.write_text(private_knob_file.read_text() + "L = lots\n")
    for args in (["show"], ["set", "--g", "1us"], ["env"]):
        proc = knobs(*args)
        assert proc.returncode == 1 and "corrupt" in proc.stderr and "line" in proc.stderr, proc
    assert "L = lots" in private_knob_file.read_text(), "a refused file is left as it was"
    assert knobs("reset").returncode == 0
    assert knobs("show").returncode == 0


def test_a_binary_knob_file_is_refused_without_echoing_control_bytes(private_knob_file):
    private_knob_file.parent.mkdir(mode=0o700, parents=True)
    private_knob_file.write_bytes(b"\x1b]0;pwned\x07\x1b[2J\x9b\xfe = 1\n")
    private_knob_file.chmod(0o600)
    proc = subprocess.run([installed("loggp-knobs"), "show"], capture_output=True, timeout=60)
    assert proc.returncode == 1 and b"corrupt" in proc.stderr
    assert not [b for b in proc.stderr if (b < 0x20 and b != 0x0a) or b == 0x7f or b >= 0x80], proc.stderr
    assert b"\\x1b]0;pwned\\x07" in proc.stderr


def test_symlinked_file_is_refused(private_knob_file, tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("o_s = 1us\no_r = 1us\ng = 0ns\nG = 0ns/B\nL = 0ns\n")
    target.chmod(0o600)
    private_knob_file.parent.mkdir(mode=0o700, parents=True)
    os.symlink(target, private_knob_file)
    proc = knobs("show")
    assert proc.returncode == 1 and "symbolic link" in proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a file owned by another user")
def test_file_of_another_user_is_refused(private_knob_file):
    knobs("set", "--o", "1us", check=True)
    os.chown(private_knob_file, 12345, 12345)
    proc = knobs("show")
    assert proc.returncode == 1 and "owned by uid 12345" in proc.stderr


def test_path_follows_the_environment(private_knob_file):
    assert knobs("path").stdout.strip() == str(private_knob_file)


@pytest.mark.parametrize("name, value", [
    ("LOGGP_L_JITTER", "foo"), ("LOGGP_O_JITTER", "pareto:1us:0.5"), ("LOGGP_SEED", "99999999999999999999999"),
    ("LOGGP_SEED", "-5"), ("LOGGP_TOPOLOGY", "/nonexistent/fat-tree.topo"), ("LOGGP_RANKS_PER_NODE", "two"),
    ("LOGGP_L_INTER", "5"), ("LOGGP_G_INTER", "5ns"), ("LOGGP_QUIET", "banana"), ("LOGGP_LIVE", "yes"),
    ("LOGGP_ROUTE", "maybe"), ("LOGGP_ENGINE", "warp"), ("LOGGP_PROFILE", "/etc/hostname"),
    ("LOGGP_TRACE", "/proc/nope"),
])
def test_show_refuses_every_variable_mpi_init_refuses(name, value):
    proc = knobs("show", env={name: value})
    assert proc.returncode == 1, proc
    assert f"{name}={value}: " in proc.stderr.splitlines()[0], proc.stderr
    assert proc.stdout == ""


def test_show_reports_the_jitter_programs_get():
    env = {"LOGGP_L_JITTER": "pareto:2us:2.5", "LOGGP_SEED": "18446744073709551615"}
    assert "jitter: L pareto:2us:2.5, o none, seed 18446744073709551615" in knobs("show", env=env).stdout
    shown = json.loads(knobs("show", "--json", env={**env, "LOGGP_L_INTER": "5us"}).stdout)
    assert shown["jitter"] == {"L": "pareto:2us:2.5", "o": "none", "seed": 18446744073709551615}
    assert shown["per_pair_L"] is True
    assert "jitter:" not in knobs("show").stdout


def test_scope_without_a_value_says_it_needs_one(private_knob_file):
    proc = knobs("set", "--scope")
    assert proc.returncode == 2 and proc.stderr.startswith("loggp-knobs: --scope needs a value (all or kernel)")
    assert "''" not in proc.stderr and not private_knob_file.exists()


@pytest.mark.parametrize("args, hinted", [
    (["--L", "1us", "--L", "2us"], False), (["--os", "1us", "--os", "2us"], False),
    (["--o", "1us", "--os", "2us"], True), (["--or", "1us", "--o", "2us"], True),
])
def test_given_twice_explains_o_only_where_o_is_involved(args, hinted):
    proc = knobs("set", *args)
    assert proc.returncode == 2 and "given twice" in proc.stderr
    assert ("--o sets both o_s and o_r" in proc.stderr) == hinted, proc.stderr


def test_a_folder_in_the_knob_files_place_gets_a_hint_that_fits(private_knob_file):
    private_knob_file.mkdir(parents=True)
    proc = knobs("show")
    assert proc.returncode == 1 and "not a regular file" in proc.stderr
    assert "reset" not in proc.stderr, "reset cannot replace a folder"
    assert "LOGGP_KNOB_FILE" in proc.stderr
    private_knob_file.rmdir()
    private_knob_file.write_text("L = lots\n")
    private_knob_file.chmod(0o600)
    assert "`loggp-knobs reset` writes a fresh file" in knobs("show").stderr


def test_show_without_a_place_for_the_file_shows_the_environment_as_mpi_init_does():
    # cron, systemd, batch: no HOME; MPI_Init then takes the knobs from the environment alone
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CONFIG_HOME", "LOGGP_KNOB_FILE")}
    proc = subprocess.run([str(installed("loggp-knobs")), "show", "--json"], capture_output=True, text=True,
                          env={**env, "LOGGP_LATENCY": "1us"})
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["file"] is None and shown["effective"]["L"] == {"value": "1us", "from": "LOGGP_LATENCY"}


def test_show_names_a_variable_loggp_does_not_read_with_the_closest_name():
    proc = knobs("show", "--json", env={"LOGGP_LATENCEY": "20us", "LOGGP_L_JITER": "normal:5us"})
    assert proc.returncode == 0, proc.stderr
    expected = {"LOGGP_LATENCEY=20us: loggp reads no variable LOGGP_LATENCEY, so it does nothing "
                "(did you mean LOGGP_LATENCY?)",
                "LOGGP_L_JITER=normal:5us: loggp reads no variable LOGGP_L_JITER, so it does nothing "
                "(did you mean LOGGP_L_JITTER?)"}
    assert set(json.loads(proc.stdout)["warnings"]) == expected
    assert {line.removeprefix("loggp-knobs: warning: ") for line in proc.stderr.splitlines()} == expected
    # the effective L is untouched by the misspelling
    assert json.loads(proc.stdout)["effective"]["L"]["from"] != "LOGGP_LATENCEY"
    assert json.loads(knobs("show", "--json", env={"LOGGP_LATENCY": "20us"}).stdout)["warnings"] == []


def test_show_says_which_per_pair_values_no_pair_gets(tmp_path):
    # rank count unknown: the host rule is said as a condition
    proc = knobs("show", env={"LOGGP_L_INTER": "20us"})
    assert proc.returncode == 0
    assert ("LOGGP_L_INTER=20us applies between nodes only: without LOGGP_RANKS_PER_NODE (ranks per emulated "
            "node) the nodes are the hosts" in proc.stderr), proc.stderr
    proc = knobs("show", "--ranks", "2", env={"LOGGP_L_INTER": "20us", "LOGGP_RANKS_PER_NODE": "2"})
    assert ("warning: LOGGP_L_INTER=20us is never applied: LOGGP_RANKS_PER_NODE=2 puts all 2 ranks on one node"
            in proc.stderr), proc.stderr
    assert "never applied" not in knobs("show", "--ranks", "4", env={"LOGGP_L_INTER": "20us",
                                                                       "LOGGP_RANKS_PER_NODE": "2"}).stderr
    assert "never applied" not in knobs("show", "--ranks", "2", "--ranks-elsewhere",
                                        env={"LOGGP_L_INTER": "20us"}).stderr
    topo = tmp_path / "t.topo"
    topo.write_text("ranks_per_node = 2\nL_inter_switch = 20us\nG_inter_switch = 1ns/B\n")
    proc = knobs("show", env={"LOGGP_TOPOLOGY": str(topo)})
    assert (f"LOGGP_TOPOLOGY={topo}: L_inter_switch = 20us and G_inter_switch = 1ns/B are never applied: "
            "without ranks_per_switch no pair is inter-switch" in proc.stderr), proc.stderr
    assert knobs("show", "--ranks", "0").returncode == 2


def variables_read_in_the_sources():
    """Every LOGGP_* name a tracked source reads from the environment: a call given the
    bare name (getenv, the library's readers, os.environ.get), os.environ[...], ${LOGGP_...}."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    reads = re.compile(r'\(\s*"(LOGGP_[A-Z0-9_]+)"\s*[,)]|environ\["(LOGGP_[A-Z0-9_]+)"'
                       r'|\$\{(LOGGP_[A-Z0-9_]+)[:}]')
    files = subprocess.run(["git", "-C", str(root), "ls-files", "*.c", "*.h", "*.py", "*.sh"], capture_output=True,
                           text=True, timeout=60).stdout.split()
    found = set()
    for name in files:
        path = root / name
        if path.is_file() and "/tests/" not in f"/{name}":
            found |= {next(g for g in m.groups() if g) for m in reads.finditer(path.read_text(errors="replace"))}
    return found


def test_every_variable_the_sources_read_is_known_to_show():
    names = variables_read_in_the_sources()
    assert {"LOGGP_TRACE", "LOGGP_QUIET", "LOGGP_OUTSIDE", "LOGGP_COMMAND", "LOGGP_VENV"} <= names, names
    from loggp.knobs import ENVIRONMENT
    # set to an empty value each (the knobs' own, which refuse an empty value, at 0): named if unknown
    proc = knobs("show", "--json", env={name: "0" if name in ENVIRONMENT.values() else "" for name in names})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["warnings"] == []
