"""`loggp testbed calibrate`: L added by libloggp.so and by netem, measured side by side
across two emulated hosts (moved out of testbed.py, which keeps the namespaces and tc)."""
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.knobs.files import write_text_atomic
from loggp.testbed_hosts import TestbedError, UsageError, qdiscs, run_dir, up_state
from loggp.testbed_netem import netem_reset, netem_set, netem_supported, parse_knobs


ZERO_KNOBS = ["--o", "0ns", "--g", "0ns", "--G", "0ns/B"]


def probe_once(name, latency_knob, time_limit):
    """loggp-probe at 8 bytes between hosts 0 and 1, every other libloggp knob fixed at zero."""
    with tempfile.TemporaryDirectory(prefix="loggp-testbed-") as tmp:
        result = Path(tmp, "probe.json")
        cmd = [sys.executable, "-m", "loggp.cli", "run", "--testbed", name, "-n", "2", "--quiet",
               *ZERO_KNOBS, "--L", latency_knob, "--", "loggp-probe", "--sizes", "8", "--no-refine",
               "--time-limit", str(time_limit), "--quiet", "--json", str(result)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 4 * time_limit)
        if proc.returncode != 0 or not result.is_file():
            raise TestbedError(f"loggp-probe failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
        summary = json.loads(result.read_text())["summary"]
    return {"L_us": summary["L_us"], "T_us": summary["T_us"], "o_s_us": summary["o_s_us"],
            "o_r_us": summary["o_r_us"]}


def spread(values):
    """[least, largest]: the range of a few runs, said as such (not an interval)."""
    return [min(values), max(values)] if values else None


def rows_of(runs, set_us, why):
    """One row per method from its runs ({method: [probe summary per round]}, baseline first):
    the run with the least L (a shared machine's disturbances only ever add time), the range
    of all the runs' L, the added L and its error against set_us, and the range of the error
    over the rounds (each round's run minus that round's baseline run: the methods take
    turns, so a round's runs share the machine's state)."""
    rows = []
    for method, results in runs.items():
        row = {"method": method, "set_L_us": 0.0 if method == "baseline" else set_us}
        if results:
            row.update(min(results, key=lambda r: r["L_us"]))
            row["all_L_us"] = [r["L_us"] for r in results]
            row["L_range_us"] = spread(row["all_L_us"])
        else:
            row["unavailable"] = f"kernel has no netem qdisc ({why})"
        rows.append(row)
    base = rows[0]
    for row in rows[1:]:
        if "L_us" in row:
            row["added_L_us"] = row["L_us"] - base["L_us"]
            row["error_pct"] = 100 * (row["added_L_us"] - set_us) / set_us
            per_round = [100 * (L - b - set_us) / set_us for L, b in zip(row["all_L_us"], base["all_L_us"])]
            row["error_pct_range"] = spread(per_round)
    return rows


def report_text(report):
    """The table `loggp testbed calibrate` prints."""
    repeat = report["repeat"]
    lines = [f"L on testbed '{report['testbed']}' between {report['hosts'][0]} and {report['hosts'][1]} "
             f"(loggp-probe, 8 B, medians in us; least L of {repeat} runs; the ranges are the spread of "
             f"the {repeat} runs, the error's per round)",
             f"{'method':10s} {'set L':>9s} {'T(8B)':>9s} {'L':>9s} {'added L':>9s} {'error':>8s} "
             f"{'L range':>19s} {'error range':>17s}"]
    for row in report["rows"]:
        if "L_us" not in row:
            lines.append(f"{row['method']:10s} {row['set_L_us']:9.3f}  unavailable: {row['unavailable']}")
            continue
        added = f"{row['added_L_us']:9.3f}" if "added_L_us" in row else f"{'-':>9s}"
        error = f"{row['error_pct']:7.1f}%" if "error_pct" in row else f"{'-':>8s}"
        low, high = row["L_range_us"]
        L_range = f"[{low:.3f}, {high:.3f}]" if repeat > 1 else "one run"
        errors = row.get("error_pct_range")
        error_range = ("-" if errors is None else "one run" if repeat == 1
                       else f"[{errors[0]:.1f}, {errors[1]:.1f}]%")
        lines.append(f"{row['method']:10s} {row['set_L_us']:9.3f} {row['T_us']:9.3f} {row['L_us']:9.3f} "
                     f"{added} {error} {L_range:>19s} {error_range:>17s}")
    return "\n".join(lines) + "\n"


def calibrate(name, latency, time_limit, json_path, repeat=3, out=sys.stdout):
    """L added by libloggp.so and by netem, each measured with loggp-probe across two namespaces.
    The methods take turns, REPEAT rounds; each row keeps its run with the least L (a shared
    machine's disturbances only ever add time)."""
    L_ns = parse_knobs(latency, None)["L"]
    if not L_ns:
        raise UsageError(f"--L '{latency}': calibration needs a latency above zero")
    state = up_state(name)
    if len(state["hosts"]) < 2:
        raise TestbedError(f"testbed '{name}' has {len(state['hosts'])} host; calibration needs 2")
    if any(qdiscs(ns) for _, ns, _ in state["hosts"]):
        raise TestbedError(f"testbed '{name}' has link qdiscs applied: run `loggp testbed netem reset` first")
    # No qdisc is applied, so knobs remembered from an earlier set are stale.
    (run_dir(name) / "netem.json").unlink(missing_ok=True)
    set_us = L_ns / 1000
    netem_ok, why = netem_supported(state["hosts"][0][1])
    runs = {"baseline": [], "libloggp": [], "netem": []}
    for _ in range(repeat):
        runs["baseline"].append(probe_once(name, "0ns", time_limit))
        runs["libloggp"].append(probe_once(name, latency, time_limit))
        if netem_ok:
            try:
                netem_set(name, latency, None, out=io.StringIO())
                runs["netem"].append(probe_once(name, "0ns", time_limit))
            finally:
                netem_reset(name, out=io.StringIO())
    rows = rows_of(runs, set_us, why)
    report = {"schema": "loggp-testbed-calibrate/1", "testbed": name, "hosts": [h[2] for h in state["hosts"][:2]],
              "message_bytes": 8, "repeat": repeat, "set_L_us": set_us, "rows": rows}
    print(report_text(report), end="", file=out)
    if json_path:
        write_text_atomic(json_path, json.dumps(report, indent=2) + "\n")
    return report


