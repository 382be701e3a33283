"""`loggp main` shows the packet-size tuning once, at small size, and resumes."""
from loggp import main as mainmod
from loggp.experiments import precision, tune
from loggp.knobs.command import EXIT_FAILED, EXIT_MISSED, EXIT_OK


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
    assert int(calls[0][calls[0].index("--reps") + 1]) >= precision.MIN_SAMPLES  # enough for intervals


def test_a_missed_tuning_verdict_is_printed_and_never_fails_the_job(monkeypatch, tmp_path, capsys):
    for status, expected in ((EXIT_MISSED, EXIT_OK), (EXIT_FAILED, EXIT_FAILED)):
        out = tmp_path / str(status)
        monkeypatch.setattr(tune, "main", lambda argv: status)
        assert mainmod.packet_tuning(out, out / "calibration.json") == expected
    err = capsys.readouterr().err
    assert "a predicted best missed the measured one" in err and f"failed (exit {EXIT_FAILED})" in err
