"""A study's jitter sweep: L held at one mean while its
per-message spread is swept, so the analysis can plot slowdown against the
variance at a fixed mean (docs/jitter.md).

    [jitter]
    L = "10us"                                   # the mean, held fixed
    L_jitter = ["normal:1us", "normal:4us"]     # the spreads swept

The settings are the constant L ("none") and each spread, with the other
knobs at 0; their sweep is "L_jitter" and their knobs carry ("L_jitter", text)
after the five knobs."""
from loggp.shim.jitter_check import split_jitter

from . import subtable, units

SWEEP = "L_jitter"
KEYS = ("L", "L_jitter")


def parse_table(table, fail):
    """(L text, (jitter texts...)) from a [jitter] table, or None without one;
    fail(message, key) reports a bad key or value."""
    if table is None:
        return None
    subtable.check(table, "jitter", KEYS, fail)
    L = table.get("L")
    if not isinstance(L, str):
        fail('[jitter] needs L, the mean the spread is drawn around, e.g. L = "10us"', "L")
    try:
        if units.parse("L", L) <= 0:
            fail(f"[jitter] L = {L!r}: jitter needs an L above 0 to draw around", "L")
    except units.UnitError as err:
        fail(f"[jitter] {err}", "L")
    texts = table.get("L_jitter")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        fail('[jitter] L_jitter must be a non-empty list such as ["normal:1us", "normal:4us"]', "L_jitter")
    seen = set()
    for text in texts:
        try:
            _, spread, _ = split_jitter(text)
            units.parse("L", spread)
        except (ValueError, units.UnitError) as err:
            fail(f"[jitter] L_jitter: {err}", "L_jitter")
        if text in seen:
            fail(f"[jitter] L_jitter: {text!r} is listed twice", "L_jitter")
        seen.add(text)
    return L.strip(), tuple(t.strip() for t in texts)


def configs(jitter, zero):
    """[(sweep, knobs)] for the jitter sweep: the constant L, then each spread."""
    if not jitter:
        return []
    L, texts = jitter
    out = []
    for text in ("none",) + texts:
        knobs = dict(zero, L=L)
        knobs[SWEEP] = text
        out.append((SWEEP, knobs))
    return out


def spread_ns(text):
    """The standard deviation a setting names, in ns (0 for "none")."""
    if not text or text == "none":
        return 0.0
    return units.parse("L", split_jitter(text)[1])


def run_flags(knobs):
    """`loggp run` flags for a plan row's knobs (none without jitter)."""
    text = knobs.get(SWEEP)
    return ["--L-jitter", text] if text and text != "none" else []


# What `loggp run` would take from the caller's environment when its flags
# are absent; a study sets jitter through flags only.
VARIABLES = ("LOGGP_L_JITTER", "LOGGP_O_JITTER", "LOGGP_SEED")


def study_environment(environ):
    """The environment a study's runs get: the caller's without its jitter."""
    return {k: v for k, v in environ.items() if k not in VARIABLES}
