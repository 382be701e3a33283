"""Runs the launcher as a child of `loggp run`, so that the exit code follows the
one convention (docs/cli.md): the program's own code, 128+N when a signal N ended
it or `loggp run`, and 130 when the user interrupted the run (the launcher's own
code for that is its business: Hydra's 2 would read as a usage error).

A signal that would end `loggp run` is passed on to the launcher, and a launcher
whose `loggp run` dies (even by SIGKILL) is sent SIGTERM, so it never outlives
it: as when `loggp run` became the launcher."""
import os
import signal
import subprocess
import sys
import threading

from loggp.knobs.command import CommandError

from . import exit_status

FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
PR_SET_PDEATHSIG = 1


def _end_with_parent():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # not Linux: the signals passed on still reach it
        pass


def _pass_on_output(stream, statuses):
    """Copies the launcher's output to ours as it comes, but for Hydra's exit-codes line."""
    def write(data):
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write(data.decode("utf-8", "replace"))
        else:
            out.write(data)
        sys.stdout.flush()
        if out is not None:
            out.flush()

    said = True
    while data := os.read(stream.fileno(), 65536):
        passed = statuses.feed(data)
        if said:
            try:
                write(passed)
            except OSError:
                said = False  # our own output is gone (`| head`): keep reading, so the launcher never blocks
    if said:
        try:
            write(statuses.finish())
        except OSError:
            pass


def run_program(cmd, env):
    """Runs cmd in env until it ends; its exit code. Ctrl-C reaches the child too (one
    process group): wait for it, then raise KeyboardInterrupt (exit 130). A Hydra launcher
    asked for every process's status (exit_status.FLAG) has its output passed on
    without that line, and each rank a signal killed is said in one line after the run."""
    statuses = exit_status.Filter() if exit_status.FLAG in cmd else None
    if statuses:
        sys.stdout.flush()
    try:
        child = subprocess.Popen(cmd, env=env, preexec_fn=_end_with_parent,
                                 stdout=subprocess.PIPE if statuses else None)
    except OSError as err:
        raise CommandError(f"cannot start {cmd[0]}: {err}", exit_code=127) from None
    copier = None
    if statuses:
        copier = threading.Thread(target=_pass_on_output, args=(child.stdout, statuses), daemon=True)
        copier.start()
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
            # None: a C library loaded into this process (LD_PRELOAD reaches it too) set the
            # handler, and Python cannot put that back: the default is what a process has anyway
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        if copier:
            # a rank that outlived its launcher may hold the stream open: do not wait on it for long
            copier.join(timeout=5)
            for line in statuses.lines():
                print(f"loggp run: {line}", file=sys.stderr, flush=True)
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
