"""The one atomic writer every part uses: a reader sees the old file or the whole new one."""
import os
import stat

import pytest

from loggp.knobs.files import atomic_write, created_mode, write_text_atomic


def test_the_new_text_replaces_the_old_with_the_mode_open_gives(tmp_path):
    path = tmp_path / "result.json"
    path.write_text("old")
    write_text_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == created_mode()
    assert os.listdir(tmp_path) == ["result.json"]


def test_a_script_gets_the_mode_asked_for(tmp_path):
    path = tmp_path / "launch"
    write_text_atomic(path, "#!/bin/sh\n", mode=0o755)
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_bytes_are_written_as_they_are(tmp_path):
    write_text_atomic(tmp_path / "figure.png", b"\x89PNG\x00")
    assert (tmp_path / "figure.png").read_bytes() == b"\x89PNG\x00"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("whole\n")

    def half_then_fail(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert path.read_text() == "whole\n"
    assert os.listdir(tmp_path) == ["table.csv"]


def test_the_writer_sees_the_suffix_it_chooses_a_format_by(tmp_path):
    seen = []
    atomic_write(tmp_path / "plot.svg", lambda tmp: (seen.append(tmp), open(tmp, "w").close()))
    assert seen[0].endswith(".svg") and os.path.dirname(seen[0]) == str(tmp_path)


def test_the_mode_follows_the_umask_without_touching_it():
    old = os.umask(0o027)
    try:
        assert created_mode() == 0o640
        assert os.umask(0o027) == 0o027  # still what it was set to
    finally:
        os.umask(old)
