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
    proc = subprocess.Popen([installed("loggp"), "run", "-n", "1", "--quiet", "--", "sleep", "30"],
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert err.rstrip().endswith("loggp run: interrupted")
