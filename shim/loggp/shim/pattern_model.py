"""What LogGP predicts for each pattern of loggp-patterns when knobs add to
the machine's own parameters. Pure arithmetic on the zero-knob figures of
the same run; every time is in ns.

Notation: k bytes per message, W messages per window, a-byte ack, A =
(k-1)ΔG the byte time a knob adds to a k-byte message. One message's path is
o_s + (k-1)G + L + o_r; consecutive injections (and receptions) at a process
are at least g_total = g_machine + Δg + A apart (LogP's g: a minimum spacing,
overlapping o and computation, never added on top of a longer interval).

  pingpong  half round trip: each way carries o_s, A, L and o_r, and each
            rank injects once per round trip, so
            h = max(h0 + Δo_s + A + ΔL + Δo_r, g_total / 2)
  exchange  iteration (each rank sends one, receives one): the peer's message
            arrives one one-way time after both start, so
            e = max(e0 + Δo_s + A + ΔL + Δo_r, g_total)
  window    W messages pipelined through a sender stage (o_s) and a receiver
            stage (o_r), then an ack; a window lasts
            P = (W-1) max(I0 + max(Δo_s, Δo_r), g_total) + max(g_total, F)
            where F = F0 + 2(Δo_s + Δo_r + ΔL) + A + (a-1)ΔG is the last
            message's one-way time plus the ack's, I0 the natural interval;
            ns/msg = w0 + (P - P0) / W. max(Δo_s, Δo_r) is exact for equal
            steps (--o); one side alone moves the stage only if it is the
            slower one. Hence o adds (W+3)/W Δo per message,
            L adds 2ΔL/W, G adds A (the gap carries the bytes), g makes the
            interval g_total once g_total exceeds the natural one.
  compute   the window with a computation of C before each send: the same
            formula, the natural interval being the computation's (I0 >= C),
            F0 including one C. A gap below I0 is hidden by the computation.

I0 comes from the zero-knob figure: w0 W = (W-1) I0 + F0 with F0 = h0(k) +
h0(a) (+ C). g_machine is LogP's saturation measure, the plain window's I0,
unless given (an apparatus may count only its injector's busy time).
"""
from dataclasses import dataclass

from loggp.knobs.params import LogGP

WINDOW = 64
ACK_BYTES = 8


@dataclass(frozen=True)
class Base:
    """Zero-knob figures at one message size, from the same run."""
    bytes: int
    pingpong: float      # half round trip at this size
    window: float        # ns per message of the window pattern
    exchange: float      # ns per iteration
    compute: float       # ns per message of the compute pattern
    compute_ns: float    # the computation before each send
    ack_halfrtt: float   # half round trip at ACK_BYTES: the ack's one-way time
    g_machine: float | None = None  # the machine's own gap; None: from the plain window


def byte_time(knobs, size):
    """(k-1)ΔG: what G adds to one k-byte message (knobs: a LogGP set of increments)."""
    return knobs.byte_time(size)


def one_way_added(knobs, size):
    return knobs.one_way(size)


def fixed_time(base, compute):
    """F0: from a window's last injection to the next window's first one."""
    return base.pingpong + base.ack_halfrtt + (base.compute_ns if compute else 0.0)


def natural_interval(base, compute, window=WINDOW):
    """I0 from w0 W = (W-1) I0 + F0, never below zero."""
    per_msg = base.compute if compute else base.window
    return max((window * per_msg - fixed_time(base, compute)) / (window - 1), 0.0)


def machine_gap(base, window=WINDOW):
    """g_machine: as given, else the plain window's interval between injections
    at this size (LogP's saturation measure of g)."""
    return base.g_machine if base.g_machine is not None else natural_interval(base, False, window)


def gap_total(base, knobs, window=WINDOW):
    return machine_gap(base, window) + knobs.g + byte_time(knobs, base.bytes)


def pingpong(base, knobs, window=WINDOW):
    """Predicted half round trip."""
    return max(base.pingpong + one_way_added(knobs, base.bytes), gap_total(base, knobs, window) / 2)


def exchange(base, knobs, window=WINDOW):
    """Predicted time per exchange iteration."""
    return max(base.exchange + one_way_added(knobs, base.bytes), gap_total(base, knobs, window))


def _window_period(base, knobs, compute, window):
    interval = natural_interval(base, compute, window)
    g_total = gap_total(base, knobs, window)
    fill = (fixed_time(base, compute) + 2 * (knobs.o_s + knobs.o_r + knobs.L) + byte_time(knobs, base.bytes)
            + byte_time(knobs, ACK_BYTES))
    return (window - 1) * max(interval + max(knobs.o_s, knobs.o_r), g_total) + max(g_total, fill)


def stream(base, knobs, compute=False, window=WINDOW):
    """Predicted ns per message of the window pattern (compute=True: the compute pattern)."""
    start = base.compute if compute else base.window
    change = _window_period(base, knobs, compute, window) - _window_period(base, LogGP(), compute, window)
    return start + change / window


PREDICT = {
    "pingpong": pingpong,
    "exchange": exchange,
    "window": lambda base, knobs, window=WINDOW: stream(base, knobs, False, window),
    "compute": lambda base, knobs, window=WINDOW: stream(base, knobs, True, window),
}


def predicted_increase(pattern, base, knobs, window=WINDOW):
    """How much the knobs should add to the pattern's zero-knob figure."""
    start = {"pingpong": base.pingpong, "exchange": base.exchange, "window": base.window,
             "compute": base.compute}[pattern]
    return PREDICT[pattern](base, knobs, window) - start


# Goals: o and L within max(2 %, 100 ns) of the prediction, g and G
# within 2 % (G for messages >= 4 KiB); a pattern a knob should not move (a
# predicted increase under 100 ns) may move by 100 ns at most.
FLOOR_NS = 100.0
RELATIVE = 0.02
G_MIN_BYTES = 4096


def tolerance(knob, predicted_ns, size):
    """The allowed |measured - predicted| increase for one line, in ns, or None
    where the goals set none (G below 4 KiB)."""
    if abs(predicted_ns) < FLOOR_NS:
        return FLOOR_NS
    if knob in ("o", "o_s", "o_r", "L"):
        return max(RELATIVE * abs(predicted_ns), FLOOR_NS)
    if knob == "g":
        return RELATIVE * abs(predicted_ns)
    if knob == "G":
        return RELATIVE * abs(predicted_ns) if size >= G_MIN_BYTES else None
    raise ValueError(f"unknown knob '{knob}'")


def baseline_spread(zero_runs_ns):
    """How far a line's zero-knob runs lie apart over the rounds (max - min), or
    None with fewer than two."""
    return max(zero_runs_ns) - min(zero_runs_ns) if len(zero_runs_ns) >= 2 else None


def unsteady(spread_ns, tolerance_ns):
    """Did the line's own baseline move by more than its tolerance between
    rounds? Then its verdict says more about the machine than about the knob."""
    return spread_ns is not None and tolerance_ns is not None and spread_ns > tolerance_ns
