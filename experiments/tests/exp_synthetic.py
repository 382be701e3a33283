"""Synthetic loggp-probe results from a LogGP model with known parameters, for testing the
analysis without MPI. A perfect apparatus adds exactly what its knobs say; `scale` and
`leak` model broken ones."""
import numpy as np

BASE = {"o_s": 0.15, "o_r": 0.90, "g": 0.80, "L": 0.30, "G": 0.10}  # us, G in ns/B


def synthetic_probe(sizes, knobs=None, scale=None, leak=None, noise=0.0, rng=None, eager_limit=8192,
                    rounds=None, round_noise_us=0.0, armed_cost_us=0.0):
    """knobs: increments {o_s, o_r, g, G, L} (us, ns/B). scale: {param: factor} applied to
    a knob's own effect (0.5 = a knob that does half its job). leak: {(knob, param): factor},
    e.g. {("L", "o_r"): 0.3} makes 30 % of L show up in o_r. noise: relative sigma.
    rounds: per-round medians (`rounds_us`, as a --knob-set run writes them), each with
    round_noise_us of Gaussian noise. armed_cost_us: what the armed layer costs each blocking
    receive (o_r and T) whenever any knob is nonzero."""
    k = {"o_s": 0.0, "o_r": 0.0, "g": 0.0, "G": 0.0, "L": 0.0, **(knobs or {})}
    armed = armed_cost_us if any(k.values()) else 0.0
    scale = scale or {}
    eff = {p: k[p] * scale.get(p, 1.0) for p in k}
    extra = {p: 0.0 for p in ("o_s", "o_r", "g", "L")}
    for (knob, param), factor in (leak or {}).items():
        extra[param] += factor * k[knob]
    rng = rng or np.random.default_rng(1)
    entries = []
    for m in sizes:
        rendezvous = m > eager_limit
        copy = m * 0.00002
        o_s = BASE["o_s"] + copy + (4.0 if rendezvous else 0.0) + eff["o_s"] + extra["o_s"]
        o_r = BASE["o_r"] + copy + (3.0 if rendezvous else 0.0) + eff["o_r"] + extra["o_r"] + armed
        # LogP: a burst goes no faster than its overhead; the gap knob stalls on top.
        g = (BASE["g"] + (m - 1) * BASE["G"] / 1000 + (3.5 if rendezvous else 0.0)
             + max(eff["g"], eff["o_s"], eff["o_r"]) + (m - 1) * eff["G"] / 1000 + extra["g"])
        T = o_s + o_r + BASE["L"] + eff["L"] + extra["L"] + (m - 1) * (BASE["G"] + eff["G"]) / 1000
        values = {"T_us": T, "o_s_us": o_s, "o_r_us": o_r, "g_us": g}
        entry = {"bytes": int(m), "refined": False}
        for key, v in values.items():
            noisy = v * (1 + noise * rng.standard_normal()) if noise else v
            entry[key] = {"median": float(noisy), "ci95_half": float(abs(v) * max(noise, 0.001)),
                          "samples": 50, "converged": True}
            if rounds:
                per_round = noisy + round_noise_us * rng.standard_normal(rounds)
                entry[key]["rounds_us"] = [float(x) for x in per_round]
                entry[key]["median"] = float(np.median(per_round))
        entry["L_us"] = entry["T_us"]["median"] - entry["o_s_us"]["median"] - entry["o_r_us"]["median"]
        entries.append(entry)
    return {"schema": "loggp-probe/1", "probe_version": "synthetic", "np": 2, "send_mode": "send",
            "recv_mode": "recv", "summary": {}, "sizes": entries}
