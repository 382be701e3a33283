"""Runs the launcher as a child of `loggp run`, so that the exit code follows the
one convention (docs/cli.md): the program's own code, 128+N when a signal N ended
it or `loggp run`, and 130 when the user interrupted the run (the launcher's own
code for that is its business: Hydra's 2 would read as a usage error).

A signal that would end `loggp run` is passed on to the launcher, and a launcher
whose `loggp run` dies (even by SIGKILL) is sent SIGTERM, so it never outlives
it: as when `loggp run` became the launcher."""
import signal
import subprocess

from loggp.knobs.command import CommandError

FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
PR_SET_PDEATHSIG = 1


def _end_with_parent():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # not Linux: the signals passed on still reach it
        pass


def run_program(cmd, env):
    """Runs cmd in env until it ends; its exit code. Ctrl-C reaches the child too (one
    process group): wait for it, then raise KeyboardInterrupt (exit 130)."""
    try:
        child = subprocess.Popen(cmd, env=env, preexec_fn=_end_with_parent)
    except OSError as err:
        raise CommandError(f"cannot start {cmd[0]}: {err}", exit_code=127) from None
    received = []

    def pass_on(signum, _frame):
        received.append(signum)
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, pass_on) for sig in FORWARDED}
    try:
        code = child.wait()
    except KeyboardInterrupt:
        _wait_after_interrupt(child)
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        return 128 + received[0]
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
