"""Study files: which benchmarks to run, on how many processes, under which
knob settings, how often, and with which launcher (format in
npb-harness/README.md). Loading validates everything before any run starts;
errors name the file, the line where possible, and the bad key or value."""
import hashlib
import json
import itertools
import os
import random
import re
import shlex
import tomllib
from dataclasses import dataclass, field

from loggp.experiments import precision as precision_rules
from loggp.knobs import grammar
from loggp.knobs.programs import prefix_path, which

from . import jitter_sweep, target_sweep, topology_sweep, units

KERNELS = ("ep", "is", "cg", "mg", "ft", "lu")
# The classes each of our kernels accepts (its npb_begin call in
# npb-harness/kernels/<kernel>/<kernel>.c; a test keeps the two in step).
KERNEL_CLASSES = {"ep": "SWABC", "cg": "SWABC", "is": "SWAB", "mg": "SWAB", "ft": "SWAB", "lu": "SWAB"}
# kernels whose decomposition, as NPB's, needs a power-of-two process count (each kernel refuses others)
POWER_OF_TWO_KERNELS = ("cg", "ft", "is", "mg")
CLASSES = ("S", "W", "A", "B", "C", "D", "E")
LAUNCHER_KINDS = ("mpiexec", "srun", "template")
ORDERS = ("shuffle", "interleave")

TOP_KEYS = {"name", "repetitions", "timeout", "np", "class", "order", "seed", "grid",
            "launcher", "sweep", "benchmark", "results", "trace", "jitter", "topology", "scope", "outside",
            "precision", "budget", "targets"}
# A slope's 95 % interval within 5 % of itself; rounds added for it for at most this long
DEFAULT_PRECISION, DEFAULT_BUDGET = "5%", "5min"
ZERO_SWEEP, ARMED_SWEEP = "baseline", "armed"
SCOPES, OUTSIDES = grammar.SCOPES, grammar.OUTSIDES
LAUNCHER_KEYS = {"kind", "template", "hostfile", "parallel"}
BENCH_KEYS = {"name", "kernel", "npb_binary", "npb_dir", "command", "runtime_regex",
              "success_regex", "class", "np", "optional", "timeout"}


class StudyError(Exception):
    def __init__(self, path, message, line=None):
        self.path, self.message, self.line = path, message, line
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Benchmark:
    name: str
    kind: str                  # "kernel" | "npb" | "command"
    argv_template: tuple       # program and arguments; "{class}" is substituted
    klass: str | None
    nps: tuple
    timeout_s: float
    runtime_regex: str | None = None
    success_regex: str | None = None
    optional: bool = False

    def argv(self, klass):
        return [a.replace("{class}", klass or "") for a in self.argv_template]


@dataclass(frozen=True)
class Setting:
    """One point of a sweep: a benchmark on np ranks with all five knobs set."""
    benchmark: str
    np: int
    klass: str | None
    sweep: str               # "baseline", a SWEEP_KNOBS name, or "grid"
    knobs: tuple             # ((knob, text), ...) for all five knobs, in KNOBS order

    def knob_ns(self):
        return {k: units.parse(k, t) for k, t in self.knobs}

    def key(self):
        knobs = ",".join(f"{k}={t}" for k, t in self.knobs)
        return f"{self.benchmark}|np={self.np}|class={self.klass}|{self.sweep}|{knobs}"


@dataclass
class Study:
    path: str
    text: str
    name: str
    repetitions: int
    seed: int
    order: str
    grid: bool
    launcher: str               # value for `loggp run --launcher`
    hostfile: str | None
    benchmarks: list
    sweep: dict                 # knob -> [(text, ns), ...] without zero
    results: str | None = None  # default results folder, relative to the file
    skipped: list = field(default_factory=list)
    trace: bool = False         # baseline runs record a trace, for `loggp predict` in the report
    scope: str = "all"          # knobs everywhere, or inside the programs' kernel regions only
    outside: str = "zero"       # with scope kernel, what the knobs leave outside: zero or armed
    jitter: tuple | None = None  # (L, (spreads...)): jitter_sweep.py
    topology: tuple | None = None  # (ranks per node, {sweep: values}): topology_sweep.py
    targets: tuple | None = None  # target networks to emulate, names or files: target_sweep.py
    parallel: int = 1           # runs at once, each a Slurm job step on nodes of its own
    precision: str = DEFAULT_PRECISION  # how narrow a slope's interval must get ("5%")
    budget: str = DEFAULT_BUDGET  # how long rounds added past `repetitions` may take

    def precision_goal(self):
        return precision_rules.parse_precision(self.precision)

    def budget_s(self):
        return precision_rules.parse_budget(self.budget)

    def digest(self):
        return hashlib.sha256(self.text.encode()).hexdigest()

    def plan_digest(self):
        """A digest of what the file asks for (the runs and how each is made), not of
        its bytes: a comment or a layout change leaves it alone."""
        benchmarks = [[b.name, b.kind, list(b.argv_template), b.klass, list(b.nps), b.timeout_s,
                       b.runtime_regex, b.success_regex] for b in self.benchmarks]
        runs = [[r, pos, s.key(), s.benchmark, s.np, s.klass, s.sweep, [list(k) for k in s.knobs]]
                for r, pos, s in self.plan()]
        what = [self.name, self.launcher, self.hostfile, benchmarks, runs] + (["trace"] if self.trace else [])
        what += [["scope", self.scope]] if self.scope != "all" else []
        what += [["outside", self.outside]] if self.outside != "zero" else []
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def settings(self):
        """Baseline plus one knob at a time (or the full grid), per benchmark and np.
        With knobs to sweep, an armed baseline too (every knob at its smallest step):
        each knob setting keeps the other knobs at that step, so a setting minus the
        armed run of its round is the knob's own effect, the layer's cost cancelled;
        slowdowns stay against the zero-knob baseline, the unperturbed program."""
        zero = {k: "0" + ("ns/B" if units.is_per_byte(k) else "ns") for k in units.KNOBS}
        configs = [(ZERO_SWEEP, dict(zero))]
        armed = dict(units.ARMED) if self.sweep else dict(zero)
        if self.sweep:
            configs.append((ARMED_SWEEP, dict(armed)))
        if self.grid:
            axes = [[(knob, t) for t, _ in vals] + [(knob, None)]
                    for knob, vals in self.sweep.items()]
            for combo in itertools.product(*axes):
                chosen = [(k, t) for k, t in combo if t is not None]
                if not chosen:
                    continue
                knobs = dict(armed)
                for k, t in chosen:
                    for real in _expand(k):
                        knobs[real] = t
                configs.append(("grid" if len(chosen) > 1 else chosen[0][0], knobs))
        else:
            for knob, vals in self.sweep.items():
                for t, _ in vals:
                    knobs = dict(armed)
                    for real in _expand(knob):
                        knobs[real] = t
                    configs.append((knob, knobs))
        configs += jitter_sweep.configs(self.jitter, zero)
        configs += topology_sweep.configs(self.topology, zero)
        configs += target_sweep.configs(self.targets, zero)
        out = []
        for b in self.benchmarks:
            for np_ in b.nps:
                for sweep, knobs in configs:
                    extra = tuple((k, knobs[k]) for k in (jitter_sweep.SWEEP,) + topology_sweep.EXTRA
                                  + (target_sweep.KEY,) if k in knobs)
                    out.append(Setting(b.name, np_, b.klass, sweep,
                                       tuple((k, knobs[k]) for k in units.KNOBS) + extra))
        return out

    def plan(self):
        """[(round, position, Setting)]: every setting once per round, baselines
        included (`repetitions` is the least number of rounds; more are added where
        a slope is not yet precise, see precision_rounds.py)."""
        plan = []
        for r in range(self.repetitions):
            plan.extend((r, i, s) for i, s in enumerate(self.round_order(r, self.settings())))
        return plan

    def round_order(self, r, settings):
        """The order of one round's runs. A benchmark's runs (at one np) stay together, so
        each setting is paired with the baselines of its round minutes apart at most;
        inside that group the baselines sit in the middle of the settings, whose order
        changes from round to round, as does the groups' order, so that drift of the
        machine spreads over all settings instead of bending a curve. Deterministic
        from the file and the round, so a resumed study has the same plan."""
        groups = {}
        for s in settings:
            groups.setdefault((s.benchmark, s.np), []).append(s)
        order = list(groups)
        rounds = max(1, self.repetitions)
        if self.order == "shuffle":
            random.Random(f"{self.seed}:{r}").shuffle(order)
        else:
            shift = (r * len(order)) // rounds
            order = order[shift:] + order[:shift]
        out = []
        for n, key in enumerate(order):
            members = groups[key]
            bases = [s for s in members if s.sweep in (ARMED_SWEEP, ZERO_SWEEP)]
            rest = [s for s in members if s.sweep not in (ARMED_SWEEP, ZERO_SWEEP)]
            if self.order == "shuffle":
                random.Random(f"{self.seed}:{r}:{n}").shuffle(rest)
                random.Random(f"{self.seed}:{r}:{n}:base").shuffle(bases)
            else:
                shift = (r * len(rest)) // rounds
                rest = rest[shift:] + rest[:shift]
                if r % 2:
                    rest.reverse()
                    bases.reverse()
            middle = len(rest) // 2
            out.extend(rest[:middle] + bases + rest[middle:])
        return out

    def benchmark(self, name):
        return next(b for b in self.benchmarks if b.name == name)


def _expand(knob):
    return ("o_s", "o_r") if knob == "o" else (knob,)


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")


def line_of(text, key, table=None, index=0):
    """Line (1-based) where `key = ...` appears in [table] (or the index-th
    [[table]]); top level when table is None. None when not found."""
    current, seen = None, {}
    for number, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            current = m.group(2).strip()
            seen[current] = seen.get(current, -1) + 1
            continue
        if current == table and (table is None or seen.get(table) == index):
            if re.match(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=", line):
                return number
    return None


def _table_line(text, table, index=0):
    count = -1
    for number, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m and m.group(2).strip() == table:
            count += 1
            if count == index:
                return number
    return None


def load(path, skip_missing=True):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise StudyError(path, f"cannot read study file: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise StudyError(path, "study file is not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        lineno = getattr(e, "lineno", None)
        if lineno is None:
            m = re.search(r"line (\d+)", str(e))
            lineno = int(m.group(1)) if m else None
        raise StudyError(path, f"TOML syntax error: {e}", lineno) from None
    return from_dict(path, text, data, skip_missing)


def from_dict(path, text, data, skip_missing=True):
    base = os.path.dirname(os.path.abspath(path))

    def fail(message, key=None, table=None, index=0):
        line = line_of(text, key, table, index) if key else None
        if line is None and table:
            line = _table_line(text, table, index)
        raise StudyError(path, message, line)

    for key in data:
        if key not in TOP_KEYS:
            fail(f"unknown key '{key}' (expected one of: {', '.join(sorted(TOP_KEYS))})", key)

    def get(d, key, typ, default, table=None, index=0, typename=None):
        value = d.get(key, default)
        # bool is an int in Python; keep them apart.
        if value is not None and (not isinstance(value, typ) or
                                  (typ is int and isinstance(value, bool))):
            fail(f"'{key}' must be {typename or typ.__name__}, got {value!r}", key, table, index)
        return value

    name = get(data, "name", str, os.path.splitext(os.path.basename(path))[0])
    reps = get(data, "repetitions", int, 3)
    if reps < 1 or reps > 1000:
        fail(f"'repetitions' must be between 1 and 1000, got {reps}", "repetitions")
    seed = get(data, "seed", int, 1)
    order = get(data, "order", str, "shuffle")
    if order not in ORDERS:
        fail(f"'order' must be one of {', '.join(ORDERS)}, got {order!r}", "order")
    grid = get(data, "grid", bool, False, typename="true or false")
    trace = get(data, "trace", bool, False, typename="true or false")
    targets = target_sweep.parse(data.get("targets"), lambda m: fail(m, "targets"), base)
    scope = get(data, "scope", str, "all")
    if scope not in SCOPES:
        fail(f"'scope' must be all or kernel (the knobs inside the programs' kernel regions only), got {scope!r}",
             "scope")
    outside = get(data, "outside", str, "zero")
    try:
        grammar.check_outside(outside, scope)
    except grammar.GrammarError as e:
        fail(f"'outside': {e}", "outside")
    default_timeout = _timeout(data.get("timeout", "600s"), lambda m: fail(m, "timeout"))
    default_np = _nps(data.get("np", [2]), lambda m: fail(m, "np"))
    default_class = get(data, "class", str, None)
    if default_class is not None and default_class not in CLASSES:
        fail(f"'class' must be one of {', '.join(CLASSES)}, got {default_class!r}", "class")
    results = get(data, "results", str, None)
    precision_text = get(data, "precision", str, DEFAULT_PRECISION)
    try:
        precision_rules.parse_precision(precision_text)
    except ValueError as e:
        fail(f"'precision': {e}", "precision")
    budget_text = get(data, "budget", str, DEFAULT_BUDGET, typename="a duration such as \"5min\"")
    try:
        precision_rules.parse_budget(budget_text)
    except ValueError as e:
        fail(f"'budget': {e}", "budget")

    launcher_table = get(data, "launcher", dict, {}, typename="a table [launcher]")
    launcher, hostfile, parallel = _launcher(launcher_table, base, fail, get)

    sweep = _sweep(get(data, "sweep", dict, {}, typename="a table [sweep]"), fail)
    jitter = jitter_sweep.parse_table(data.get("jitter"), lambda m, key: fail(m, key, "jitter"))
    if "o" in sweep and ({"o_s", "o_r"} & set(sweep)) and grid:
        fail("[sweep] with grid = true, sweep either 'o' or 'o_s'/'o_r', not both", "o", "sweep")

    bench_list = data.get("benchmark")
    if not isinstance(bench_list, list) or not bench_list:
        raise StudyError(path, "no benchmarks: add at least one [[benchmark]] table")
    benchmarks, names, skipped = [], set(), []
    for i, b in enumerate(bench_list):
        bench, kind_key, program = _benchmark(b, i, fail, get, base, (default_class, default_timeout, default_np),
                                              names)
        missing = _missing_program(program)
        if missing:
            if bench.optional and skip_missing:
                skipped.append(f"{bench.name}: {missing}")
                continue
            if skip_missing:
                fail(f"benchmark {bench.name!r}: {missing}", kind_key, "benchmark", i)
        benchmarks.append(bench)
    if not benchmarks:
        raise StudyError(path, "every benchmark is optional and missing: "
                         + "; ".join(skipped))
    topology = topology_sweep.parse_table(data.get("topology"), lambda m, key: fail(m, key, "topology"),
                                          [n for b in benchmarks for n in b.nps],
                                          one_host=launcher == "mpiexec" and hostfile is None)
    return Study(path=os.path.abspath(path), text=text, name=name, repetitions=reps,
                 seed=seed, order=order, grid=grid, launcher=launcher, hostfile=hostfile,
                 benchmarks=benchmarks, sweep=sweep, results=results, skipped=skipped, trace=trace, jitter=jitter,
                 topology=topology, scope=scope, outside=outside, targets=targets,
                 parallel=parallel, precision=precision_text, budget=budget_text)



def _benchmark(b, i, fail, get, base, defaults, names):
    """The i-th [[benchmark]] table, checked: the Benchmark, the key its kind is given by, and
    the program that must exist. defaults: the top level's (class, timeout, np); names: the
    names taken so far, to which this one is added."""
    default_class, default_timeout, default_np = defaults
    if not isinstance(b, dict):
        fail("'benchmark' must be an array of tables [[benchmark]]", "benchmark")
    for key in b:
        if key not in BENCH_KEYS:
            fail(f"unknown key '{key}' in [[benchmark]] #{i + 1} "
                 f"(expected: {', '.join(sorted(BENCH_KEYS))})", key, "benchmark", i)

    def bget(key, typ, default, typename=None):
        return get(b, key, typ, default, "benchmark", i, typename)

    kinds = [k for k in ("kernel", "npb_binary", "command") if k in b]
    if len(kinds) != 1:
        fail(f"[[benchmark]] #{i + 1} needs exactly one of 'kernel', 'npb_binary' or "
             f"'command' (has: {', '.join(kinds) or 'none'})", kinds[1] if kinds[1:] else None,
             "benchmark", i)
    klass = bget("class", str, default_class)
    if klass is not None and klass not in CLASSES:
        fail(f"'class' must be one of {', '.join(CLASSES)}, got {klass!r}", "class", "benchmark", i)
    optional = bget("optional", bool, False, "true or false")
    timeout = _timeout(b.get("timeout", None), lambda m: fail(m, "timeout", "benchmark", i),
                       default_timeout)
    nps = _nps(b["np"], lambda m: fail(m, "np", "benchmark", i)) if "np" in b else default_np
    runtime_regex = success_regex = None
    program_path = None
    if kinds[0] == "kernel":
        argv, default_name, kind_name = _kernel_program(b, i, bget, fail, klass, nps)
    elif kinds[0] == "npb_binary":
        argv, default_name, kind_name, program_path = _npb_program(i, bget, fail, klass, base)
    else:
        argv, default_name, kind_name, runtime_regex, success_regex = _command_program(b, i, bget, fail, base)
    bname = bget("name", str, default_name)
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+", bname):
        fail(f"benchmark name {bname!r} may only contain letters, digits and _.+-",
             "name", "benchmark", i)
    if bname in names:
        fail(f"two benchmarks are named {bname!r}; give one a different 'name'",
             "name" if "name" in b else kinds[0], "benchmark", i)
    names.add(bname)
    bench = Benchmark(bname, kind_name, argv, klass, nps, timeout,
                      runtime_regex, success_regex, optional)
    return bench, kinds[0], argv[0] if program_path is None else program_path


def _launcher(launcher_table, base, fail, get):
    """The [launcher] table, checked: (launcher, hostfile, parallel)."""
    for key in launcher_table:
        if key not in LAUNCHER_KEYS:
            fail(f"unknown key '{key}' in [launcher] (expected: {', '.join(sorted(LAUNCHER_KEYS))})",
                 key, "launcher")
    kind = get(launcher_table, "kind", str, "mpiexec", "launcher")
    if kind not in LAUNCHER_KINDS:
        fail(f"[launcher] kind must be one of {', '.join(LAUNCHER_KINDS)}, got {kind!r}",
             "kind", "launcher")
    template = get(launcher_table, "template", str, None, "launcher")
    if kind == "template":
        if not template:
            fail("[launcher] kind = \"template\" needs a 'template' string", "kind", "launcher")
        if "{program}" not in template:
            fail(f"[launcher] template {template!r} has no {{program}} placeholder",
                 "template", "launcher")
        bad = set(re.findall(r"\{([^}]*)\}", template)) - {"np", "program", "hostfile"}
        if bad:
            fail(f"[launcher] template has unknown placeholder(s) "
                 f"{', '.join('{' + b + '}' for b in sorted(bad))} (allowed: {{np}}, {{program}}, {{hostfile}})",
                 "template", "launcher")
        launcher = template
    else:
        if template is not None:
            fail(f"[launcher] 'template' is only used with kind = \"template\", not {kind!r}",
                 "template", "launcher")
        launcher = kind
    hostfile = get(launcher_table, "hostfile", str, None, "launcher")
    if hostfile is not None:
        hostfile = os.path.join(base, os.path.expanduser(hostfile))
        if not os.path.isfile(hostfile):
            fail(f"[launcher] hostfile {hostfile!r} does not exist", "hostfile", "launcher")
    parallel = get(launcher_table, "parallel", int, 1, "launcher")
    if parallel < 1 or parallel > 4096:
        fail(f"[launcher] parallel must be a whole number of runs at once, 1 or more, got {parallel}",
             "parallel", "launcher")
    if parallel > 1 and kind != "srun":
        fail(f"[launcher] parallel = {parallel} needs kind = \"srun\" (each run is a job step on nodes of "
             f"its own), not {kind!r}", "parallel", "launcher")
    if kind == "template" and "{hostfile}" in template and hostfile is None:
        fail("[launcher] template uses {hostfile} but no 'hostfile' is given", "template", "launcher")
    return launcher, hostfile, parallel


def _sweep(sweep_table, fail):
    """The [sweep] table: each knob's nonzero values, parsed, in increasing order."""
    sweep = {}
    for knob, values in sweep_table.items():
        if knob not in units.SWEEP_KNOBS:
            fail(f"unknown knob '{knob}' in [sweep] (expected: {', '.join(units.SWEEP_KNOBS)})",
                 knob, "sweep")
        if not isinstance(values, list) or not values:
            example = '["0.5ns/B", "2ns/B"]' if knob == "G" else '["1us", "10us"]'
            fail(f"[sweep] {knob} must be a non-empty list of values such as {example}",
                 knob, "sweep")
        parsed, seen = [], set()
        for v in values:
            try:
                ns = units.parse(knob, v)
            except units.UnitError as e:
                fail(f"[sweep] {e}", knob, "sweep")
            if ns == 0:
                continue  # the baseline is always run
            if ns in seen:
                fail(f"[sweep] {knob}: value {v!r} is listed twice", knob, "sweep")
            seen.add(ns)
            parsed.append((v.strip(), ns))
        parsed.sort(key=lambda p: p[1])
        if parsed:
            sweep[knob] = parsed
    return sweep


def _kernel_program(b, i, bget, fail, klass, nps):
    """One of our kernels: (argv, default name, kind)."""
    kernel = bget("kernel", str, None)
    if kernel not in KERNELS:
        fail(f"unknown kernel {kernel!r} (ours are: {', '.join(KERNELS)})",
             "kernel", "benchmark", i)
    if klass is None:
        fail(f"kernel {kernel!r} needs a 'class' (here or at the top level)",
             "kernel", "benchmark", i)
    if klass not in KERNEL_CLASSES[kernel]:
        fail(f"kernel {kernel!r} has no class {klass!r} (its classes: "
             f"{', '.join(KERNEL_CLASSES[kernel])})", "class" if "class" in b else "kernel",
             "benchmark", i)
    odd = [n for n in nps if kernel in POWER_OF_TWO_KERNELS and n & (n - 1)]
    if odd:
        fail(f"kernel {kernel!r} runs on a power-of-two number of processes, not np = {odd[0]}",
             "np" if "np" in b else "kernel", "benchmark", i)
    argv = (f"loggp-npb-{kernel}", "{class}")
    default_name, kind_name = kernel, "kernel"
    return argv, default_name, kind_name


def _npb_program(i, bget, fail, klass, base):
    """A real NPB binary: (argv, default name, kind, its path)."""
    binary = bget("npb_binary", str, None)
    if not re.fullmatch(r"[a-z]{2,3}", binary or ""):
        fail(f"'npb_binary' must be an NPB benchmark name such as \"cg\", got {binary!r}",
             "npb_binary", "benchmark", i)
    if klass is None:
        fail(f"NPB binary {binary!r} needs a 'class'", "npb_binary", "benchmark", i)
    npb_dir = bget("npb_dir", str, None)
    if not npb_dir:
        fail("'npb_binary' needs 'npb_dir', the folder with cg.A.x and friends",
             "npb_binary", "benchmark", i)
    npb_dir = os.path.join(base, os.path.expanduser(npb_dir))
    program_path = os.path.join(npb_dir, f"{binary}.{klass}.x")
    argv = (program_path,)
    default_name, kind_name = f"{binary}.{klass}", "npb"
    return argv, default_name, kind_name, program_path


def _command_program(b, i, bget, fail, base):
    """Any command: (argv, default name, kind, runtime regex, success regex)."""
    command = b["command"]
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as e:
            fail(f"'command' {command!r} cannot be split: {e}", "command", "benchmark", i)
    if (not isinstance(command, list) or not command
            or not all(isinstance(c, str) and c for c in command)):
        fail(f"'command' must be a non-empty list of strings, got {b['command']!r}",
             "command", "benchmark", i)
    if "/" in command[0] and not os.path.isabs(command[0]):
        command = [os.path.join(base, command[0])] + command[1:]
    runtime_regex = bget("runtime_regex", str, None)
    if runtime_regex is None:
        fail("a 'command' benchmark needs 'runtime_regex' (its first group is the "
             "runtime in seconds)", "command", "benchmark", i)
    success_regex = bget("success_regex", str, None)
    for key, rx in (("runtime_regex", runtime_regex), ("success_regex", success_regex)):
        if rx is not None:
            try:
                re.compile(rx)
            except re.error as e:
                fail(f"'{key}' {rx!r} is not a valid regular expression: {e}",
                     key, "benchmark", i)
    argv = tuple(command)
    default_name, kind_name = os.path.basename(command[0]), "command"
    return argv, default_name, kind_name, runtime_regex, success_regex


def _missing_program(program):
    if "/" in program:
        if not os.path.isfile(program):
            return f"program {program!r} does not exist"
        if not os.access(program, os.X_OK):
            return f"program {program!r} is not executable"
        return None
    if which(program) is None:
        return f"program {program!r} is neither in {prefix_path('bin')} nor on PATH (build and install it first)"
    return None


def _timeout(value, fail, default=None):
    """A duration in the one grammar (loggp.knobs.grammar): "300s", "10min"; never bare."""
    if value is None:
        return default
    try:
        seconds = grammar.parse_duration(value)
    except grammar.GrammarError as err:
        fail(f"'timeout' must be a duration such as \"300s\" or \"10min\": {err}")
    if not 0 < seconds <= 7 * 86400:
        fail(f"'timeout' must be between 0 and 7 days, got {value!r}")
    return seconds


def _nps(value, fail):
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (not isinstance(value, list) or not value or
            not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        fail(f"'np' must be a process count or a list of them, got {value!r}")
    for v in value:
        if v < 1 or v > 1_000_000:
            fail(f"'np' value {v} is not a valid process count")
    if len(set(value)) != len(value):
        fail(f"'np' lists a process count twice: {value!r}")
    return tuple(value)
