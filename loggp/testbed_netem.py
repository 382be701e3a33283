"""`loggp testbed netem`: L and G on the testbed's links with tc, beside libloggp.so's
knobs: netem delays every host interface's egress by L, tbf paces it at 1/G bytes per
second. The knobs last applied are kept in the run folder (netem.json)."""
import json
import math
import sys

from loggp.knobs import KnobError, parse as parse_knob_values
from loggp.testbed_hosts import (HOST_IFACE, TestbedError, UsageError, qdiscs, run_dir, sh, tc_command, up_state,
                                 write_run_file)

# tbf: the bucket holds 1 ms at the rate, at least two full frames. A bucket smaller than a
# 64 KiB GSO packet makes tbf cut it into frames, and per-frame costs then cap the rate well
# below fast links; 1 ms keeps line-rate bursts short. The queue holds more than TCP keeps in
# flight, so nothing is dropped.
TBF_BURST_BYTES = 4096
TBF_BURST_S = 1e-3
TBF_LIMIT_BYTES = 4 << 20
NETEM_LIMIT_PACKETS = 100000


def parse_knobs(latency, per_byte):
    """Validates --L and --G with loggp-knobs (the project's one knob parser) and returns them in
    ns and ns/B (None for a knob not given)."""
    given = {knob: text for knob, text in (("L", latency), ("G", per_byte)) if text is not None}
    try:
        parsed = parse_knob_values(given)
    except KnobError as err:
        raise UsageError(str(err)) from None
    return {"L": parsed.get("L"), "G": parsed.get("G")}


def rate_bytes_per_s(G_ns_per_byte):
    """G = x ns/B becomes a link rate of 1e9/x bytes per second (tc's 'bps' unit is bytes/s)."""
    return round(1e9 / G_ns_per_byte)


def netem_delay_us(L_ns):
    return f"{L_ns / 1000:.3f}us"


# ---------------------------------------------------------------- tc backend

def qdisc_commands(L_ns, G_ns_per_byte):
    """tc commands (after `tc -n NS`) for one host's interface. L: netem delay of the full L on the
    egress of every host interface; a packet from A to B passes only A's host interface egress, so
    the one-way latency grows by exactly L. G: tbf at 1/G bytes per second, the root; with both,
    netem is tbf's child, so a packet is delayed by L and then paced at the rate."""
    cmds = []
    delay = ["netem", "delay", netem_delay_us(L_ns), "limit", str(NETEM_LIMIT_PACKETS)] if L_ns else None
    if G_ns_per_byte:
        rate = rate_bytes_per_s(G_ns_per_byte)
        burst = max(TBF_BURST_BYTES, math.ceil(rate * TBF_BURST_S))
        cmds.append(["qdisc", "add", "dev", HOST_IFACE, "root", "handle", "1:", "tbf",
                     "rate", f"{rate}bps", "burst", str(burst), "limit", str(max(TBF_LIMIT_BYTES, 2 * burst))])
        if delay:
            cmds.append(["qdisc", "add", "dev", HOST_IFACE, "parent", "1:1", "handle", "10:", *delay])
    elif delay:
        cmds.append(["qdisc", "add", "dev", HOST_IFACE, "root", "handle", "10:", *delay])
    return cmds


def clear_qdiscs(ns):
    if qdiscs(ns):
        sh([tc_command(), "-n", ns, "qdisc", "del", "dev", HOST_IFACE, "root"])


def netem_supported(ns):
    """Whether this kernel has sch_netem: try it on the host namespace's own loopback."""
    tc = tc_command()
    proc = sh([tc, "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0us"], check=False)
    if proc.returncode == 0:
        sh([tc, "-n", ns, "qdisc", "del", "dev", "lo", "root"], check=False)
        return True, ""
    return False, proc.stderr.strip()


def applied_knobs(name):
    try:
        return json.loads((run_dir(name) / "netem.json").read_text())
    except (OSError, ValueError):
        return {"L_ns": 0.0, "G_ns_per_byte": 0.0}


def netem_set(name, latency, per_byte, out=sys.stdout):
    knobs = parse_knobs(latency, per_byte)
    if knobs["L"] is None and knobs["G"] is None:
        raise UsageError("netem set: give --L and/or --G")
    state = up_state(name)
    # Knobs not given keep their applied value, as with `loggp-knobs set`.
    previous = applied_knobs(name)
    L_ns = knobs["L"] if knobs["L"] is not None else previous.get("L_ns", 0.0)
    G_ns_per_byte = knobs["G"] if knobs["G"] is not None else previous.get("G_ns_per_byte", 0.0)
    if G_ns_per_byte and rate_bytes_per_s(G_ns_per_byte) < 1000:
        raise UsageError(f"--G '{per_byte}': {G_ns_per_byte:g} ns/B is a rate under 1000 bytes/s, "
                         "too slow for tbf")
    if L_ns:
        ok, why = netem_supported(state["hosts"][0][1])
        if not ok:
            raise TestbedError(f"--L {latency or netem_delay_us(L_ns)}: this kernel has no netem qdisc "
                               f"(CONFIG_NET_SCH_NETEM; tc says: {why}); nothing changed. Use the libloggp.so "
                               "knob instead: loggp run --testbed --L ...")
    try:
        for _, ns, _ in state["hosts"]:
            clear_qdiscs(ns)
            for cmd in qdisc_commands(L_ns, G_ns_per_byte):
                sh([tc_command(), "-n", ns, *cmd])
    except TestbedError as err:
        for _, ns, _ in state["hosts"]:
            sh([tc_command(), "-n", ns, "qdisc", "del", "dev", HOST_IFACE, "root"], check=False)
        (run_dir(name) / "netem.json").unlink(missing_ok=True)
        raise TestbedError(f"netem set failed, every host link reset to no qdisc: {err}") from None
    write_run_file(run_dir(name) / "netem.json", json.dumps({"L_ns": L_ns, "G_ns_per_byte": G_ns_per_byte}) + "\n")
    parts = []
    if L_ns:
        parts.append(f"L={netem_delay_us(L_ns)} (netem delay on every {HOST_IFACE} egress)")
    if G_ns_per_byte:
        parts.append(f"G={G_ns_per_byte:g}ns/B (tbf rate {rate_bytes_per_s(G_ns_per_byte)} bytes/s)")
    print(f"testbed '{name}': " + (", ".join(parts) or "no delay, no rate limit"), file=out)


def netem_reset(name, out=sys.stdout):
    state = up_state(name)
    for _, ns, _ in state["hosts"]:
        clear_qdiscs(ns)
    (run_dir(name) / "netem.json").unlink(missing_ok=True)
    print(f"testbed '{name}': link qdiscs removed", file=out)


def netem_show(name, as_json, out=sys.stdout):
    state = up_state(name)
    report = {"name": name, "knobs": applied_knobs(name),
              "hosts": [{"namespace": ns, "address": address, "interface": HOST_IFACE, "qdiscs": qdiscs(ns)}
                        for _, ns, address in state["hosts"]]}
    if as_json:
        print(json.dumps(report, indent=2), file=out)
        return
    knobs = report["knobs"]
    print(f"testbed '{name}': L={netem_delay_us(knobs['L_ns'])} G={knobs['G_ns_per_byte']:g}ns/B", file=out)
    for host in report["hosts"]:
        lines = host["qdiscs"] or ["(none: default noqueue)"]
        print(f"  {host['namespace']} {host['address']} {HOST_IFACE}: {lines[0]}", file=out)
        for line in lines[1:]:
            print(f"  {'':{len(host['namespace']) + len(host['address']) + len(HOST_IFACE) + 3}}{line}", file=out)
