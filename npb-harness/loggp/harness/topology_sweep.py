"""A study's per-pair sweep: L or G between nodes swept
while pairs on one node keep the knobs (all 0), so the analysis can plot
slowdown against the inter-node latency (docs/topology.md).

    [topology]
    ranks_per_node = 2                # nodes of 2 consecutive ranks (default: the hosts)
    L_inter = ["2us", "10us"]         # swept
    G_inter = ["0.5ns/B"]             # optional, swept on its own

Each setting's sweep is "L_inter" or "G_inter"; its knobs carry (sweep, text)
and ("ranks_per_node", n) after the five knobs, and become `loggp run`'s
--L-inter / --G-inter / --ranks-per-node."""
from . import subtable, units

SWEEPS = {"L_inter": "L", "G_inter": "G"}  # swept key -> the knob whose units it takes
RANKS_PER_NODE = "ranks_per_node"
EXTRA = tuple(SWEEPS) + (RANKS_PER_NODE,)
FLAGS = {"L_inter": "--L-inter", "G_inter": "--G-inter", RANKS_PER_NODE: "--ranks-per-node"}


def parse_table(table, fail, nps, one_host=False):
    """(ranks_per_node or None, {sweep: (texts...)}) from a [topology] table, or
    None without one; fail(message, key) reports a bad key or value; nps are
    the study's rank counts (a node holding every rank would sweep nothing);
    one_host: every rank runs on this host, so without ranks_per_node (the
    nodes then are the hosts) no pair would be inter-node."""
    if table is None:
        return None
    subtable.check(table, "topology", (RANKS_PER_NODE,) + tuple(SWEEPS), fail)
    rpn = table.get(RANKS_PER_NODE)
    if rpn is not None and (not isinstance(rpn, int) or isinstance(rpn, bool) or rpn < 1):
        fail(f"[topology] ranks_per_node = {rpn!r}: expected a whole number >= 1", RANKS_PER_NODE)
    if rpn is not None and nps and max(nps) <= rpn:
        fail(f"[topology] ranks_per_node = {rpn} puts all {max(nps)} ranks on one node: no pair is inter-node",
             RANKS_PER_NODE)
    if rpn is None and one_host:
        fail("[topology] has no ranks_per_node, so the nodes are the hosts, and the study runs every rank on "
             "this one host (launcher mpiexec, no hostfile): no pair is inter-node; give ranks_per_node",
             RANKS_PER_NODE)
    swept = {}
    for key, knob in SWEEPS.items():
        texts = table.get(key)
        if texts is None:
            continue
        example = '["0.5ns/B", "2ns/B"]' if knob == "G" else '["2us", "10us"]'
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            fail(f"[topology] {key} must be a non-empty list of values such as {example}", key)
        seen = set()
        for text in texts:
            try:
                ns = units.parse(knob, text)
            except units.UnitError as err:
                fail(f"[topology] {key}: {err}", key)
            if ns in seen:
                fail(f"[topology] {key}: {text!r} is listed twice", key)
            seen.add(ns)
        swept[key] = tuple(sorted((t.strip() for t in texts), key=lambda t: units.parse(knob, t)))
    if not swept:
        fail('[topology] needs L_inter or G_inter, the values to sweep, e.g. L_inter = ["2us", "10us"]', "L_inter")
    return rpn, swept


def configs(topology, zero):
    """[(sweep, knobs)] for the topology sweep: each value of each swept key."""
    if not topology:
        return []
    rpn, swept = topology
    out = []
    for key, texts in swept.items():
        for text in texts:
            knobs = dict(zero)
            knobs[key] = text
            if rpn is not None:
                knobs[RANKS_PER_NODE] = str(rpn)
            out.append((key, knobs))
    return out


def value_ns(sweep, text):
    """A swept value in ns (ns per byte for G_inter)."""
    return units.parse(SWEEPS[sweep], text)


def run_flags(knobs):
    """`loggp run` flags for a plan row's knobs (none outside a topology sweep)."""
    flags = []
    for key in EXTRA:
        if key in knobs:
            flags += [FLAGS[key], str(knobs[key])]
    return flags


# What `loggp run` would take from the caller's environment; a study sets the
# topology through flags only.
VARIABLES = ("LOGGP_TOPOLOGY", "LOGGP_RANKS_PER_NODE", "LOGGP_L_INTER", "LOGGP_G_INTER")


def study_environment(environ):
    return {k: v for k, v in environ.items() if k not in VARIABLES}
