"""A network's LogGP signature: what `loggp run --target`, `loggp calibrate --target` and
`loggp predict --target` aim at.

A signature is read from `loggp probe --json` output (a machine measured by loggp
itself) or from a small TOML file (a network described by a published source, as in
the catalogue under experiments/targets/). Values are kept in ns (G in ns per byte),
the unit of the knobs; a parameter the source does not give is None, never 0.

TOML format (docs/targets.md):

    name = "now"                       # lower case, digits and '-'
    title = "Berkeley NOW ..."
    source = "paper, table"            # required: where the figures come from
    cites = "Table 2, p. 4"            # optional: where in the source each figure is read
    notes = "..."                      # how figures were derived, what is not verified
    eager_limit_bytes = 8192           # optional: largest eager message
    [[regime]]                         # one or more, ascending, not overlapping
    bytes = [1, 8192]                  # message sizes this regime covers
    o_s = "2.9us"                      # any of o_s, o_r, g, L, T0 (times) and G (time per byte),
    G = "26.316ns/B"                   #   with units as `loggp run` takes them
    derived = { G = "1 / 38 MB/s" }    # optional: how each derived figure was obtained
    unverified = { g = "why" }         # optional: figures not checked against the source, and why
"""
import json
import math
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from loggp.knobs import KNOBS, KnobError, parse as parse_knobs

PARAMS = KNOBS  # o_s, o_r, g, G, L: the parameters a knob can move
# T0 = o_s + L + o_r: the start-up cost a source may give without splitting it.
FIGURES = (*PARAMS, "T0")
NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
TOP_KEYS = {"name", "title", "source", "cites", "notes", "eager_limit_bytes", "regime"}
REGIME_KEYS = {"bytes", *FIGURES, "derived", "unverified"}
CATALOGUE = Path(__file__).resolve().parents[2] / "targets"


class SignatureError(ValueError):
    """A signature that cannot be read; the message names the file and the bad value."""


@dataclass(frozen=True)
class Regime:
    """The figures of one range of message sizes (bytes, inclusive; high None: no limit)."""
    low: int
    high: int | None
    values: dict  # figure -> ns (ns/B for G); absent: the source does not give it
    derived: dict = field(default_factory=dict)
    unverified: dict = field(default_factory=dict)  # figure -> why it was not checked against the source

    def get(self, figure):
        return self.values.get(figure)

    def covers(self):
        return f"{self.low} B and up" if self.high is None else f"{self.low}-{self.high} B"


@dataclass(frozen=True)
class Signature:
    name: str
    title: str
    source: str
    regimes: tuple
    notes: str = ""
    cites: str = ""  # where in the source the figures are read (table, figure, page, file)
    eager_limit: int | None = None  # largest eager message, bytes; None: not known
    path: str | None = None
    measured_at: float | None = None  # a probe file's time (epoch s), for its age
    knobs: dict | None = None  # a probe file's knobs in force, as it recorded them

    @property
    def small(self):
        """The regime of the smallest messages: where o, g and L are read."""
        return self.regimes[0]

    @property
    def bulk(self):
        """The regime of the largest messages that gives G: where G is read."""
        with_g = [r for r in self.regimes if r.get("G") is not None]
        return with_g[-1] if with_g else self.regimes[-1]

    def unverified(self):
        """[(regime, figure)] the catalogue marks as not checked against its source."""
        return [(r, f) for r in self.regimes for f in r.unverified]


def _where(path):
    return str(path) if path else "signature"


def parse_figure(where, figure, value):
    """'2.9us' -> 2900.0 ns, '0.5ns/B' -> 0.5 ns/B, through the one knob parser."""
    if not isinstance(value, str):
        example = '"0.5ns/B"' if figure == "G" else '"2.9us"'
        raise SignatureError(f"{where}: {figure} = {value!r}: expected a string with a unit, e.g. {example}")
    knob = "G" if figure == "G" else "L"
    try:
        return parse_knobs({knob: value})[knob]
    except KnobError as err:
        said = str(err).split(": ", 1)[-1]
        said = said.removeprefix(f"'{value}': ")
        raise SignatureError(f"{where}: {figure} = '{value}': {said}") from None


def _size_range(where, value):
    if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], int)
            or not (isinstance(value[1], int) or value[1] == "inf") or isinstance(value[0], bool)):
        raise SignatureError(f"{where}: bytes = {value!r}: expected [LOW, HIGH] in bytes (HIGH may be \"inf\")")
    low, high = value[0], None if value[1] == "inf" else value[1]
    if low < 0 or (high is not None and high < low):
        raise SignatureError(f"{where}: bytes = {value!r}: expected 0 <= LOW <= HIGH")
    return low, high


def from_toml_text(text, path=None):
    """A signature from the TOML text of a target file; SignatureError naming any bad value."""
    where = _where(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SignatureError(f"{where}: not TOML ({err})") from None
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise SignatureError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(sorted(TOP_KEYS))})")
    if "cites" in data and not isinstance(data["cites"], str):
        raise SignatureError(f"{where}: cites = {data['cites']!r}: expected a string (table, figure, page or file)")
    for key in ("name", "source"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SignatureError(f"{where}: '{key}' is missing or empty (every target names its {key})")
    if not NAME.match(data["name"]):
        raise SignatureError(f"{where}: name = '{data['name']}': expected lower-case letters, digits and '-'")
    limit = data.get("eager_limit_bytes")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise SignatureError(f"{where}: eager_limit_bytes = {limit!r}: expected a whole number of bytes >= 0")
    regimes = data.get("regime")
    if not isinstance(regimes, list) or not regimes:
        raise SignatureError(f"{where}: no [[regime]]: a target gives its figures per range of message sizes")
    out = []
    for i, raw in enumerate(regimes):
        here = f"{where}: regime {i + 1}"
        unknown = sorted(set(raw) - REGIME_KEYS)
        if unknown:
            raise SignatureError(f"{here}: unknown key '{unknown[0]}' (known: {', '.join(sorted(REGIME_KEYS))})")
        if "bytes" not in raw:
            raise SignatureError(f"{here}: 'bytes' is missing (the sizes it covers, [LOW, HIGH])")
        low, high = _size_range(here, raw["bytes"])
        values = {f: parse_figure(here, f, raw[f]) for f in FIGURES if f in raw}
        if not values:
            raise SignatureError(f"{here}: no figure (expected some of {', '.join(FIGURES)})")
        derived = raw.get("derived", {})
        if not isinstance(derived, dict) or any(k not in values or not isinstance(v, str) for k, v in derived.items()):
            raise SignatureError(f"{here}: derived = {derived!r}: expected {{figure = \"how\"}} for figures it gives")
        unverified = raw.get("unverified", {})
        if (not isinstance(unverified, dict)
                or any(k not in values or not isinstance(v, str) or not v.strip() for k, v in unverified.items())):
            raise SignatureError(f"{here}: unverified = {unverified!r}: expected {{figure = \"why it is not "
                                 f"verified\"}} for figures it gives")
        if out and (out[-1].high is None or low <= out[-1].high):
            raise SignatureError(f"{here}: bytes {raw['bytes']!r} overlaps or precedes the regime before it")
        out.append(Regime(low, high, values, dict(derived), dict(unverified)))
    return Signature(name=data["name"], title=data.get("title", data["name"]), source=data["source"].strip(),
                     notes=data.get("notes", "").strip(), eager_limit=limit, regimes=tuple(out),
                     path=str(path) if path else None, cites=data.get("cites", "").strip())


def find_probe_run(data):
    """The dict holding a probe summary, searched depth first (a --knob-set file's first set)."""
    if isinstance(data, dict):
        summary = data.get("summary")
        if isinstance(summary, dict) and {"o_s_us", "o_r_us", "g_us", "L_us", "G_ns_per_byte"} <= summary.keys():
            return data
        items = list(data.values())
    elif isinstance(data, list):
        items = data
    else:
        return None
    for item in items:
        found = find_probe_run(item)
        if found is not None:
            return found
    return None


def _probe_number(where, summary, key):
    value = summary.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        said = " (a negative reading is the machine's noise: measure again)" if isinstance(value, (int, float)) \
            and not isinstance(value, bool) and value < 0 else ""
        raise SignatureError(f"{where}: summary {key} = {value!r}: expected a number >= 0{said}")
    return float(value)


def from_probe(data, path=None, measured_at=None):
    """A signature from `loggp probe --json` output: one regime, the eager one, with the
    summary's o_s, o_r, g, L and G (G over its fit's sizes), and the eager limit: the largest
    size measured below the protocol switch."""
    where = _where(path)
    run = find_probe_run(data)
    if run is None:
        raise SignatureError(f"{where}: no probe summary in it (expected `loggp probe --json` output)")
    summary = run["summary"]
    values = {"o_s": 1e3 * _probe_number(where, summary, "o_s_us"),
              "o_r": 1e3 * _probe_number(where, summary, "o_r_us"),
              "g": 1e3 * _probe_number(where, summary, "g_us"),
              "L": 1e3 * _probe_number(where, summary, "L_us"),
              "G": _probe_number(where, summary, "G_ns_per_byte")}
    sizes = sorted(s["bytes"] for s in run.get("sizes") or () if isinstance(s, dict)
                   and isinstance(s.get("bytes"), int))
    switch = summary.get("protocol_switch_bytes")
    below = [b for b in sizes if switch is None or b < switch]
    limit = max(below) if switch and below else None
    low = sizes[0] if sizes else 0
    high = sizes[-1] if sizes else None
    host = data.get("host") if isinstance(data, dict) else None
    name = Path(path).stem if path else "probe"
    fit = summary.get("G_fit_bytes")
    return Signature(name=name, title=f"measured by loggp probe on {host or 'a host'}",
                     source=f"loggp probe --json {Path(path).name if path else ''}".strip(),
                     notes=f"G fitted over {fit[0]}-{fit[1]} B" if isinstance(fit, list) and len(fit) == 2 else "",
                     eager_limit=limit, regimes=(Regime(low, high, values),), path=str(path) if path else None,
                     measured_at=measured_at, knobs=run.get("knobs", data.get("knobs")))


def load_file(path):
    """A signature from a file: `loggp probe --json` output (.json) or a target TOML."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as err:
        raise SignatureError(f"{path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise SignatureError(f"{path}: not text") from None
    if p.suffix == ".toml":
        return from_toml_text(text, path)
    try:
        data = json.loads(text)
    except ValueError:
        if p.suffix == ".json":
            raise SignatureError(f"{path}: not JSON") from None
        return from_toml_text(text, path)
    return from_probe(data, path, p.stat().st_mtime)


def catalogue(directory=CATALOGUE):
    """Every signature the catalogue ships, by name."""
    found = {}
    for path in sorted(Path(directory).glob("*.toml")):
        sig = load_file(path)
        if sig.name in found:
            raise SignatureError(f"{path}: name '{sig.name}' is also {found[sig.name].path}'s")
        found[sig.name] = sig
    return found


def resolve(spec, directory=CATALOGUE):
    """A target by catalogue name or file path."""
    if not spec:
        raise SignatureError("expected a catalogue name or a file, got ''")
    if "/" in spec or spec.endswith((".json", ".toml")) or Path(spec).is_file():
        return load_file(spec)
    known = catalogue(directory)
    if spec not in known:
        raise SignatureError(f"unknown target '{spec}' (catalogue: {', '.join(known)}; or give a file)")
    return known[spec]


def age_text(measured_at, now=None):
    """How long ago a probe file was written, for a person."""
    seconds = max(0.0, (now if now is not None else time.time()) - measured_at)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.0f} days ago"


def show(figure, value):
    """One figure for a person: us for times, ns/B for G; '-' for not given."""
    if value is None or math.isnan(value):
        return "-"
    if figure == "G":
        return f"{value:.4g} ns/B"
    return f"{value / 1e3:.4g} us"


def knob_text(figure, value):
    """A value in ns (ns/B) as the knob parser takes it, to the ps."""
    ps = round(value * 1000)
    if ps == 0:
        return "0"
    ns = f"{ps / 1000:.3f}".rstrip("0").rstrip(".")
    return f"{ns}ns/B" if figure == "G" else f"{ns}ns"


def describe(sig):
    """The lines `loggp targets show NAME` prints."""
    lines = [f"{sig.name}: {sig.title}", f"  source: {' '.join(sig.source.split())}"]
    if sig.cites:
        lines.append(f"  cites: {' '.join(sig.cites.split())}")
    if sig.path:
        lines.append(f"  file: {sig.path}")
    lines.append(f"  eager limit: {f'{sig.eager_limit} B' if sig.eager_limit is not None else 'not given'}")
    for r in sig.regimes:
        figures = ", ".join(f"{f} {show(f, r.get(f))}{' (unverified)' if f in r.unverified else ''}"
                            for f in FIGURES if r.get(f) is not None)
        lines.append(f"  {r.covers()}: {figures}")
        for figure, how in r.derived.items():
            lines.append(f"    {figure} derived: {' '.join(how.split())}")
        for figure, why in r.unverified.items():
            lines.append(f"    {figure} unverified: {' '.join(why.split())}")
    if sig.notes:
        lines.append("  notes: " + " ".join(sig.notes.split()))
    return lines
