"""`loggp predict TRACE --target T`: the traced run replayed at a target network's
parameters (loggp.experiments.signature), beside the replay at the traced machine's own.

The target's o_s, o_r, g and L come from its small-message regime, G from its bulk one,
an L given only as T0 from T0 minus the o's, and its eager limit is the rendezvous
threshold S; what the target does not give stays the machine's. Unlike emulation, a
prediction may run faster than the machine: nothing is clipped."""
import math

from loggp.experiments import signature as sig_mod
from loggp.experiments import target as target_mod

from . import loggops


class TargetPredictionError(ValueError):
    """A target the replay cannot take; the message names it."""


def machine_signature(machine):
    """The replay's machine parameters as a signature (the host side of target - host)."""
    values = {p: float(getattr(machine, p)) for p in sig_mod.PARAMS}
    eager = None if not math.isfinite(machine.S) else int(machine.S)
    return sig_mod.Signature(name="machine", title="the traced machine", source="--machine or the default",
                             regimes=(sig_mod.Regime(0, None, values),), eager_limit=eager)


def target_params(target, machine):
    """loggops.Params of the target, the machine's where the target gives nothing."""
    values = {}
    for param, (value, how) in target_mod.target_values(target, machine_signature(machine)).items():
        if value is not None and value < 0:
            raise TargetPredictionError(f"target {target.name}: {param} = {value:.4g} ns ({how}) is negative")
        values[param] = getattr(machine, param) if value is None else value
    eager = target.eager_limit if target.eager_limit is not None else machine.S
    return loggops.Params(S=eager, **values)


def predicted_runtime(traced_ns, machine_replay_ns, target_replay_ns):
    """The traced run's length plus what the target adds (or takes away) in the replay: the
    time the model does not explain at the machine's own parameters stays as traced."""
    return traced_ns + (target_replay_ns - machine_replay_ns)


def predict(programs, machine, spec, simulate):
    """{"target", "params", "replayed_s", "predicted_s", "slowdown_percent"} for one target;
    simulate(programs, params) -> ns."""
    try:
        target = sig_mod.resolve(spec)
    except sig_mod.SignatureError as err:
        raise TargetPredictionError(f"--target: {err}") from None
    params = target_params(target, machine)
    base_ns = simulate(programs, machine)
    target_ns = simulate(programs, params)
    predicted = predicted_runtime(programs.traced_ns, base_ns, target_ns)
    return {"target": target.name, "title": target.title, "source": target.source,
            "params": {"o_s_ns": params.o_s, "o_r_ns": params.o_r, "g_ns": params.g, "G_ns_per_byte": params.G,
                       "L_ns": params.L, "S_bytes": params.S if math.isfinite(params.S) else None},
            "replayed_s": target_ns * 1e-9, "predicted_s": predicted * 1e-9,
            "slowdown_percent": 100.0 * (predicted - programs.traced_ns) / programs.traced_ns,
            "unverified": sorted({f for _, f in target.unverified()})}


def lines(row):
    """What `loggp predict --target` prints for one target."""
    p = row["params"]
    s_text = f"{p['S_bytes']:.0f} B" if p["S_bytes"] is not None else "none"
    out = [f"target {row['target']}: predicted {row['predicted_s']:.4f} s ({row['slowdown_percent']:+.1f} % of the "
           f"traced run); replayed {row['replayed_s']:.4f} s",
           f"  at o_s {p['o_s_ns'] / 1e3:.4g} us, o_r {p['o_r_ns'] / 1e3:.4g} us, g {p['g_ns'] / 1e3:.4g} us, "
           f"L {p['L_ns'] / 1e3:.4g} us, G {p['G_ns_per_byte']:.4g} ns/B, S {s_text}"]
    if row["unverified"]:
        out.append(f"  unverified in the catalogue: {', '.join(row['unverified'])} "
                   f"(`loggp targets show {row['target']}`)")
    return out
