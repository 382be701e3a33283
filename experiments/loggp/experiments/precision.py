"""Measuring to a stated precision (Hoefler and Belli, "Scientific Benchmarking of Parallel
Computing Systems", SC'15): medians with nonparametric 95 % intervals, paired and interleaved
differences, slopes with intervals, repetition until the interval is narrow enough or a time
budget runs out, and three verdicts: met, missed, unresolved.

Timings on a shared machine are skewed and heavy-tailed, so every interval here comes from
order statistics, never from a mean and a standard deviation. Values carry whatever unit the
caller uses; a `Precision`'s absolute part is in nanoseconds and `unit_ns` converts.

Pure functions (the standard library, and loggp.knobs to read a time with its unit), so that
any measuring command can use them."""
import math
import re
import time
from dataclasses import dataclass, field

import loggp.knobs as knob_values
from loggp.knobs import grammar
from loggp.knobs.command import EXIT_MISSED, EXIT_OK

Z95 = 1.96

MET, MISSED, UNRESOLVED = "met", "missed", "unresolved"
VERDICTS = (MET, MISSED, UNRESOLVED)


def _level(z):
    """The two-sided coverage of a standard normal +- z (z = 1.96: 95 %)."""
    return math.erf(z / math.sqrt(2.0))


def _median_ranks(n, z=Z95):
    """1-based ranks (low, high) of the order statistics that bound the median's interval,
    exact from the binomial distribution (the median lies between the j-th and the
    (n - j + 1)-th of n values with probability 1 - 2 P(Binomial(n, 1/2) < j); Le Boudec's
    table, which Hoefler and Belli cite; their normal approximation is for large n). j is
    the largest rank whose coverage is still at least that of +- z. None when even the
    smallest and the largest value cover the median less often (n < 6 for 95 %)."""
    tail = (1.0 - _level(z)) / 2.0
    # the terms more than 20 standard deviations below n/2 add less than 1e-80: start there,
    # so that a large n costs a few sqrt(n) steps and no term underflows
    j = max(0, math.floor(n / 2 - 10 * math.sqrt(n)))
    term = math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) - n * math.log(2))
    below = 0.0
    while j < n and below + term <= tail:
        below += term
        j += 1
        term *= (n - j + 1) / j   # P(B = j) from P(B = j - 1)
    if j < 1:
        return None
    return j, n - j + 1


def _smallest_n_with_interval():
    n = 1
    while _median_ranks(n) is None:
        n += 1
    return n


# Below this many samples no two order statistics cover the median 95 % of the time:
# such an interval is unbounded (never the range in its place), and its verdict unresolved.
MIN_SAMPLES = _smallest_n_with_interval()


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95 % interval [low, high] from n samples. Infinite bounds mean
    no interval yet (too few samples)."""
    estimate: float
    low: float
    high: float
    n: int

    @property
    def bounded(self):
        return math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def half_width(self):
        """The larger distance from the estimate to a bound (intervals from order
        statistics are not symmetric)."""
        return max(self.estimate - self.low, self.high - self.estimate)

    def contains(self, value):
        return self.low <= value <= self.high

    def as_dict(self):
        """JSON-ready: unbounded ends as None."""
        def finite(v):
            return v if math.isfinite(v) else None
        return {"estimate": finite(self.estimate), "low": finite(self.low), "high": finite(self.high),
                "half_width": finite(self.half_width), "n": self.n}


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median of no values")
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def median_interval(values, z=Z95):
    """The median and its nonparametric interval from order statistics (exact binomial
    ranks). Fewer than MIN_SAMPLES values: the interval is unbounded."""
    ordered = sorted(float(v) for v in values)
    if not ordered:
        raise ValueError("no values for an interval")
    if any(not math.isfinite(v) for v in ordered):
        raise ValueError("a value for an interval is not finite")
    n = len(ordered)
    ranks = _median_ranks(n, z)
    if ranks is None:
        return Interval(median(ordered), -math.inf, math.inf, n)
    return Interval(median(ordered), ordered[ranks[0] - 1], ordered[ranks[1] - 1], n)


def spread(values):
    """(kind, low, high) to print beside a median: its 95 % interval ("95 %") when the
    values are enough for one, else their range ("min-max"), which covers the median less
    surely; never an infinite bound."""
    interval = median_interval(values)
    if interval.bounded:
        return "95 %", interval.low, interval.high
    return "min-max", min(values), max(values)


def paired_differences(baselines, settings):
    """Each setting's run minus the baseline run interleaved with it."""
    baselines, settings = list(baselines), list(settings)
    if len(baselines) != len(settings):
        raise ValueError(f"{len(settings)} setting runs but {len(baselines)} baseline runs: pairs need both")
    return [s - b for b, s in zip(baselines, settings)]


def paired_interval(baselines, settings, z=Z95):
    """The median paired difference (setting minus its baseline) and its interval."""
    return median_interval(paired_differences(baselines, settings), z)


def _sorted_slopes(xs, ys):
    slopes = []
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if xs[i] != xs[j]:
                slopes.append((ys[j] - ys[i]) / (xs[j] - xs[i]))
    slopes.sort()
    return slopes


def slope_interval(xs, differences, z=Z95):
    """Theil-Sen slope of paired differences against the settings that caused them: the
    median of the slopes between every two points at different settings, with Sen's
    interval (ranks of those slopes from the variance of Kendall's S, corrected for the
    repeated settings). xs: one setting per difference; at least two distinct settings.
    Not forced through zero: a constant cost the baseline does not share lands in the
    intercept, not in the slope."""
    xs, ys = [float(x) for x in xs], [float(y) for y in differences]
    if len(xs) != len(ys):
        raise ValueError(f"{len(ys)} differences for {len(xs)} settings")
    if len(set(xs)) < 2:
        raise ValueError("a slope needs differences at two settings at least")
    slopes = _sorted_slopes(xs, ys)
    count = len(slopes)
    estimate = median(slopes)
    n = len(xs)
    ties = {}
    for x in xs:
        ties[x] = ties.get(x, 0) + 1
    variance = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18
    spread = z * math.sqrt(variance)
    low = math.floor((count - spread) / 2)
    high = math.ceil((count + spread) / 2) + 1
    if low < 1 or high > count:
        return Interval(estimate, -math.inf, math.inf, n)
    return Interval(estimate, slopes[low - 1], slopes[high - 1], n)


def ratio_interval(x, differences, z=Z95):
    """A slope through zero from one setting: the median of difference / setting with its
    interval. Right when the baseline shares every constant cost (an armed baseline)."""
    if x == 0:
        raise ValueError("a ratio needs a nonzero setting")
    return median_interval([d / x for d in differences], z)


@dataclass(frozen=True)
class Precision:
    """How narrow an interval must get: its half-width at most max(relative * |reference|,
    absolute_ns). The same figure is a reading's tolerance around its expectation."""
    relative: float
    absolute_ns: float = 0.0

    def __post_init__(self):
        if not (math.isfinite(self.relative) and self.relative >= 0
                and math.isfinite(self.absolute_ns) and self.absolute_ns >= 0):
            raise ValueError(f"a precision is not negative nor infinite: {self.relative!r}, {self.absolute_ns!r}")
        if self.relative == 0 and self.absolute_ns == 0:
            raise ValueError("a precision of zero can never be reached")

    def allowed(self, reference, unit_ns=1.0):
        """The half-width allowed around `reference` (in units of unit_ns nanoseconds)."""
        return max(self.relative * abs(reference), self.absolute_ns / unit_ns)

    def text(self):
        parts = []
        if self.relative:
            parts.append(f"{self.relative * 100:g}%")
        if self.absolute_ns:
            parts.append(f"{self.absolute_ns:g}ns")
        return parts[0] if len(parts) == 1 else f"max({', '.join(parts)})"


KNOB_PRECISION = Precision(0.01, 20.0)   # a knob's reading: within max(1 %, 20 ns)
SLOPE_PRECISION = Precision(0.05)        # a slope: within 5 % of itself

_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")


def parse_precision(text, time_ns=None):
    """'1%', '20ns' or '1%,20ns' (the larger applies) -> Precision. time_ns turns a time
    with its unit into ns (default: loggp-knobs' own parser, the one grammar of times)."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"precision {text!r}: give a percentage, a time or both, e.g. 1% or 20ns or 1%,20ns")
    relative = absolute = None
    for part in text.split(","):
        m = _PERCENT.fullmatch(part)
        if m:
            if relative is not None:
                raise ValueError(f"precision {text!r} gives two percentages")
            relative = float(m.group(1)) / 100
            continue
        if absolute is not None:
            raise ValueError(f"precision {text!r} gives two times")
        try:
            absolute = (time_ns or _knob_time_ns)(part)
        except ValueError as err:
            raise ValueError(f"precision {text!r}: {part!r} is neither a percentage nor a time ({err})") from None
    try:
        return Precision(relative or 0.0, absolute or 0.0)
    except ValueError:
        raise ValueError(f"precision {text!r} is zero: it could never be reached") from None


def _knob_time_ns(text):
    return knob_values.parse({"L": text})["L"]  # the one parser of times with units


def parse_budget(text):
    """A time budget with its unit ('90s', '5min', '1h'; the one grammar of durations) -> seconds."""
    try:
        seconds = grammar.parse_duration(text)
    except grammar.GrammarError as err:
        raise ValueError(f"budget {text!r}: give a duration with its unit, e.g. 90s, 5min or 1h ({err})") from None
    if not 0 < seconds <= 7 * 86400:
        raise ValueError(f"budget {text!r} must be more than 0 and at most 7 days")
    return seconds


@dataclass(frozen=True)
class Goal:
    """Where a reading should lie: expected +- tolerance (the precision, around the
    expected value)."""
    expected: float
    tolerance: float

    @classmethod
    def around(cls, expected, precision, unit_ns=1.0):
        return cls(expected, precision.allowed(expected, unit_ns))

    @property
    def low(self):
        return self.expected - self.tolerance

    @property
    def high(self):
        return self.expected + self.tolerance

    def describe(self, places=None, unit=""):
        tolerance = f"{self.tolerance:.3g}" if places is None else f"{self.tolerance:.{places}f}"
        return f"goal {_number(self.expected, places)} +- {tolerance}{unit}"


@dataclass(frozen=True)
class Ceiling:
    """A one-sided goal: the reading at most `limit` (a cost that may be anything below
    it). `tolerance` is how narrow the interval must get to settle an undecided reading."""
    limit: float
    tolerance: float

    low = -math.inf

    @property
    def high(self):
        return self.limit

    @property
    def expected(self):
        return self.limit

    def describe(self, places=None, unit=""):
        return f"goal at most {_number(self.limit, places)}{unit}"


def verdict(interval, goal):
    """met: the interval lies inside the goal; missed: the interval and the goal are
    disjoint (a real, repeatable error); unresolved: anything else (it overlaps the goal's
    edge, or is unbounded)."""
    if not interval.bounded:
        return UNRESOLVED
    if goal.low <= interval.low and interval.high <= goal.high:
        return MET
    if interval.high < goal.low or interval.low > goal.high:
        return MISSED
    return UNRESOLVED


_SEVERITY = {MET: 0, UNRESOLVED: 1, MISSED: 2}


def worst(verdicts):
    """The verdict of several readings together: missed over unresolved over met; nothing
    judged is unresolved."""
    verdicts = list(verdicts)
    return max(verdicts, key=_SEVERITY.__getitem__) if verdicts else UNRESOLVED


def exit_status(verdicts):
    """The exit status of every measuring command that gives verdicts: EXIT_MISSED (3) when
    any is missed, a real, repeatable error; EXIT_OK otherwise. An unresolved verdict is the
    machine's noise or a short budget, not a failure; words other than the three verdicts
    (a line with no goal) do not count."""
    return EXIT_MISSED if MISSED in set(verdicts) else EXIT_OK


def _number(value, places):
    return f"{value:+.4g}" if places is None else f"{value:+.{places}f}"


def reason(interval, goal, unit="", reached=True, places=None):
    """One line that says why the verdict is what it is (places: fixed decimals for the
    numbers, else four significant digits)."""
    v = verdict(interval, goal)
    u = f" {unit}" if unit else ""
    goal_text = goal.describe(places, u)
    if not interval.bounded:
        return f"only {interval.n} pairs, too few for an interval (need {MIN_SAMPLES}); {goal_text}"
    read = (f"read {_number(interval.estimate, places)}{u} in [{_number(interval.low, places)}, "
            f"{_number(interval.high, places)}] ({interval.n} pairs)")
    if v == MET:
        return f"{read}: inside the {goal_text}"
    if v == MISSED:
        side = "above" if interval.low > goal.high else "below"
        return f"{read}: wholly {side} the {goal_text}"
    why = "overlaps the edge of the" if reached else "budget ran out before it was narrower than the"
    return f"{read}: {why} {goal_text}"


def sign(interval):
    """+1 or -1 when the interval excludes zero, else 0: a difference whose interval holds
    zero has no sign."""
    if not interval.bounded or interval.contains(0.0):
        return 0
    return 1 if interval.low > 0 else -1


def describe_effect(interval, unit=""):
    """A difference or a slope as a reader should see it: its sign only when resolved."""
    u = f" {unit}" if unit else ""
    if not interval.bounded:
        return f"no effect resolved ({interval.n} pairs, too few for an interval)"
    if sign(interval) == 0:
        bound = max(abs(interval.low), abs(interval.high))
        return f"no effect resolved, below {bound:.3g}{u}"
    return f"{interval.estimate:+.4g}{u} [{interval.low:+.4g}, {interval.high:+.4g}]"


# ------------------------------------------------------------------ repeating to a precision

@dataclass
class Reading:
    """One figure under repetition: the paired differences so far, against its goal."""
    goal: Goal
    differences: list = field(default_factory=list)

    def interval(self):
        if not self.differences:
            return Interval(math.nan, -math.inf, math.inf, 0)
        return median_interval(self.differences)

    def settled(self):
        """Decided (met or missed), or as narrow as the goal's tolerance: more pairs would
        not change what is reported."""
        if len(self.differences) < MIN_SAMPLES:
            return False
        interval = self.interval()
        return verdict(interval, self.goal) != UNRESOLVED or interval.half_width <= self.goal.tolerance


@dataclass(frozen=True)
class Outcome:
    goal: Goal
    interval: Interval
    verdict: str
    budget_ran_out: bool

    def reason(self, unit="", places=None):
        return reason(self.interval, self.goal, unit, reached=not self.budget_ran_out, places=places)

    def as_dict(self, unit="", places=None):
        return {"verdict": self.verdict, "reason": self.reason(unit, places), "expected": self.goal.expected,
                "tolerance": self.goal.tolerance, "interval": self.interval.as_dict(),
                "precision_reached": self.interval.as_dict()["half_width"],
                "budget_ran_out": self.budget_ran_out}


def repeat_to_precision(measure_pair, goals, budget_s, clock=time.monotonic, max_pairs=None):
    """Calls measure_pair() -> {key: (baseline, setting)} (one interleaved pair of runs per
    call) until every key's reading is settled or the budget (seconds of `clock`) runs out;
    a call is never started once the budget is spent. goals: {key: Goal}. Returns
    ({key: Outcome}, pairs measured)."""
    readings = {key: Reading(goal) for key, goal in goals.items()}
    start = clock()
    pairs = 0
    while True:
        if all(r.settled() for r in readings.values()):
            out_of_budget = False
            break
        if clock() - start >= budget_s or (max_pairs is not None and pairs >= max_pairs):
            out_of_budget = True
            break
        measured = measure_pair()
        missing = set(readings) - set(measured)
        if missing:
            raise ValueError(f"a measured pair lacks {sorted(missing)[0]!r}")
        for key, reading in readings.items():
            baseline, setting = measured[key]
            reading.differences.append(setting - baseline)
        pairs += 1
    outcomes = {}
    for key, reading in readings.items():
        interval = reading.interval()
        v = verdict(interval, reading.goal)
        outcomes[key] = Outcome(reading.goal, interval, v, out_of_budget and not reading.settled())
    return outcomes, pairs


def judge_differences(differences, expected, tolerance, unit="", places=None, budget_ran_out=None):
    """A fixed set of paired differences judged against expected +- tolerance, as a plain
    dict (verdict, reason, interval, precision reached, settled): for a command that
    repeats a given number of times rather than to a precision, and for the layers below
    this one, which receive it as a callable. budget_ran_out: whether the caller's budget
    ended the repeats (None: the reason says so whenever the reading is not settled)."""
    return _judged(Goal(expected, tolerance), differences, unit, places, budget_ran_out)


def judge_at_most(differences, limit, tolerance, unit="", places=None, budget_ran_out=None):
    """As judge_differences, against a ceiling: met, the interval at or below `limit`;
    missed, wholly above it; unresolved, across it (settled once no wider than tolerance)."""
    return _judged(Ceiling(limit, tolerance), differences, unit, places, budget_ran_out)


def judge_bounds(low, high, expected, tolerance):
    """The verdict of an interval [low, high] found some other way (a bootstrap, for a
    figure that is not a median) against expected +- tolerance."""
    return verdict(Interval((low + high) / 2, low, high, 0), Goal(expected, tolerance))


def _judged(goal, differences, unit, places, budget_ran_out):
    reading = Reading(goal, list(differences))
    interval = reading.interval()
    settled = reading.settled()
    ran_out = not settled if budget_ran_out is None else bool(budget_ran_out) and not settled
    out = Outcome(goal, interval, verdict(interval, goal), ran_out).as_dict(unit, places)
    out["settled"] = settled
    return out
