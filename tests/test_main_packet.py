"""`loggp main` shows the packet-size tuning once, at small size, and resumes."""
from loggp import main as mainmod
from loggp.experiments import tune


def test_the_main_job_runs_it_once_at_small_size(monkeypatch, tmp_path):
    calls = []

    def fake(argv):
        calls.append(argv)
        out = tmp_path / "main" / "tune-packet"
        out.mkdir(parents=True)
        (out / "packet.json").write_text("{}")
        return 0
    monkeypatch.setattr(tune, "main", fake)
    calibration = tmp_path / "main" / "calibration" / "calibration.json"
    assert mainmod.packet_tuning(tmp_path / "main", calibration) == 0
    assert mainmod.packet_tuning(tmp_path / "main", calibration) == 0  # resumed: done already
    assert len(calls) == 1 and calls[0][0] == "packet" and "--calibration" not in calls[0]
    assert int(calls[0][calls[0].index("--records") + 1]) <= 4096
