"""How far to trust a prediction (docs/predict.md, "How far to trust it"): the
share of the traced time the replay explains, the interval the probe's own
confidence intervals give the machine's parameters, and figures rounded to
what those inputs support."""
import math

from . import loggops

# The parameters the probe measures with a confidence interval (its smallest size's);
# L and G come from fits over sizes, without one.
WITH_INTERVAL = {"o_s": "o_s_us", "o_r": "o_r_us", "g": "g_us"}


def probe_halves(run):
    """{parameter: 95 % CI half-width in ns} from a `loggp probe --json` result (the part with its
    summary and sizes), for the parameters it gives one for (at its summary's size); {} for none."""
    if not isinstance(run, dict) or not isinstance(run.get("summary"), dict):
        return {}
    at = run["summary"].get("at_bytes")
    sizes = [s for s in run.get("sizes") or () if isinstance(s, dict)]
    row = next((s for s in sizes if s.get("bytes") == at), sizes[0] if sizes else None)
    halves = {}
    for param, field in WITH_INTERVAL.items():
        cell = row.get(field) if row else None
        if isinstance(cell, dict) and isinstance(cell.get("ci95_half"), (int, float)) and cell["ci95_half"] >= 0:
            halves[param] = 1e3 * cell["ci95_half"]
    return halves


def corners(machine, halves):
    """(low, high): machine with every parameter that has an interval at its lower, then upper end."""
    low = {p: max(0.0, getattr(machine, p) - h) for p, h in halves.items()}
    high = {p: getattr(machine, p) + h for p, h in halves.items()}
    return loggops.Params(**{**vars(machine), **low}), loggops.Params(**{**vars(machine), **high})


def explained(replayed_ns, traced_ns):
    """The sentence on how much of the traced run the replay accounts for."""
    share = replayed_ns / traced_ns if traced_ns > 0 else float("nan")
    if not math.isfinite(share):
        return "the traced run has no length: slowdowns cannot be said as its share"
    if share <= 1.0:
        return (f"the replay explains {100 * share:.0f} % of the traced time; the other "
                f"{100 * (1 - share):.0f} % (time inside MPI the model does not account for "
                "at these parameters) is taken as unchanged by the knobs")
    return (f"the replay is {100 * share:.0f} % of the traced time: the model puts more on the "
            "critical path than the run had at these parameters, so its slowdowns lean high")


def round_significant(value, digits):
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))


def decimals_for(spread):
    """Decimal places that keep the first significant digit of spread (a figure's uncertainty)."""
    if spread <= 0 or not math.isfinite(spread):
        return None
    return max(0, -int(math.floor(math.log10(spread))))


def show_percent(value, low=None, high=None):
    """'+7.1 %', or with an interval '+7.1 % (+6.8 .. +7.5 with the probe's intervals)', rounded to
    the interval's first significant digit; without one, to two significant digits."""
    if low is None or high is None:
        shown = round_significant(value, 2)
        return f"{shown:+g} %"
    places = decimals_for(max(high - low, 0.0) / 2)
    if places is None:
        places = decimals_for(abs(value) / 100) or 0  # no spread: three significant digits
    return f"{value:+.{places}f} % ({low:+.{places}f} .. {high:+.{places}f} with the probe's intervals)"
