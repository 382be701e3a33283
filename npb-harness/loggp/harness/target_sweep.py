"""A study's target networks: each benchmark also runs emulating each target
(`loggp run --target`, docs/targets.md), beside its baseline.

    targets = ["now", "100baset", "machines/other.json"]   # catalogue names or files

A file is a `loggp probe --json` result or a target TOML, relative to the study
file. Each target is one setting, sweep "target", whose knobs carry ("target",
spec) after the five knobs (all 0: `loggp run --target` sets them itself from the
host's signature, which the study measures once into its results folder)."""
import json
import os

from loggp.experiments import signature, target
from loggp.knobs.files import write_text_atomic

KEY = "target"
HOST_SIGNATURE = "host-signature.json"


def parse(value, fail, base_dir):
    """The study's targets as given (names or paths), each checked to resolve; fail(message)
    reports a bad one. None without a `targets` key."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        fail(f"targets = {value!r}: expected a non-empty list of catalogue names or files, "
             'e.g. ["now", "100baset"] (`loggp targets` lists them)')
    seen = set()
    for spec in value:
        if spec in seen:
            fail(f"targets: {spec!r} is listed twice")
        seen.add(spec)
        try:
            signature.resolve(resolve_path(spec, base_dir))
        except signature.SignatureError as err:
            fail(f"targets: {err}")
    return tuple(value)


def resolve_path(spec, base_dir):
    """A catalogue name as it is; a file relative to the study file's folder."""
    looks_like_file = "/" in spec or spec.endswith((".json", ".toml"))
    if looks_like_file and not os.path.isabs(spec):
        return os.path.join(base_dir, spec)
    return spec


def configs(targets, zero):
    """[(sweep, knobs)]: one setting per target."""
    return [(KEY, {**zero, KEY: spec}) for spec in targets or ()]


def run_flags(knobs, study_path, host_signature):
    """`loggp run` flags of a target setting (none for any other)."""
    if KEY not in knobs:
        return []
    spec = resolve_path(knobs[KEY], os.path.dirname(study_path))
    return ["--target", spec, "--host-signature", host_signature]


def host_signature(results_dir, measure, attempts=3):
    """The study's host signature file, measured once (measure() -> probe JSON) and kept. A
    reading the signature refuses (a negative g from a disturbed probe) is measured again, up
    to `attempts` times; a kept file that is not a signature is refused, naming it."""
    path = os.path.join(results_dir, HOST_SIGNATURE)
    if os.path.isfile(path):
        try:
            signature.load_file(path)
        except signature.SignatureError as err:
            raise signature.SignatureError(f"{err}; delete it to measure this host again") from None
        return os.path.abspath(path)
    for attempt in range(attempts):
        data = measure()
        try:
            signature.from_probe(data, path)
        except signature.SignatureError as err:
            refused = err
            continue
        write_text_atomic(path, json.dumps(data, indent=1))
        return os.path.abspath(path)
    raise signature.SignatureError(f"{refused} (in each of {attempts} measurements)")


def applied_knobs(knobs, study_path, host_signature):
    """{knob: ns (ns/B for G)} that `loggp run --target` sets for a target setting (target -
    host, clipped at 0), for the store's knob columns; None for any other setting."""
    if KEY not in knobs or not host_signature:
        return None
    spec = resolve_path(knobs[KEY], os.path.dirname(study_path))
    plan = target.compute(signature.resolve(spec), signature.load_file(host_signature), clip=True)
    return {r.param: r.delta for r in plan.rows}
