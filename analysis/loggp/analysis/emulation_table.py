"""Prediction against emulation, the results: each case (a program and a knob's setting)
with its predicted and emulated added time, the error over the resolved cases against the
goal, and the Markdown table docs/prediction-against-emulation.md shows (loggp.analysis.emulation_check
measures them)."""
import dataclasses
import math
import statistics
from dataclasses import dataclass

from loggp.experiments import precision

from . import host_response

GOAL_MEDIAN, GOAL_WORST = 0.05, 0.15


@dataclass
class Case:
    program: str
    knob: str
    setting: str
    predicted_s: float
    emulated: precision.Interval
    outcome: str          # precision.MET / MISSED / UNRESOLVED: the emulated interval against the prediction
    budget_ran_out: bool
    # what the setting changed in the program's own computation (the time between MPI calls,
    # the ranks' mean), which the replay keeps as traced; None when not measured
    computation: precision.Interval = None
    # the emulated added time less that change, paired per round: what the replay models
    communication: precision.Interval = None
    # the host's response: the program's other settings' computation change over their predicted
    # added time (loggp.analysis.host_response); None when fewer than two other settings were paired
    response: precision.Interval = None
    # the prediction's own range, when it has one (with the host's response); None: predicted_s
    predicted_low: float = None
    predicted_high: float = None

    @property
    def resolved(self):
        return precision.sign(self.emulated) != 0

    @property
    def error(self):
        """|predicted - emulated| / emulated, for a resolved case (else None)."""
        if not self.resolved:
            return None
        return abs(self.predicted_s - self.emulated.estimate) / abs(self.emulated.estimate)

    @property
    def error_bounds(self):
        """(low, high) of |predicted - e| / |e| over e in the emulated interval, for a resolved
        case (else None): the error's range that the interval allows."""
        return error_range(self.predicted_s, self.emulated, self.predicted_low, self.predicted_high)

    def with_response(self):
        """This case predicted with the host's response (host_response.with_response): the
        prediction and its range grown by the resolved share, the rest as measured."""
        estimate, low, high = host_response.with_response(self.predicted_s, self.response)
        return dataclasses.replace(self, predicted_s=estimate, predicted_low=low, predicted_high=high,
                                   computation=None, communication=None)

    @property
    def communication_error(self):
        """|predicted - c| / c with its range over c, the emulated added time less the
        computation's change (None when that is not measured or not resolved): how far the
        replay is off on what it models."""
        if self.communication is None:
            return None
        bounds = error_range(self.predicted_s, self.communication)
        if bounds is None:
            return None
        return abs(self.predicted_s - self.communication.estimate) / abs(self.communication.estimate), bounds

    @property
    def reached(self):
        """The emulated interval's half-width over its estimate (inf while unbounded)."""
        if not self.emulated.bounded or self.emulated.estimate == 0:
            return math.inf
        return self.emulated.half_width / abs(self.emulated.estimate)


def error_range(predicted, emulated, predicted_low=None, predicted_high=None):
    """(low, high) of |p - e| / |e| over e in the emulated interval and p in the prediction's
    range [predicted_low, predicted_high] (one value when not given), or None when the emulated
    interval holds zero (no effect resolved, so no error to take). Both ends are at corners: the
    error is monotonic in p and in e on either side of p = e."""
    if precision.sign(emulated) == 0:
        return None
    p_low = predicted if predicted_low is None else predicted_low
    p_high = predicted if predicted_high is None else predicted_high
    ends = [abs(p - x) / abs(x) for p in (p_low, p_high) for x in (emulated.low, emulated.high)]
    low = 0.0 if p_low <= emulated.high and emulated.low <= p_high else min(ends)
    return low, max(ends)


def decided_against_worst(predicted, emulated):
    """True when the error's range lies wholly on one side of GOAL_WORST: more pairs would
    not change whether this case keeps the goal's "none above" part."""
    bounds = error_range(predicted, emulated)
    return bounds is not None and (bounds[1] <= GOAL_WORST or bounds[0] > GOAL_WORST)


def goal_deciding(cases):
    """The resolved cases more pairs of which can move the goal's verdict: while the median's
    part is undecided (its cases' ranges allow a median on both sides of GOAL_MEDIAN), those
    whose range holds GOAL_MEDIAN; while the worst case's part is, those whose range holds
    GOAL_WORST. A part already decided keeps nothing on."""
    resolved = [c for c in cases if c.error_bounds is not None]
    if not resolved:
        return []
    lows, highs = [c.error_bounds[0] for c in resolved], [c.error_bounds[1] for c in resolved]
    limits = [limit for limit, low, high in ((GOAL_MEDIAN, statistics.median(lows), statistics.median(highs)),
                                             (GOAL_WORST, max(lows), max(highs)))
              if low <= limit < high]
    return [c for c in resolved if any(c.error_bounds[0] <= limit < c.error_bounds[1] for limit in limits)]


def summary(cases):
    """(median error over resolved cases or None, worst error or None, the worst case, the
    goal's verdict or None). The goal is met when the errors' upper ends meet it (median
    within GOAL_MEDIAN, none above GOAL_WORST), missed when their lower ends already miss
    it, unresolved between: the cases' intervals allow both."""
    resolved = [c for c in cases if c.error is not None]
    if not resolved:
        return None, None, None, None
    median = statistics.median(c.error for c in resolved)
    worst_case = max(resolved, key=lambda c: c.error)

    def meets(errors):
        return statistics.median(errors) <= GOAL_MEDIAN and max(errors) <= GOAL_WORST
    if meets([c.error_bounds[1] for c in resolved]):
        goal = precision.MET
    elif not meets([c.error_bounds[0] for c in resolved]):
        goal = precision.MISSED
    else:
        goal = precision.UNRESOLVED
    return median, worst_case.error, worst_case, goal


def median_error_bounds(cases):
    """(low, high) of the median error that the resolved cases' intervals allow."""
    bounds = [c.error_bounds for c in cases if c.error_bounds is not None]
    return statistics.median(b[0] for b in bounds), statistics.median(b[1] for b in bounds)


def _ms(seconds):
    return f"{seconds * 1e3:+.2f}"


def _computation(case):
    """The computation's change as the table shows it."""
    c = case.computation
    if c is None:
        return "-"
    return f"{_ms(c.estimate)} [{_ms(c.low)}, {_ms(c.high)}]" if c.bounded else f"{_ms(c.estimate)} (no interval)"


def _communication_error(case):
    e = case.communication_error
    return "-" if e is None else f"{100 * e[0]:.1f} % [{100 * e[1][0]:.1f}, {100 * e[1][1]:.1f}]"


def communication_line(cases):
    """The errors without the computation's change, summed up (not the goal: the goal is on
    the whole added time), or nothing when none is measured."""
    errors = [(c, c.communication_error[0]) for c in cases if c.resolved and c.communication_error]
    if not errors:
        return []
    worst_case, worst = max(errors, key=lambda e: e[1])
    return [f"Without the change in the programs' own computation (which the replay keeps as traced): median "
            f"{100 * statistics.median(e for _, e in errors):.1f} %, worst {100 * worst:.1f} % "
            f"({worst_case.program} {worst_case.knob}), over {len(errors)} cases."]


def _with_response(case):
    """The prediction with the host's response and its error, as the table shows them."""
    if case.response is None:
        return "-"
    share = case.response
    said = (f"{100 * share.estimate:+.1f} % [{100 * share.low:+.1f}, {100 * share.high:+.1f}]" if share.bounded
            else f"{100 * share.estimate:+.1f} % (no interval)")
    if not host_response.resolved(share):
        return f"share {said}, not resolved above zero: as the replay"
    grown = case.with_response()
    error = grown.error_bounds
    text = f"share {said}: {_ms(grown.predicted_s)} [{_ms(grown.predicted_low)}, {_ms(grown.predicted_high)}]"
    return text if error is None else f"{text}, {100 * grown.error:.1f} % [{100 * error[0]:.1f}, {100 * error[1]:.1f}]"


def response_lines(cases):
    """The goal judged on the predictions with the host's response, or nothing when no case has a
    response measured."""
    if not any(c.response is not None for c in cases):
        return []
    grown = [c.with_response() for c in cases]
    median, worst, worst_case, goal = summary(grown)
    if median is None:
        return []
    low, high = median_error_bounds(grown)
    taken = sum(host_response.resolved(c.response) for c in cases)
    return [f"With the host's response (each case's computation change predicted as the share of the predicted "
            f"added time its program's other settings showed, where that share is resolved above zero: "
            f"{taken} of {len(cases)} cases): median {100 * median:.1f} % [{100 * low:.1f}, {100 * high:.1f}], "
            f"worst {100 * worst:.1f} % ({worst_case.program} {worst_case.knob}). Goal (median within "
            f"{100 * GOAL_MEDIAN:g} %, none above {100 * GOAL_WORST:g} %): {goal}."]


def table(cases, header):
    """The Markdown table docs/prediction-against-emulation.md shows, with its summary lines."""
    lines = [header, "",
             "| program | setting | predicted added (ms) | emulated added (ms) [95 % CI] "
             "| of which computation (ms) | pairs | precision reached | resolved "
             "| \\|pred - emu\\| / emu [range] | without the computation's change [range] "
             "| against the prediction +- 5 % | with the host's response: share, prediction (ms), error [range] |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        e = c.emulated
        interval = f"{_ms(e.estimate)} [{_ms(e.low)}, {_ms(e.high)}]" if e.bounded else \
            f"{_ms(e.estimate)} (too few pairs for an interval)"
        reached = f"{100 * c.reached:.1f} %" if math.isfinite(c.reached) else "-"
        error = (f"{100 * c.error:.1f} % [{100 * c.error_bounds[0]:.1f}, {100 * c.error_bounds[1]:.1f}]"
                 if c.error is not None else "-")
        verdict = c.outcome + (" (stopped before it settled)" if c.budget_ran_out else "")
        lines.append(f"| {c.program} | {c.knob} = {c.setting} | {_ms(c.predicted_s)} | {interval} | {_computation(c)} "
                     f"| {e.n} | {reached} "
                     f"| {'yes' if c.resolved else 'no'} | {error} | {_communication_error(c)} | {verdict} "
                     f"| {_with_response(c)} |")
    median, worst, worst_case, goal = summary(cases)
    resolved = sum(c.resolved for c in cases)
    if median is None:
        lines += ["", f"No case resolved ({len(cases)} cases): no error to summarise; the goal is not judged."]
    else:
        low, high = median_error_bounds(cases)
        lines += ["", f"{resolved} of {len(cases)} cases resolved. Median |predicted - emulated| / emulated over them: "
                      f"{100 * median:.1f} % [{100 * low:.1f}, {100 * high:.1f}] (the range the cases' 95 % intervals "
                      f"allow); worst {100 * worst:.1f} % ({worst_case.program} {worst_case.knob}). "
                      f"Goal (median within {100 * GOAL_MEDIAN:g} %, none above {100 * GOAL_WORST:g} %): {goal}."]
        lines += communication_line(cases)
        lines += response_lines(cases)
    return "\n".join(lines) + "\n"


# The lines after the table, from the checks (emulation_check.ProgramCheck): what the machine and
# the replay did beside the cases.

def baseline_spread(lengths):
    """The machine's run-to-run noise on one program: the median |difference| between the
    armed baseline runs of consecutive rounds (seconds), or None before two rounds."""
    if len(lengths) < 2:
        return None
    return statistics.median(abs(b - a) for a, b in zip(lengths, lengths[1:]))


def armed_cost_line(checks):
    """One line: each program's armed layer cost (armed baseline minus zero knobs, paired in
    its first rounds) with its interval and share of the run: what the armed baseline
    cancels from every setting's added time."""
    parts = []
    for c in checks:
        if c.armed_cost:
            cost = precision.median_interval(c.armed_cost)
            run = statistics.median(c.baseline_s)
            ci = f" [{_ms(cost.low)}, {_ms(cost.high)}]" if cost.bounded else " (too few pairs for an interval)"
            parts.append(f"{c.program.name} {_ms(cost.estimate)} ms{ci} ({100 * cost.estimate / run:+.1f} %)")
    if not parts:
        return ""
    return ("\nThe armed layer's own cost (the armed baseline minus zero knobs, paired in the first rounds; "
            "it cancels from every added time above): " + ", ".join(parts) + ".\n")


def prediction_lines(checks):
    """One line: each case's prediction, the median over its program's traced runs, with the
    least and the most of them: how far one traced run's replay moves."""
    parts = []
    for c in checks:
        for knob, (least, most, runs) in c.prediction_spread().items():
            parts.append(f"{c.program.name} {knob} {_ms(c.predicted[knob])} ms ({_ms(least)} to {_ms(most)}, "
                         f"{runs} traced run{'s' if runs != 1 else ''})")
    if not parts:
        return ""
    return ("\nPredictions: the median over each program's traced runs (the first, then each round's armed "
            "baseline), with the least and the most of them: " + ", ".join(parts) + ".\n")


def noise_lines(checks):
    """One line: each program's baseline spread, in ms and as a share of its run."""
    parts = []
    for c in checks:
        spread = baseline_spread(c.baseline_s)
        if spread is not None:
            run = statistics.median(c.baseline_s)
            parts.append(f"{c.program.name} {spread * 1e3:.1f} ms ({100 * spread / run:.1f} %)")
    if not parts:
        return ""
    return ("\nMachine noise: the armed baseline runs of consecutive rounds differ by a median of "
            + ", ".join(parts) + ".\n")
