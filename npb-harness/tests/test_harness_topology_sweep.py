"""A study's [topology] table: the settings it adds (L or G between nodes
swept, the knobs at 0), the `loggp run` flags each gets, and the errors bad
tables get."""
import json

import pytest

from loggp.harness import runner, studyfile, topology_sweep


def test_settings_sweep_each_inter_node_value_with_the_knobs_at_zero(study_with_table):
    study = study_with_table(np=4, table='[topology]\nranks_per_node = 2\nL_inter = ["10us", "2us"]\n'
                                               'G_inter = ["1ns/B"]\n')
    swept = [s for s in study.settings() if s.sweep != "baseline"]
    assert [(s.sweep, dict(s.knobs)[s.sweep]) for s in swept] == [("L_inter", "2us"), ("L_inter", "10us"),
                                                                  ("G_inter", "1ns/B")]
    assert all(dict(s.knobs)["ranks_per_node"] == "2" and dict(s.knobs)["L"] == "0ns" for s in swept)
    assert len({s.key() for s in study.settings()}) == 4


def test_each_run_gets_the_flags_and_the_baseline_none(study_with_table):
    study = study_with_table(np=4, table='[topology]\nranks_per_node = 2\nL_inter = ["5us"]\n')
    cmds = {}
    for s in study.settings():
        row = {"np": s.np, "class": s.klass, "knobs": json.dumps(dict(s.knobs))}
        cmds[s.sweep] = runner.build_command(study, study.benchmarks[0], row, "/p")
    assert cmds["L_inter"][cmds["L_inter"].index("--L-inter") + 1] == "5us"
    assert cmds["L_inter"][cmds["L_inter"].index("--ranks-per-node") + 1] == "2"
    assert "--L-inter" not in cmds["baseline"] and "--ranks-per-node" not in cmds["baseline"]


def test_without_ranks_per_node_the_hosts_are_the_nodes(study_with_table):
    study = study_with_table(np=4, table='[topology]\nL_inter = ["5us"]\n')  # a template: hosts unknown
    (s,) = [s for s in study.settings() if s.sweep == "L_inter"]
    assert "ranks_per_node" not in dict(s.knobs)


def test_without_ranks_per_node_a_study_on_one_host_is_refused(write_study):
    # mpiexec without a host file starts every rank here: one host, one node, no inter-node pair
    text = 'np = 4\n[topology]\nL_inter = ["5us"]\n[[benchmark]]\nname = "fake"\ncommand = ["{fake}", "S"]\n' \
           "runtime_regex = '(x)'\n"
    with pytest.raises(studyfile.StudyError, match="no ranks_per_node, so the nodes are the hosts"):
        studyfile.load(write_study(text))
    assert studyfile.load(write_study(text.replace("[topology]", "[topology]\nranks_per_node = 2"))).topology


@pytest.mark.parametrize("table, named", [
    ('[topology]\nranks_per_node = 2\n', "needs L_inter or G_inter"),
    ('[topology]\nL_inter = ["5"]\n', "'5'"),
    ('[topology]\nL_inter = []\n', "non-empty"),
    ('[topology]\nL_inter = ["5us", "5000ns"]\n', "listed twice"),
    ('[topology]\nranks_per_node = 0\nL_inter = ["5us"]\n', "whole number"),
    ('[topology]\nranks_per_node = 4\nL_inter = ["5us"]\n', "all 4 ranks on one node"),
    ('[topology]\nL_intra = ["5us"]\n', "unknown key 'L_intra'"),
])
def test_bad_topology_tables_are_refused_naming_the_problem(study_with_table, table, named):
    with pytest.raises(studyfile.StudyError, match=named):
        study_with_table(np=4, table=table)


def test_a_callers_topology_variables_do_not_reach_a_studys_runs():
    env = topology_sweep.study_environment({"LOGGP_L_INTER": "5us", "LOGGP_TOPOLOGY": "/t", "PATH": "/bin"})
    assert env == {"PATH": "/bin"}
