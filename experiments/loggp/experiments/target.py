"""Emulating a target network: each knob set to target - host, per parameter.

A knob only adds delay, so a target faster than this host in some parameter cannot be
reached there: it is refused, naming the parameter and both values, unless the caller
clips (runs that parameter at the host's own value and says how far from the target
that leaves it). The knobs hold one o_s, o_r, g, L and G for every message size, so a
target's small-message regime gives o, g and L, its bulk regime G, and anything else
(other regimes, another eager limit) is named as what cannot be emulated. Docs:
docs/targets.md."""
import re
import sys
from dataclasses import dataclass, field

from loggp.knobs.command import Command, UsageError

from . import probe
from . import signature as sig_mod
from .signature import PARAMS, SignatureError, knob_text, show

# The `loggp run` flag of each parameter's knob.
RUN_FLAGS = {"o_s": "os", "o_r": "or", "g": "g", "G": "G", "L": "L"}
PREFIX = "loggp run: "
# Below half a picosecond a difference is no difference: the knobs' own resolution.
RESOLUTION_NS = 5e-4


class TargetError(ValueError):
    """A target that cannot be emulated here as asked; the message says why in one line."""


@dataclass
class Row:
    param: str
    target: float | None  # ns (ns/B for G); None: the target does not give it
    host: float
    delta: float  # the knob to set (0 when kept, equal, clipped or refused)
    status: str  # set, equal, kept, clipped, refused
    how: str = ""  # how the target's value was obtained, when not given directly


@dataclass
class Plan:
    target: sig_mod.Signature
    host: sig_mod.Signature
    rows: list
    cannot: list = field(default_factory=list)

    def knobs(self):
        """{param: delta} of the knobs this plan sets (nonzero only)."""
        return {r.param: r.delta for r in self.rows if r.status == "set"}

    def refused(self):
        return [r for r in self.rows if r.status == "refused"]

    def clipped(self):
        return [r for r in self.rows if r.status == "clipped"]

    def run_args(self):
        """[(flag, value)] for `loggp run`: every knob explicit, so a knob file cannot add to it."""
        return [(RUN_FLAGS[r.param], knob_text(r.param, r.delta)) for r in self.rows]


def target_values(target, host):
    """{param: (value or None, how)}: o_s, o_r, g and L from the target's small-message
    regime, G from its bulk regime; an L the source gives only as T0 = o_s + L + o_r is
    T0 minus the o's (the target's, else the host's, which then stay as they are)."""
    small, bulk, own = target.small, target.bulk, host.small
    values = {p: (small.get(p), "") for p in ("o_s", "o_r", "g", "L")}
    values["G"] = (bulk.get("G"), "")
    if values["L"][0] is None and small.get("T0") is not None:
        o_s = small.get("o_s") if small.get("o_s") is not None else own.get("o_s")
        o_r = small.get("o_r") if small.get("o_r") is not None else own.get("o_r")
        values["L"] = (small.get("T0") - o_s - o_r,
                       f"T0 {show('L', small.get('T0'))} - o_s {show('o_s', o_s)} - o_r {show('o_r', o_r)}")
    return values


def compute(target, host, clip=False):
    """The plan for emulating target on a host whose own signature is host."""
    own = host.small
    rows = []
    for param, (value, how) in target_values(target, host).items():
        mine = own.get(param)
        if value is None:
            rows.append(Row(param, None, mine, 0.0, "kept"))
            continue
        delta = round((value - mine) * 1000) / 1000  # the knobs keep whole picoseconds
        if abs(delta) < RESOLUTION_NS:
            rows.append(Row(param, value, mine, 0.0, "equal", how))
        elif delta > 0:
            rows.append(Row(param, value, mine, delta, "set", how))
        else:
            rows.append(Row(param, value, mine, 0.0, "clipped" if clip else "refused", how))
    return Plan(target, host, rows, cannot(target, host))


def cannot(target, host):
    """What of the target no knob can reach, one line each."""
    lines = []
    small, bulk = target.small, target.bulk
    for regime in target.regimes:
        if regime is small or (regime is bulk and set(regime.values) <= {"G"}):
            continue
        other = ", ".join(f"{f} {show(f, v)}" for f, v in regime.values.items() if regime is not bulk or f != "G")
        if other:
            lines.append(f"regime {regime.covers()} ({other}): the knobs hold one o, g and L for every size; "
                         f"those of {small.covers()} apply")
    if target.eager_limit is not None and target.eager_limit != host.eager_limit:
        own = f"{host.eager_limit} B" if host.eager_limit is not None else "not measured"
        lines.append(f"eager limit {target.eager_limit} B (this host's: {own}): no knob moves the protocol switch; "
                     "it stays the host's MPI's and provider's")
    return lines


def refusal(plan, flag="--target"):
    """The one line refusing a target faster than the host, or None."""
    refused = plan.refused()
    if not refused:
        return None
    parts = [f"{r.param} (target {show(r.param, r.target)}{f' = {r.how}' if r.how else ''}, this host "
             f"{show(r.param, r.host)})" for r in refused]
    return (f"{flag} {plan.target.name}: faster than this host in {', '.join(parts)}: a knob only adds delay; "
            "--clip runs those at the host's own values")


def summary_lines(plan):
    """What a run under the plan emulates, for stderr: the knobs, what is kept, clipped, and cannot be."""
    t = plan.target
    lines = [f"target {t.name}: {t.title}", f"  source: {' '.join(t.source.split())}"]
    for r in plan.rows:
        if r.status == "kept":
            lines.append(f"  {r.param}: not given by the target: kept at this host's {show(r.param, r.host)}")
            continue
        via = f" ({r.how})" if r.how else ""
        if r.status == "clipped":
            lines.append(f"  {r.param}: target {show(r.param, r.target)}{via} is faster than this host's "
                         f"{show(r.param, r.host)}: run at the host's, {reached(r)}")
        elif r.status == "refused":
            lines.append(f"  {r.param}: target {show(r.param, r.target)}{via}, this host {show(r.param, r.host)}: "
                         "refused (faster)")
        else:
            lines.append(f"  {r.param}: target {show(r.param, r.target)}{via}, this host {show(r.param, r.host)}: "
                         f"knob +{show(r.param, r.delta)}")
    for line in plan.cannot:
        lines.append(f"  cannot: {line}")
    unverified = sorted({f for _, f in t.unverified()})
    if unverified:
        lines.append(f"  unverified in the catalogue: {', '.join(unverified)} (see `loggp targets show {t.name}`)")
    given = [r for r in plan.rows if r.status != "kept"]
    if plan.clipped():
        met = len(given) - len(plan.clipped())
        lines.append(f"  reached {met} of the {len(given)} parameters the target gives; clipped: "
                     + ", ".join(r.param for r in plan.clipped()))
    return lines


def reached(row):
    """How far a clipped parameter is from the target, in words."""
    if row.target <= 0:
        return f"{show(row.param, row.host)} above a target of 0"
    return f"{row.host / row.target:.2f}x the target ({show(row.param, row.host - row.target)} above it)"


KNOB_VALUE = re.compile(r"^\s*([0-9.]+)")


def check_host(host):
    """A host signature must be the machine's own: measured without knobs."""
    if host.knobs is None:
        raise TargetError(f"{host.path}: the probe recorded no knobs in force (they changed while it ran); "
                          "measure the host again")
    moved = {k: v for k, v in host.knobs.items()
             if not (KNOB_VALUE.match(str(v)) and float(KNOB_VALUE.match(str(v)).group(1)) == 0)}
    if moved:
        said = ", ".join(f"{k}={v}" for k, v in moved.items())
        raise TargetError(f"{host.path}: measured with knobs {said}; a host signature is measured without any")


def host_signature(path=None, run_args=(), measure=None, out=sys.stderr):
    """The host's own signature: a cached `loggp probe --json` file (its age said), or
    measured now with every knob at 0 under `loggp run` (measure(run_args) -> probe JSON)."""
    if path:
        host = sig_mod.load_file(path)
        if host.measured_at is None:
            raise TargetError(f"--host-signature {path}: not `loggp probe --json` output")
        check_host(host)
        print(f"{PREFIX}host signature: {path}, measured {sig_mod.age_text(host.measured_at)}", file=out)
        return host
    print(f"{PREFIX}host signature: measuring it now (loggp probe, zero knobs; --host-signature FILE reuses a "
          "`loggp probe --json` file)", file=out)
    if measure is None:
        zero = {k: 0.0 for k in PARAMS}
        try:
            data = probe.run_probe([], knobs=zero, run_args=list(run_args))
        except probe.ProbeError as err:
            raise TargetError(f"this host's signature could not be measured: {err}") from None
    else:
        data = measure(list(run_args))
    host = sig_mod.from_probe(data, None)
    return host


def run_knobs(args, measure=None, out=sys.stderr):
    """`loggp run --target`: the knob flags for the run, after saying what they emulate.
    TargetError for a target that cannot be emulated as asked."""
    across = (getattr(args, "hostfile", None) or getattr(args, "testbed", None) is not None
              or getattr(args, "launcher", "mpiexec") != "mpiexec")
    if across and not args.host_signature:
        raise TargetError(f"--target {args.target}: the ranks run across hosts, so this host's own signature is not "
                          "theirs; give --host-signature FILE, `loggp probe --json FILE` measured between two of "
                          "the nodes")
    try:
        target = sig_mod.resolve(args.target)
        run_args = []
        if getattr(args, "provider", None):
            run_args += ["--provider", args.provider]
        if getattr(args, "engine", None) and args.engine != "auto":
            run_args += ["--engine", args.engine]
        host = host_signature(args.host_signature, run_args, measure, out)
    except SignatureError as err:
        raise TargetError(f"--target: {err}") from None
    plan = compute(target, host, clip=args.clip)
    said = refusal(plan)
    if said:
        raise TargetError(said)
    if not getattr(args, "quiet", False):
        for line in summary_lines(plan):
            print(f"{PREFIX}{line}", file=out)
    return plan.run_args()


def table_lines(catalogue):
    """`loggp targets`: one line per target with its small-message figures and G."""
    head = f"{'name':14s} {'o_s':>9s} {'o_r':>9s} {'g':>9s} {'L':>9s} {'T0':>9s} {'G':>12s}  source"
    lines = [head]
    for name, s in catalogue.items():
        small, bulk = s.small, s.bulk
        cells = [show(f, small.get(f)) for f in ("o_s", "o_r", "g", "L", "T0")]
        marks = "*" if s.unverified() else ""
        source = " ".join(s.source.split())
        lines.append(f"{name + marks:14s} " + " ".join(f"{c:>9s}" for c in cells)
                     + f" {show('G', bulk.get('G')):>12s}  {source[:60]}{'...' if len(source) > 60 else ''}")
    lines.append("* some figures unverified against their source: `loggp targets show NAME` says which; "
                 "'-': not given by the source (kept at the host's when emulated)")
    return lines


class TargetsCommand(Command):
    name = "targets"
    description = ("List the catalogue of target networks (published LogGP signatures) that `loggp run --target`, "
                   "`loggp calibrate --target` and `loggp predict --target` take, or show one in full.")
    example = "loggp targets show now"
    errors = ((SignatureError, 2),)

    def configure(self, p):
        p.add_argument("words", nargs="*", metavar="show NAME|FILE",
                       help="`show NAME` (or a file) prints one target in full; nothing lists the catalogue")

    def check(self, args):
        if args.words and (args.words[0] != "show" or len(args.words) != 2):
            raise UsageError(f"expected nothing or `show NAME`, got '{' '.join(args.words)}'")

    def run(self, args):
        if args.words:
            for line in sig_mod.describe(sig_mod.resolve(args.words[1])):
                print(line)
            return 0
        for line in table_lines(sig_mod.catalogue()):
            print(line)
        return 0
