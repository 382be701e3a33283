"""`loggp run`'s per-pair flags (--topology, --ranks-per-node, --L-inter,
--G-inter): checked by loggp-knobs, the one parser of knob values and topology
files, and carried to the ranks in LOGGP_TOPOLOGY or the short form's variables
(libloggp.so reads them; docs/topology.md)."""
import json
import os
import sys
from pathlib import Path

from loggp.knobs import KnobError, knobs_program, parse

FLAGS = {"ranks_per_node": "LOGGP_RANKS_PER_NODE", "L_inter": "LOGGP_L_INTER", "G_inter": "LOGGP_G_INTER"}


def add_arguments(p):
    p.add_argument("--topology", metavar="FILE",
                   help="per-pair L and G from a topology file: ranks per node, switch and group, or a "
                        "rank-pair matrix, with an L and G per level (docs/topology.md; default: none)")
    p.add_argument("--ranks-per-node", type=int, metavar="N",
                   help="emulate nodes of N consecutive ranks for --L-inter and --G-inter "
                        "(default: ranks on one host share a node)")
    p.add_argument("--L-inter", metavar="T", dest="L_inter", once=True,
                   help="L between ranks on different nodes, e.g. 5us (--L stays the intra-node value; "
                        "default: none, the knob's L everywhere)")
    p.add_argument("--G-inter", metavar="T/B", dest="G_inter", once=True,
                   help="G between ranks on different nodes, e.g. 0.5ns/B (--G stays the intra-node value; "
                        "default: none, the knob's G everywhere)")


def describe(path, ranks=None):
    """The topology file as loggp-knobs reads it (JSON), or KnobError naming what is wrong."""
    args = ["topology", str(path)] + (["--ranks", str(ranks)] if ranks else [])
    return json.loads(knobs_program(*args))


def environment(args, ranks, error):
    """The variables for the flags given; error(message) raises the caller's usage error."""
    short = {flag: getattr(args, flag, None) for flag in FLAGS}
    given = {flag: value for flag, value in short.items() if value is not None}
    if args.topology and given:
        flag = next(iter(given)).replace("_", "-")
        raise error(f"--topology and --{flag} exclude each other: put the values in the file")
    if args.topology:
        path = Path(args.topology)
        try:
            describe(path, ranks)
        except KnobError as err:
            raise error(str(err)) from None
        return {"LOGGP_TOPOLOGY": str(path.resolve())}
    if not given:
        return {}
    if "ranks_per_node" in given and given["ranks_per_node"] < 1:
        raise error(f"--ranks-per-node {given['ranks_per_node']}: expected a whole number >= 1")
    if "ranks_per_node" in given and given["ranks_per_node"] >= ranks:
        # as a study refuses it (loggp.harness.topology_sweep)
        raise error(f"--ranks-per-node {given['ranks_per_node']} puts all {ranks} ranks on one node: no pair is "
                    f"inter-node (give fewer ranks per node than -n {ranks})")
    if set(given) == {"ranks_per_node"} and not any(os.environ.get(FLAGS[f]) for f in ("L_inter", "G_inter")):
        print(f"loggp run: warning: --ranks-per-node {given['ranks_per_node']} has no effect without --L-inter or "
              "--G-inter: ranks on other nodes get the same L and G", file=sys.stderr)
    for flag, knob in (("L_inter", "L"), ("G_inter", "G")):
        if flag in given:
            try:
                parse({knob: given[flag]})
            except KnobError as err:
                raise error(f"--{flag.replace('_', '-')} {given[flag]}: {str(err).split(': ', 1)[-1]}") from None
    return {FLAGS[flag]: str(value) for flag, value in given.items()}
