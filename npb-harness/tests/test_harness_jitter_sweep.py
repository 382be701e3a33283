"""A study's [jitter] table: the settings it adds (L fixed, spread swept), the
`loggp run` flags each gets, and the errors bad tables get."""
import json

import pytest

from loggp.harness import runner, studyfile


def test_settings_hold_L_and_sweep_the_spread_from_none(study_with_table):
    study = study_with_table('[jitter]\nL = "10us"\nL_jitter = ["normal:1us", "exp:4us"]\n')
    jit = [s for s in study.settings() if s.sweep == "L_jitter"]
    assert [dict(s.knobs)["L_jitter"] for s in jit] == ["none", "normal:1us", "exp:4us"]
    assert all(dict(s.knobs)["L"] == "10us" and dict(s.knobs)["g"] == "0ns" for s in jit)
    assert len({s.key() for s in study.settings()}) == 4  # with the baseline, each once


def test_a_jittered_run_gets_the_flag_and_the_constant_one_does_not(study_with_table):
    study = study_with_table('[jitter]\nL = "10us"\nL_jitter = ["pareto:2us:3"]\n')
    cmds = {}
    for s in study.settings():
        row = {"np": s.np, "class": s.klass, "knobs": json.dumps(dict(s.knobs))}
        cmds[dict(s.knobs).get("L_jitter", "baseline")] = runner.build_command(study, study.benchmarks[0], row, "/p")
    assert cmds["pareto:2us:3"][cmds["pareto:2us:3"].index("--L-jitter") + 1] == "pareto:2us:3"
    assert "--L-jitter" not in cmds["none"] and "--L-jitter" not in cmds["baseline"]
    assert cmds["none"][cmds["none"].index("--L") + 1] == "10us"


def test_a_study_without_jitter_keeps_its_settings(study_with_table):
    study = study_with_table("")
    assert [s.sweep for s in study.settings()] == ["baseline"]
    assert all(len(s.knobs) == 5 for s in study.settings())


@pytest.mark.parametrize("table, named", [
    ('[jitter]\nL_jitter = ["normal:1us"]\n', "needs L"),
    ('[jitter]\nL = "0us"\nL_jitter = ["normal:1us"]\n', "above 0"),
    ('[jitter]\nL = "10us"\nL_jitter = ["gauss:1us"]\n', "gauss"),
    ('[jitter]\nL = "10us"\nL_jitter = ["normal:1"]\n', "'1'"),
    ('[jitter]\nL = "10us"\nL_jitter = []\n', "non-empty"),
    ('[jitter]\nL = "10us"\nL_jitter = ["normal:1us"]\nG = "1ns/B"\n', "unknown key 'G'"),
])
def test_bad_jitter_tables_are_refused_naming_the_problem(study_with_table, table, named):
    with pytest.raises(studyfile.StudyError, match=named):
        study_with_table(table)


def test_a_callers_jitter_variables_do_not_reach_a_studys_runs():
    from loggp.harness import jitter_sweep
    env = jitter_sweep.study_environment({"LOGGP_L_JITTER": "normal:1us", "LOGGP_SEED": "3", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}
