"""Which rank a signal killed. Hydra, MPICH's mpiexec, names the first process that
failed by its process id and an "exit code" that reads the same for exit(11) and for
a segmentation fault. Started with -print-all-exitcodes, it ends with one line of every
process's wait status, host by host:
    [mpiexec@HOST] Exit codes: [HOST] 0,11,0
on its output. `loggp run` takes that line out of the launcher's output and says
instead, on its error stream, one line per rank a signal killed, naming the signal."""
import os
import re
import signal

FLAG = "-print-all-exitcodes"
_PREFIX = b"[mpiexec@"
_LINE = re.compile(r"^\[mpiexec@[^\]]*\] Exit codes: (.*)$")
_HOST = re.compile(r"\[([^\]]*)\] ([0-9]+(?:,[0-9]+)*)")


def asking_statuses(cmd):
    """Hydra's command line asking for the exit-codes line (the launcher is cmd[0])."""
    return [cmd[0], FLAG, *cmd[1:]] if FLAG not in cmd else list(cmd)


def parse(line):
    """[(host, [wait status, ...]), ...] from Hydra's exit-codes line, or None for any other line."""
    match = _LINE.match(line.rstrip("\r\n"))
    if not match:
        return None
    groups = [(host, [int(s) for s in statuses.split(",")]) for host, statuses in _HOST.findall(match.group(1))]
    return groups or None


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def killed_lines(groups):
    """One line per process a signal ended. On one host Hydra lists the ranks in order; across
    hosts it lists each host's processes, so those are named by host and position there."""
    lines = []
    one_host = len(groups) == 1
    for host, statuses in groups:
        for index, status in enumerate(statuses):
            if not os.WIFSIGNALED(status):
                continue
            signum = os.WTERMSIG(status)
            who = f"rank {index}" if one_host else f"process {index} on host {host}"
            core = " (core dumped)" if os.WCOREDUMP(status) else ""
            lines.append(f"{who} was killed by signal {signum} ({signal_name(signum)}){core}")
    return lines


class Filter:
    """Passes a launcher's output through, except Hydra's exit-codes line, which it keeps
    (in `groups`). A line is held back only while it may still become that line."""

    def __init__(self):
        self.groups = []
        self._pending = b""

    def feed(self, data):
        """The bytes to pass on now, out of what the launcher wrote."""
        text = self._pending + data
        out = []
        *complete, self._pending = text.split(b"\n")
        for line in complete:
            parsed = parse(line.decode("utf-8", "replace")) if line.startswith(_PREFIX) else None
            if parsed:
                self.groups += parsed
            else:
                out.append(line + b"\n")
        # a fragment that cannot start the exit-codes line goes on at once (a prompt, a partial write)
        head = self._pending[:len(_PREFIX)]
        if self._pending and not _PREFIX.startswith(head):
            out.append(self._pending)
            self._pending = b""
        return b"".join(out)

    def finish(self):
        """What is still held when the stream ends (a last line without its newline)."""
        rest, self._pending = self._pending, b""
        parsed = parse(rest.decode("utf-8", "replace")) if rest.startswith(_PREFIX) else None
        if parsed:
            self.groups += parsed
            return b""
        return rest

    def lines(self):
        return killed_lines(self.groups)
