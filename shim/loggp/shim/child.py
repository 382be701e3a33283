"""Runs the launcher as a child of `loggp run`, so that the exit code follows the
one convention (docs/cli.md): the program's own code, 128+N when a signal N ended
it, and 130 when the user interrupted the run (the launcher's own code for that
is its business: Hydra's 2 would read as a usage error)."""
import signal
import subprocess

from loggp.knobs.command import CommandError


def run_program(cmd, env):
    """Runs cmd in env until it ends; its exit code. Ctrl-C reaches the child too (one
    process group): wait for it, then raise KeyboardInterrupt (exit 130)."""
    try:
        child = subprocess.Popen(cmd, env=env)
    except OSError as err:
        raise CommandError(f"cannot start {cmd[0]}: {err}", exit_code=127) from None
    try:
        code = child.wait()
    except KeyboardInterrupt:
        _wait_after_interrupt(child)
        raise
    if code < 0:
        if -code == signal.SIGINT:
            raise KeyboardInterrupt
        return 128 - code
    return code


def _wait_after_interrupt(child):
    """The child has the SIGINT too; give it time to end, then end it."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            child.send_signal(sig)
        try:
            child.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:
            continue
