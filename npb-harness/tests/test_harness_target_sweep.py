"""A study's `targets`: one setting per target network, run through `loggp run
--target` with the study's host signature, and the errors bad lists get."""
import json

import pytest

from loggp.experiments import signature
from loggp.harness import runner, studyfile, target_sweep

STUDY = """
name = "t"
np = [2]
{targets}
[launcher]
kind = "template"
template = "{{program}}"

[[benchmark]]
name = "fake"
command = ["{{fake}}", "S"]
runtime_regex = '(x)'
"""


@pytest.fixture
def load(write_study):
    def study(targets):
        return studyfile.load(write_study(STUDY.format(targets=targets)))
    return study


def test_each_target_is_a_setting_with_the_knobs_at_zero(load):
    study = load('targets = ["now", "100baset"]')
    targeted = [s for s in study.settings() if s.sweep == "target"]
    assert [dict(s.knobs)["target"] for s in targeted] == ["now", "100baset"]
    assert all(dict(s.knobs)["L"] == "0ns" and dict(s.knobs)["o_s"] == "0ns" for s in targeted)
    assert len({s.key() for s in study.settings()}) == 3  # the baseline and two targets


def test_a_target_run_gets_target_and_host_signature_and_no_knob_flags(load, tmp_path):
    (tmp_path / "other.json").write_text(json.dumps({"summary": {"o_s_us": 1, "o_r_us": 1, "g_us": 1, "L_us": 1,
                                                                 "G_ns_per_byte": 1}}))
    study = load('targets = ["now", "other.json"]')
    cmds = {}
    for s in study.settings():
        row = {"np": s.np, "class": s.klass, "knobs": json.dumps(dict(s.knobs))}
        cmds[dict(s.knobs).get("target", "baseline")] = runner.build_command(study, study.benchmarks[0], row, "/p",
                                                                            "/r/host-signature.json")
    now = cmds["now"]
    assert now[now.index("--target") + 1] == "now"
    assert now[now.index("--host-signature") + 1] == "/r/host-signature.json"
    assert "--L" not in now and "--os" not in now  # --target sets all five itself
    other = cmds["other.json"]
    assert other[other.index("--target") + 1] == str(tmp_path / "other.json")  # relative to the study file
    assert "--target" not in cmds["baseline"] and "--L" in cmds["baseline"]


def probe_summary(g_us):
    return {"summary": {"o_s_us": 0.2, "o_r_us": 0.5, "g_us": g_us, "L_us": 0.3, "G_ns_per_byte": 0.05}}


def test_the_host_signature_is_measured_once(tmp_path):
    calls = []

    def measure():
        calls.append(1)
        return probe_summary(0.3)
    first = target_sweep.host_signature(str(tmp_path), measure)
    second = target_sweep.host_signature(str(tmp_path), measure)
    assert first == second and calls == [1]
    assert json.loads(open(first).read()) == probe_summary(0.3)


def test_a_disturbed_host_reading_is_measured_again(tmp_path):
    readings = [probe_summary(-25.0), probe_summary(0.3)]
    path = target_sweep.host_signature(str(tmp_path), lambda: readings.pop(0))
    assert readings == [] and json.loads(open(path).read())["summary"]["g_us"] == 0.3
    with pytest.raises(signature.SignatureError, match="g_us = -1.0.*in each of 3 measurements"):
        target_sweep.host_signature(str(tmp_path / "x"), lambda: probe_summary(-1.0))


def test_a_kept_host_file_that_is_no_signature_is_refused(tmp_path):
    (tmp_path / target_sweep.HOST_SIGNATURE).write_text(json.dumps(probe_summary(-1.0)))
    with pytest.raises(signature.SignatureError, match="delete it to measure this host again"):
        target_sweep.host_signature(str(tmp_path), lambda: probe_summary(0.3))


@pytest.mark.parametrize("targets, named", [
    ('targets = "now"', "expected a non-empty list"),
    ("targets = []", "expected a non-empty list"),
    ('targets = ["now", "now"]', "listed twice"),
    ('targets = ["warp-drive"]', "unknown target 'warp-drive'"),
    ('targets = ["missing.json"]', "missing.json"),
])
def test_bad_targets_are_refused_naming_the_problem(load, targets, named):
    with pytest.raises(studyfile.StudyError, match=named):
        load(targets)
