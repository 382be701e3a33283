"""A rank a signal kills is named by `loggp run` in one line, with its signal: Hydra's
banner gives only a process id and an "exit code" that reads the same for exit(11)
and a segmentation fault. Hydra's exit-codes line (every process's wait status) is
taken out of the launcher's output, whatever the chunks it arrives in."""
import signal

import pytest

from loggp.shim import exit_status
from tests.testkit import built, installed, run

SEGV, EXIT_11 = signal.SIGSEGV, 11 << 8  # wait statuses: killed by signal 11, exit(11)


def test_the_exit_codes_line_is_read_host_by_host():
    assert exit_status.parse("[mpiexec@node1] Exit codes: [node1] 0,11,0\n") == [("node1", [0, 11, 0])]
    assert exit_status.parse("[mpiexec@a] Exit codes: [a] 0,2816 [b] 139") == [("a", [0, 2816]), ("b", [139])]
    for other in ("halfrtt_us=1.2", "[mpiexec@node1] Exit codes:", "[proxy:0@node1] Exit codes: [node1] 0",
                  " [mpiexec@node1] Exit codes: [node1] 0"):
        assert exit_status.parse(other) is None, other


def test_only_the_ranks_a_signal_ended_are_named_with_their_signal():
    assert exit_status.killed_lines([("node1", [0, SEGV, 0, EXIT_11])]) == [
        "rank 1 was killed by signal 11 (SIGSEGV)"]
    # a core dump sets 0x80 in the status
    assert exit_status.killed_lines([("node1", [SEGV | 0x80, signal.SIGKILL])]) == [
        "rank 0 was killed by signal 11 (SIGSEGV) (core dumped)", "rank 1 was killed by signal 9 (SIGKILL)"]
    assert exit_status.killed_lines([("node1", [0, EXIT_11, 1 << 8])]) == []
    # across hosts a position is the host's, not a rank
    assert exit_status.killed_lines([("a", [0]), ("b", [0, signal.SIGBUS])]) == [
        "process 1 on host b was killed by signal 7 (SIGBUS)"]


def passed(filt, chunks):
    return b"".join(filt.feed(c) for c in chunks) + filt.finish()


@pytest.mark.parametrize("cut", range(1, 60, 3))
def test_the_filter_drops_the_exit_codes_line_wherever_the_stream_is_cut(cut):
    stream = b"halfrtt_us=1.5\n[mpiexec@node1] Exit codes: [node1] 0,11\ncpu_s=0.2\n"
    filt = exit_status.Filter()
    assert passed(filt, [stream[:cut], stream[cut:]]) == b"halfrtt_us=1.5\ncpu_s=0.2\n"
    assert filt.lines() == ["rank 1 was killed by signal 11 (SIGSEGV)"]


def test_the_filter_passes_a_partial_line_on_at_once_unless_it_may_be_the_exit_codes_line():
    filt = exit_status.Filter()
    assert filt.feed(b"Enter a value: ") == b"Enter a value: "
    assert filt.feed(b"[mpi") == b""  # may still become the exit-codes line
    assert filt.feed(b"ch rank 0] note\n") == b"[mpich rank 0] note\n"
    # the last line without its newline
    assert passed(filt, [b"[mpiexec@node1] Exit codes: [node1] 9,0"]) == b""
    assert filt.lines() == ["rank 0 was killed by signal 9 (SIGKILL)"]
    assert passed(exit_status.Filter(), [b"[mpiexec@node1] no"]) == b"[mpiexec@node1] no"


def test_a_run_names_the_rank_a_signal_killed_and_keeps_the_programs_output():
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-unfinished"),
                1, "kill"], timeout=120)
    assert proc.returncode == signal.SIGKILL, proc.stderr  # Hydra passes the signal number on
    assert "loggp run: rank 1 was killed by signal 9 (SIGKILL)" in proc.stderr.splitlines(), proc.stderr
    assert "Exit codes" not in proc.stdout + proc.stderr
    # a rank that exits on its own is no signal's; a whole run's output reaches the caller
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--", built("shim/tests/loggp-test-timing"),
                "pingpong", "8", "10"], timeout=120)
    assert proc.returncode == 0 and "halfrtt_us=" in proc.stdout, proc.stdout + proc.stderr
    assert "Exit codes" not in proc.stdout and "killed" not in proc.stderr, proc.stdout + proc.stderr


def test_hydra_is_asked_for_every_status_when_loggp_run_runs_it_not_in_the_printed_command():
    assert exit_status.asking_statuses(["/x/mpiexec", "-n", "2", "prog"]) == ["/x/mpiexec", exit_status.FLAG,
                                                                            "-n", "2", "prog"]
    assert exit_status.asking_statuses(["/x/mpiexec", exit_status.FLAG, "-n", "1"]).count(exit_status.FLAG) == 1
    # --dry-run prints the plain command, to wrap or run by hand
    proc = run([installed("loggp"), "run", "-n", "2", "--dry-run", "--", "/bin/true"])
    assert proc.returncode == 0 and exit_status.FLAG not in proc.stdout, proc.stdout + proc.stderr


def test_a_reader_that_stops_early_does_not_hang_the_run():
    """`loggp run ... | head -1`: the launcher's output is still drained, so the run ends."""
    import subprocess
    proc = subprocess.Popen([installed("loggp"), "run", "-n", "2", "--quiet", "--",
                             built("shim/tests/loggp-test-timing"), "pingpong", "8", "10"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    try:
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert first.startswith(b"halfrtt_us="), first
    assert proc.returncode == 0, proc.stderr.read()
