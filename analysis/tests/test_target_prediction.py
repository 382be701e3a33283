"""`loggp predict --target`: a trace replayed at a target network's parameters."""
import json

import pytest

from loggp.analysis import loggops, predict, target_prediction
from loggp.experiments import signature
from tests.testkit import built, installed, run


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trace")
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--trace", folder, "--",
                built("shim/tests/loggp-test-tracecalls"), 200, 8, 4], timeout=300)
    assert proc.returncode == 0, proc.stderr
    return folder


def write_target(tmp_path, body, name="t"):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nsource = "a test"\n' + body)
    return path


def test_the_targets_parameters_and_the_machines_where_it_gives_none(tmp_path):
    machine = loggops.Params(o_s=150.0, o_r=250.0, g=100.0, G=0.05, L=300.0, S=4096)
    now = target_prediction.target_params(signature.resolve("now"), machine)
    assert (now.o_s, now.o_r, now.g, now.L) == pytest.approx((2900, 2900, 5800, 5000))
    assert now.S == 4096  # NOW gives no eager limit: the machine's
    t0 = write_target(tmp_path, 'eager_limit_bytes = 16384\n[[regime]]\nbytes = [1, "inf"]\nT0 = "10.4us"\n')
    p = target_prediction.target_params(signature.load_file(t0), machine)
    assert (p.o_s, p.o_r, p.g, p.G, p.L, p.S) == pytest.approx((150, 250, 100, 0.05, 10000, 16384))


def test_a_start_up_time_below_the_machines_overheads_is_refused(tmp_path):
    machine = loggops.Params(o_s=150.0, o_r=250.0, g=100.0, G=0.05, L=300.0, S=4096)
    t0 = write_target(tmp_path, '[[regime]]\nbytes = [1, "inf"]\nT0 = "0.3us"\n')
    with pytest.raises(target_prediction.TargetPredictionError, match="L = -100 ns"):
        target_prediction.target_params(signature.load_file(t0), machine)


def test_the_predicted_runtime_keeps_what_the_model_does_not_explain():
    assert target_prediction.predicted_runtime(1000.0, 700.0, 900.0) == 1200.0
    assert target_prediction.predicted_runtime(1000.0, 700.0, 600.0) == 900.0  # a faster target


def test_the_machines_own_signature_predicts_the_traced_run(trace_dir, tmp_path):
    m = predict.DEFAULT_MACHINE
    own = write_target(tmp_path, f'eager_limit_bytes = {int(m.S)}\n[[regime]]\nbytes = [1, "inf"]\n'
                                 f'o_s = "{m.o_s}ns"\no_r = "{m.o_r}ns"\ng = "{m.g}ns"\nL = "{m.L}ns"\n'
                                 f'G = "{m.G}ns/B"\n', name="own")
    out = tmp_path / "p.json"
    proc = run([installed("loggp"), "predict", trace_dir, "--target", own, "--target", "now", "--target",
                "100baset", "--json", out])
    assert proc.returncode == 0, proc.stderr
    rows = {r["target"]: r for r in json.loads(out.read_text())["targets"]}
    assert rows["own"]["slowdown_percent"] == pytest.approx(0.0, abs=1e-9)
    # more overhead, gap and latency: slower, in the order of the networks' start-up times
    assert 0 < rows["now"]["slowdown_percent"] < rows["100baset"]["slowdown_percent"]
    assert "target now: predicted" in proc.stdout


def test_an_unknown_target_is_refused_by_name(trace_dir):
    proc = run([installed("loggp"), "predict", trace_dir, "--target", "warp-drive"])
    assert proc.returncode == 2 and "unknown target 'warp-drive'" in proc.stderr
