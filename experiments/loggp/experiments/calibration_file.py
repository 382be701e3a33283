"""Optional input: calibration.json from `loggp calibrate --out DIR`, the
machine's T(m) = T0 + m/B fitted per protocol regime. Used to place each knob
setting on the linear model's axes: o and L raise T0, G lowers B."""
import json
import math
import os


class CalibrationError(Exception):
    pass


def load(path):
    """The regimes of a calibration.json: top-level "regimes", or under
    "baseline" as `loggp calibrate` writes them. B_bytes_per_us may be null
    (a regime with no measurable per-byte cost). A folder stands for the
    calibration.json in it, as `loggp calibrate --out DIR` writes it."""
    if os.path.isdir(path):
        path = os.path.join(path, "calibration.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise CalibrationError(f"cannot read calibration {path}: {e.strerror}") from None
    except ValueError as e:
        raise CalibrationError(f"calibration {path} is not JSON: {e}") from None
    regimes = None
    if isinstance(data, dict):
        regimes = data.get("regimes")
        if regimes is None and isinstance(data.get("baseline"), dict):
            regimes = data["baseline"].get("regimes")
    schema = data.get("schema") if isinstance(data, dict) else None
    if isinstance(schema, str) and not schema.startswith("loggp-calibration/"):
        made_by = {"loggp-probe": "`loggp probe --json`", "loggp-tune-packet": "`loggp tune packet`"}
        raise CalibrationError(f"{path} is a {schema.split('/')[0]} file (written by "
                               f"{made_by.get(schema.split('/')[0], 'another command')}), not a calibration: give "
                               f"the calibration.json that `loggp calibrate --out DIR` writes")
    if isinstance(data, dict) and "knobs" in data and "baseline" not in data and "regimes" not in data:
        # `loggp calibrate --no-baseline` skips the run the regimes are fitted to
        raise CalibrationError(f"calibration {path} has no T0 + m/B regimes: it was made with `loggp calibrate "
                               "--no-baseline`; rerun `loggp calibrate` without --no-baseline, or leave "
                               "--calibration out")
    if not isinstance(regimes, list) or not regimes:
        raise CalibrationError(f"calibration {path} has no 'regimes' list "
                               f"(at the top level or under 'baseline')")
    for i, r in enumerate(regimes):
        for key in ("m_min", "m_max", "T0_us", "B_bytes_per_us"):
            v = r.get(key) if isinstance(r, dict) else None
            if key == "B_bytes_per_us" and v is None and isinstance(r, dict) and key in r:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise CalibrationError(f"calibration {path}: regime {i} has a bad {key!r}: {v!r}")
        if r["B_bytes_per_us"] is not None and r["B_bytes_per_us"] <= 0:
            raise CalibrationError(f"calibration {path}: regime {i} has B_bytes_per_us "
                                   f"{r['B_bytes_per_us']} (must be > 0)")
    return regimes


def base_values(regimes):
    """(T0 in us of the small-message regime, B in bytes/us of the largest-message
    regime with a finite bandwidth, or None when no regime has one)."""
    small = min(regimes, key=lambda r: r["m_min"])
    finite = [r for r in regimes if r["B_bytes_per_us"] is not None]
    bulk = max(finite, key=lambda r: r["m_max"]) if finite else None
    return small["T0_us"], bulk["B_bytes_per_us"] if bulk else None


def added_T0_us(knob, value_us):
    """How much one knob setting raises the one-way start-up cost T0."""
    if knob == "o":
        return 2 * value_us          # o_s and o_r both
    if knob in ("o_s", "o_r", "L"):
        return value_us
    return 0.0


def bandwidth(base_B, G_ns_per_byte):
    """B after adding G: 1/B' = 1/B + G."""
    inverse = (1.0 / base_B if base_B else 0.0) + G_ns_per_byte / 1000.0
    return 1.0 / inverse if inverse > 0 else math.inf


def verdict(path):
    """{"verdict", "sentence", "verdicts_txt"} of a calibration.json that `loggp calibrate`
    judged (met, missed or unresolved), or None for one without verdicts or unreadable."""
    if os.path.isdir(path):
        path = os.path.join(path, "calibration.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("verdict") not in ("met", "missed", "unresolved"):
        return None
    return {"verdict": data["verdict"], "sentence": str(data.get("sentence", "")),
            "verdicts_txt": os.path.join(os.path.dirname(os.path.abspath(path)), "verdicts.txt")}
