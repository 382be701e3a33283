"""Running loggp-patterns (np=2) for the bench commands: one run with the
flags of `loggp run`, its JSON lines read back; the machine's noise beside the
figures (host detours, load); and the interleaved order of runs."""
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from loggp.knobs.programs import MissingProgram, find_program

from . import run as runmod
from . import run_record, shm_regions

NP = 2
PROGRAM = "loggp-patterns"
# The same patterns built for each MPI (`--mpi`), and the provider each takes by default.
PROGRAMS = {"mpich": PROGRAM, "openmpi": "loggp-patterns-ompi"}
DEFAULT_PROVIDER = {"mpich": "shm", "openmpi": "tcp"}
# Default per-repetition time; counts follow from the expected ns per unit.
TARGET_NS = 25e6
LATE_WAIT_NS = 200000  # the late pattern's idle spell before each timed receive


def patterns_program(mpi="mpich"):
    return find_program(PROGRAMS[mpi])


def parse_lines(text, specs, reps, regions=(None,)):
    """{(pattern, bytes, region): [ns per repetition, in order]} from
    loggp-patterns' JSON lines (region None without --alternate); every spec
    must have all its repetitions in every region."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
            key = (rec["pattern"], int(rec["bytes"]), rec.get("region"))
            out.setdefault(key, []).append(float(rec["ns"]))
        except (ValueError, KeyError, TypeError) as err:
            raise RuntimeError(f"{PROGRAM}: unreadable line {line!r} ({err})") from None
    for pattern, size, _ in specs:
        for region in regions:
            got = len(out.get((pattern, size, region), []))
            if got != reps:
                where = {None: "", "outside": " outside the kernel region",
                         "kernel": " inside the kernel region"}[region]
                raise RuntimeError(f"{PROGRAM}: {pattern} at {size} B gave {got} repetitions{where}, expected {reps}")
    return out


def run_patterns(specs, knobs=(), preload=True, provider=None, reps=5, compute_ns=5000, timeout=600, mpi="mpich",
                 alternate=False):
    """One loggp-patterns run at np=2; its standard output. specs: (pattern,
    bytes, count) triples; knobs: `loggp run` knob flags. The user's knob file
    and knob variables never reach the run."""
    argv = ["-n", str(NP), "--quiet", "--engine", "libfabric"]
    if provider:
        argv += ["--provider", provider]
    program = [patterns_program(mpi), "--reps", str(reps), "--compute-ns", str(int(compute_ns)),
               "--wait-ns", str(LATE_WAIT_NS)] + (["--alternate"] if alternate else [])
    program += [f"{p}:{b}:{c}" for p, b, c in specs]
    parsed = runmod.parser().parse_args(argv + list(knobs) + ["--", *program])
    base = {name: value for name, value in os.environ.items() if not name.startswith("LOGGP_")}
    with tempfile.TemporaryDirectory(prefix="loggp-bench-") as private:
        base["LOGGP_KNOB_FILE"] = os.path.join(private, "knobs")  # absent: no knob but the flags
        additions, cmd = runmod.build(parsed, base)
        env = dict(base)
        if preload:
            env.update(additions)
        else:
            env.update({name: value for name, value in additions.items()
                        if name != "LD_PRELOAD" and not name.startswith("LOGGP_")})
            shm_regions.remove_stale()  # routed through shm without the layer, which would do it
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        finally:
            # build() made the run's record folder for `loggp run` to remove; this caller runs it itself
            record = additions.get(run_record.VARIABLE)
            if record:
                shutil.rmtree(record, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def measure(specs, knobs=(), preload=True, provider=None, reps=5, compute_ns=5000, timeout=600, mpi="mpich"):
    """One run (run_patterns); {(pattern, bytes): median ns}."""
    out = run_patterns(specs, knobs, preload, provider, reps, compute_ns, timeout, mpi)
    return {(p, b): statistics.median(values) for (p, b, _), values in parse_lines(out, specs, reps).items()}


def measure_paired(specs, knobs, provider=None, reps=5, compute_ns=5000, timeout=600, mpi="mpich", outside="zero"):
    """One run in which each repetition runs without and with the knobs, side
    by side (--alternate, the knobs scoped to the kernel region); outside
    "armed": "without" is each knob given at its smallest step (`loggp run
    --outside armed`). Returns {(pattern, bytes): (median ns without, [with -
    without, per repetition])}."""
    flags = list(knobs) + ["--scope", "kernel"] + (["--outside", "armed"] if outside == "armed" else [])
    out = run_patterns(specs, flags, True, provider, reps, compute_ns, timeout, mpi, alternate=True)
    lines = parse_lines(out, specs, reps, regions=("outside", "kernel"))
    result = {}
    for p, b, _ in specs:
        without, with_knobs = lines[(p, b, "outside")], lines[(p, b, "kernel")]
        result[(p, b)] = (statistics.median(without), [w - o for w, o in zip(with_knobs, without)])
    return result


DETOURS_SECONDS = 0.5


def host_detours(seconds=DETOURS_SECONDS):
    """loggp-detours' figures for this machine now (how often the host takes a CPU
    away, and for how long), or None if it could not run: the noise under a reading."""
    try:
        proc = subprocess.run([find_program("loggp-detours"), "--json", "--seconds", str(seconds)],
                              capture_output=True, text=True, timeout=60 + 2 * seconds)
        return json.loads(proc.stdout) if proc.returncode == 0 else None
    except (MissingProgram, OSError, ValueError, subprocess.SubprocessError):
        return None


def detours_text(detours):
    if not detours:
        return "host detours: not measured (loggp-detours did not run)"
    return (f"host detours: {detours['per_second']:.0f} a second, median {detours['median_us']:.1f} us, "
            f"{100 * detours['lost_fraction']:.1f} % of a CPU (loggp-detours): spins and waits of 10 us and longer "
            "collect some of them (docs/benchmarks.md)")


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def interleaved(rounds, names):
    """Order of the runs in each round: forward, then backward, alternately."""
    return [list(names) if r % 2 == 0 else list(reversed(names)) for r in range(rounds)]


def print_conditions(result, goal, whose):
    """What a bench's figures were measured under: the repeats to a precision (when a budget was
    given), the load average, the host's detours and whether others shared the cores."""
    if result.get("budget_s") is not None:
        print(f"repeated until {whose} 95 % interval was settled ({goal}) or the budget of "
              f"{result['budget_s']:g} s was spent, after at least {result['min_rounds']} rounds: "
              f"{'the budget ran out' if result['budget_ran_out'] else 'settled'} after {result['elapsed_s']:g} s")
    print(f"load average (1 min) {result['load_average'][0]:.1f} at the start, {result['load_average'][1]:.1f} at the "
          "end: figures measured on a loaded machine are not results")
    print(detours_text(result.get("detours")))
    if result.get("shared_cores"):
        print(result["shared_cores"])
