"""`loggp predict --jobs N` gives what one process gives, on a generated trace."""
import json

import pytest

from loggp.analysis import synth
from tests.testkit import installed, run


@pytest.fixture(scope="module")
def halo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("halo")
    synth.Pattern("halo", 8, phases=20, nbytes=2048, compute_ns=20000).write(folder)
    return folder


def predict(folder, out, *extra):
    proc = run([installed("loggp"), "predict", folder, "--L", "0:20us:5us", "--o", "1us", "--G", "1ns/B",
                "--json", out, *extra], timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text()), proc.stdout


def test_jobs_split_the_settings_and_change_no_figure(halo, tmp_path):
    one, text_one = predict(halo, tmp_path / "one.json")
    three, text_three = predict(halo, tmp_path / "three.json", "--jobs", "3")
    assert one == three and text_one == text_three
    assert one["knobs"]["L"]["points"][-1]["slowdown_percent"] > 0


@pytest.mark.parametrize("value, said", [("0", "'0' must be at least 1"), ("two", "'two' is not a whole number")])
def test_a_bad_jobs_value_is_refused(halo, value, said):
    proc = run([installed("loggp"), "predict", halo, "--L", "1us", "--jobs", value])
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
