"""Progress of long work, as people expect it where they read it: on a
terminal one live line (tqdm) with the position, what runs now, the elapsed
time and the ETA; in a log or a pipe one line per step, each kept. Shared by
`loggp study run`, `loggp calibrate` and so `loggp main`."""
import os
import sys
import time


def duration(seconds):
    """12s, 3m05s, 2h07m."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m"


def eta_text(seconds, beyond=None):
    """"ETA 2m05s", "ETA ?" when unknown; beyond: seconds of work that may follow (rounds a
    study adds for precision, within its budget), said as an upper bound after the ETA."""
    text = f"ETA {'?' if seconds is None else duration(seconds)}"
    if beyond:
        text += f" (+ up to {duration(beyond)} of rounds added for precision)"
    return text


def on_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def terminal_width(stream):
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 0


class LiveLine:
    """total steps, initial of them done already. On a terminal: one line redrawn in
    place; elsewhere: nothing of its own (the caller's lines, through line()). Work
    that grows (add) keeps one line and one clock: elapsed time never restarts."""

    def __init__(self, total, initial=0, stream=None, live=None, clock=time.monotonic):
        self.stream = stream = stream or sys.stderr
        self.live = on_terminal(stream) if live is None else live
        self.clock = clock
        self.bar = None
        if self.live:
            from tqdm import tqdm
            # a terminal that tells no width (0 columns) would get an empty line
            sized = terminal_width(stream) > 0
            self.bar = tqdm(total=total, initial=initial, file=stream, dynamic_ncols=sized,
                            ncols=None if sized else 100, leave=True, bar_format="[{n_fmt}/{total_fmt}] {desc}")
            self.started = clock()
            self.now("starting")

    def now(self, text, eta_seconds=None, beyond=None):
        """What runs now, with the elapsed time and the ETA: eta_seconds when the caller
        knows better (earlier runs' times), else from the rate of the steps so far;
        beyond as eta_text's."""
        if self.bar is None:
            return
        elapsed = self.clock() - self.started
        if eta_seconds is None:
            finished = self.bar.n - self.bar.initial
            left = (self.bar.total or 0) - self.bar.n
            eta_seconds = elapsed / finished * left if finished > 0 else None
        self.bar.set_description_str(f"{text} | elapsed {duration(elapsed)} | {eta_text(eta_seconds, beyond)}")

    def add(self, steps):
        """More steps than announced (rounds added): counted on, not started over."""
        if self.bar is not None:
            self.bar.total = (self.bar.total or 0) + steps
            self.bar.refresh()

    def done(self, steps=1):
        if self.bar is not None:
            if self.bar.total is not None and self.bar.n + steps > self.bar.total:
                self.bar.total = self.bar.n + steps  # more steps than announced (re-measurements)
            self.bar.update(steps)

    def line(self, text):
        """A line that stays: above the live line on a terminal, as is elsewhere."""
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def counting(step, live):
    """step, each call of which counts as one step of live once it returns."""
    def counted(*args, **kwargs):
        result = step(*args, **kwargs)
        live.done()
        return result
    return counted


def log_to(live, runs=("side by side", "baseline run")):
    """A log(text) for work that reports with print: on a terminal a text announcing a
    run (words in runs) becomes the live line's "now" and every other text stays as a
    line above it; elsewhere print, flushed, as before."""
    if not live.live:
        return lambda text: print(text, flush=True)

    def log(text):
        if any(word in text for word in runs):
            live.now(text.strip())
        else:
            live.line(text)
    return log
