"""`loggp run`: run an MPI application with libloggp.so preloaded, the knobs
given, and the routing the chosen engine needs."""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from loggp.knobs import grammar
from loggp.knobs import ENVIRONMENT, FLAGS, KnobError, environment as knob_variables
from loggp.knobs.vocabulary import knobs_of
from loggp.knobs.command import EXIT_USAGE, Command, CommandError, Parser, positive_int
from loggp.knobs.programs import find_program, prefix_path, which

from . import abi, exit_status, machine_load, open_mpi, run_env, run_record, topology, trace_record
from .child import run_program

# Command-line knob flags and the environment variables they set.
KNOB_FLAGS = {flag[2:]: tuple(ENVIRONMENT[k] for k in knobs_of(setting)) for setting, flag in FLAGS.items()}
PROVIDERS = ("shm", "tcp")
# Jitter flags and their variables; libloggp.so parses the values (jitter.h).
JITTER_FLAGS = {"L-jitter": "LOGGP_L_JITTER", "o-jitter": "LOGGP_O_JITTER"}


class RunError(CommandError):
    """A bad argument or a missing piece, reported without a traceback (exit 2)."""

    def __init__(self, message):
        super().__init__(message, exit_code=EXIT_USAGE)


def find_library():
    override = os.environ.get("LOGGP_LIBRARY")
    lib = Path(override) if override else prefix_path("lib", "libloggp.so")
    if not lib.is_file():
        raise RunError(f"libloggp.so not found at {lib} (run ./setup.sh, or set LOGGP_LIBRARY)")
    return lib.resolve()


def find_open_mpi_library():
    """libloggp-ompi.so (the PMPI layer built for Open MPI's ABI), or None where
    the build had no Open MPI headers: libloggp.so then serves through libfabric only."""
    lib = prefix_path("lib", open_mpi.LIBRARY)
    return lib.resolve() if lib.is_file() else None


def knob_environment(knob_args):
    """Validates knob flags with loggp-knobs (the one parser) and returns the
    environment variables for the knobs given. Knobs not given stay live from
    the knob file."""
    if not knob_args:
        return {}
    try:
        exported = knob_variables(knob_args)
    except KnobError as err:
        raise RunError(str(err)) from None
    wanted = {name for flag, _ in knob_args for name in KNOB_FLAGS[flag]}
    return {name: exported[name] for name in sorted(wanted)}


def jitter_environment(args):
    """LOGGP_L_JITTER, LOGGP_O_JITTER and LOGGP_SEED for the flags given."""
    env = {var: getattr(args, flag.replace("-", "_")) for flag, var in JITTER_FLAGS.items()
           if getattr(args, flag.replace("-", "_"), None)}
    if getattr(args, "seed", None) is not None:
        if args.seed < 0:
            raise RunError(f"--seed {args.seed}: expected a whole number >= 0")
        env["LOGGP_SEED"] = str(args.seed)
    return env


def routing_environment(engine, provider, base_env, single_host, launcher=None):
    """Same-node traffic must cross libfabric for the libfabric engine, as in a
    one-process-per-node cluster. The user's own settings win, except that
    --provider is explicit. srun spreads ranks over nodes: tcp by default."""
    if engine == "pmpi":
        return {}
    env = {name: value for name, value in (("MPIR_CVAR_CH4_NETMOD", "ofi"), ("MPIR_CVAR_NOLOCAL", "1"))
           if name not in base_env}
    env.update(provider_environment(provider, "tcp" if launcher == "srun" else "shm", base_env, single_host))
    return env


def provider_environment(provider, default, base_env, single_host):
    """FI_PROVIDER: --provider, else the user's own, else default; tcp on one
    host goes over loopback."""
    env = {}
    if provider or "FI_PROVIDER" not in base_env:
        env["FI_PROVIDER"] = provider or default
    chosen = env.get("FI_PROVIDER", base_env.get("FI_PROVIDER"))
    if chosen == "tcp" and single_host and "FI_TCP_IFACE" not in base_env:
        env["FI_TCP_IFACE"] = "lo"
    return env


def launcher_command(launcher, np, program, hostfile):
    if launcher == "mpiexec":
        cmd = [find_program("mpiexec"), "-n", str(np)]
        if hostfile:
            cmd += ["-f", hostfile]
        return cmd + program
    if launcher == "srun":
        # --export=ALL: the knobs travel in each step's environment, so a node needs no knob
        # file of its own. pmi2 is what the mpich wheel speaks, unless the user chose.
        cmd = [slurm_program("srun"), "-n", str(np), "--export=ALL"]
        if "SLURM_MPI_TYPE" not in os.environ:
            cmd.append("--mpi=pmi2")
        if hostfile:
            cmd += ["--nodefile", hostfile]
        return cmd + program
    if "{program}" not in launcher:
        raise RunError(f"--launcher '{launcher}': expected mpiexec, srun or a template containing {{program}}")
    if np > 1 and "{np}" not in launcher:
        print(f"loggp run: warning: --launcher '{launcher}' has no {{np}}, so -n {np} does not reach it: it starts "
              "as many ranks as it says itself (put {np} where it takes its rank count)", file=sys.stderr)
    try:
        text = launcher.format(np=np, program=shlex.join(program), hostfile=shlex.quote(hostfile or ""))
    except (KeyError, IndexError, ValueError) as err:
        raise RunError(f"--launcher '{launcher}': bad template ({err}); placeholders are {{np}}, {{program}}, "
                       "{hostfile}") from None
    return ["/bin/sh", "-c", text]


def venv_program(name, path_env):
    """The program to start for `name`: its full path when the venv's bin/ has it and
    PATH (which the launcher searches) would not give the same file, e.g. a kernel
    run through .venv/bin/loggp without the venv activated; else name as given."""
    if "/" in name:
        return name
    found = which(name, path_env)
    return found if found and found != shutil.which(name, path=path_env) else name


def slurm_program(name):
    """srun, or RunError: Slurm's client is not loggp's to install (find_program says run ./setup.sh)."""
    try:
        return find_program(name)
    except CommandError:
        raise RunError(f"--launcher srun: {name} is not installed here (it is Slurm's client); run where Slurm "
                       "is, or use --launcher mpiexec") from None


def check_slurm():
    """srun is there and `scontrol ping` answers, so that a Slurm out of reach is said in
    one line, not in srun's own errors from every attempt to find its configuration."""
    slurm_program("srun")
    try:
        proc = subprocess.run([find_program("scontrol"), "ping"], capture_output=True, text=True, timeout=20)
    except (CommandError, OSError, subprocess.TimeoutExpired):
        return  # no verdict: srun will say
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()[-1]
        raise RunError(f"--launcher srun: Slurm does not answer here (scontrol ping: {said}); run inside a Slurm "
                       "cluster, or use --launcher mpiexec")


def program_plan(args, program, base_env):
    """The ABI decision for the program (loggp.shim.abi), or None without the swap."""
    if not args.abi_swap:
        return None
    try:
        return abi.plan_for(program[0], path_env=base_env.get("PATH"))
    except abi.AbiError as err:
        raise RunError(f"{err}") from None


def abi_environment(args, plan, base_env):
    """ABI swap (loggp.shim.abi): the loader path that puts an MPICH-ABI program on
    the venv's MPICH, and one line on stderr saying which libmpi the ranks use."""
    try:
        additions = abi.environment(plan, base_env)
        if args.profile and not args.dry_run:
            abi.write_record(plan, args.profile)
    except abi.AbiError as err:
        raise RunError(f"{err}") from None
    except OSError as err:
        raise RunError(f"--profile '{args.profile}': {err.strerror}") from None
    if plan.note and (plan.warning or not args.quiet):
        print(f"loggp run: {plan.note}", file=sys.stderr)
    return additions


def check_open_mpi(args, program, full_library):
    """What an Open MPI program cannot have: its ofi MTL does not take libfabric's
    shm; without libloggp-ompi.so, libloggp.so's PMPI layer stays off under
    Open MPI's handles."""
    name = program[0]
    if args.provider == "shm":
        raise RunError(f"--provider shm: {name} is linked against Open MPI, whose ofi MTL does not take "
                       "libfabric's shm provider; use --provider tcp (the default for Open MPI)")
    if full_library:
        return
    if args.engine == "pmpi":
        raise RunError(f"--engine pmpi: {name} is linked against Open MPI, and this build has no "
                       "libloggp-ompi.so (apt-get install libopenmpi-dev, then ./setup.sh); leave --engine at auto")
    if args.profile or args.trace is not None:
        flag = "--profile" if args.profile else "--trace"
        raise RunError(f"{flag}: {name} is linked against Open MPI, and this build has no libloggp-ompi.so "
                       "(Open MPI's headers were missing: apt-get install libopenmpi-dev, then ./setup.sh), so "
                       "no profile or trace can be written")


def parser():
    p = Parser(
        prog="loggp run",
        description="Run an MPI program under libloggp.so. Knobs given here hold for this run; "
                    "knobs not given follow the knob file live (`loggp-knobs set`).",
        example="loggp run -n 2 --L 10us --o 1us -- ./app")
    p.add_argument("-n", "--np", type=positive_int, required=True, help="number of ranks (required, no default)")
    for flag in KNOB_FLAGS:
        example = "0.5ns/B" if flag == "G" else "10us"
        p.add_argument(f"--{flag}", metavar="T/B" if flag == "G" else "T", dest=f"knob_{flag}", once=True,
                       help=f"knob {flag} for this run, e.g. {example} (default: the knob file's, live)")
    for flag in JITTER_FLAGS:
        p.add_argument(f"--{flag}", metavar="DIST:S", dest=flag.replace("-", "_"), once=True,
                       help=f"draw {flag.split('-')[0]} per message around its value: normal:S, exp:S, "
                            "lognormal:S[:SIGMA] or pareto:S[:ALPHA], S the standard deviation, truncated at 0 "
                            "(docs/jitter.md; default: none)")
    p.add_argument("--seed", type=int, once=True, help="seed of the jitter draws, mixed with each rank (default 0)")
    p.add_argument("--target", metavar="NAME|FILE", once=True,
                   help="emulate a target network: each knob set to target - this host (`loggp targets` lists "
                        "them; a FILE is `loggp probe --json` output or a target TOML; docs/targets.md; "
                        "default: none)")
    p.add_argument("--host-signature", metavar="FILE", once=True,
                   help="with --target: this host's own `loggp probe --json` file (default: measured at once)")
    p.add_argument("--clip", action="store_true",
                   help="with --target: run a parameter the target has faster than this host at the host's value")
    topology.add_arguments(p)
    p.add_argument("--engine", choices=("auto", "libfabric", "pmpi"), default="auto",
                   help="auto (the default): libfabric when MPI runs over libfabric, else pmpi; libfabric: "
                        "every message crosses the wrapped provider; pmpi: o, g and G on point-to-point "
                        "calls only, MPI's own transports")
    p.add_argument("--scope", choices=grammar.SCOPES,
                   help="where the knobs apply: all (the default) or kernel, inside the region the program marks "
                        "with loggp_hint(\"IN_KERNEL\", ...) or MPI_Pcontrol only")
    p.add_argument("--outside", choices=grammar.OUTSIDES,
                   help="with --scope kernel, what the knobs leave outside the region: zero (the default) or "
                        "armed, each knob set at its smallest step (1 ns, G 0.001 ns/B), its delay path running "
                        "while adding ~nothing: a baseline that shares the armed layer's own cost")
    p.add_argument("--provider", choices=PROVIDERS, help="libfabric provider for same-node traffic (default shm)")
    p.add_argument("--profile", metavar="DIR", help="write each rank's traffic profile to DIR/profile.<rank>.json (default: no profile)")
    p.add_argument("--trace", metavar="DIR",
                   help="record every MPI call of each rank to DIR/trace.<rank>.bin (docs/trace-format.md; "
                        "default: no trace)")
    p.add_argument("--launcher", default="mpiexec",
                   help="mpiexec (default), srun, or a template with {np}, {program}, {hostfile}")
    p.add_argument("--hostfile", help="host file for the launcher (default: none, every rank on this host)")
    p.add_argument("--testbed", nargs="?", const="", metavar="NAME",
                   help="one rank per emulated host of a `loggp testbed` (needs root; default name tb)")
    p.add_argument("--quiet", action="store_true", help="no banner from rank 0")
    p.add_argument("--no-abi-swap", dest="abi_swap", action="store_false",
                   help="run a program linked against another MPICH-ABI library on that library, "
                        "not on the venv's MPICH (the libfabric engine then does not apply)")
    p.add_argument("--dry-run", action="store_true", help="print the exact command instead of running it")
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    return p


def run_variables(args):
    """The LOGGP_* variables the flags set besides the knobs."""
    env = {"LOGGP_ENGINE": args.engine}
    if args.profile:
        env["LOGGP_PROFILE"] = str(Path(args.profile).resolve())
    if args.trace is not None:
        env["LOGGP_TRACE"] = str(Path(args.trace).resolve())
    if args.quiet:
        env["LOGGP_QUIET"] = "1"
    if args.scope:
        env["LOGGP_SCOPE"] = args.scope
    if args.outside:
        try:
            grammar.check_outside(args.outside, args.scope)
        except grammar.GrammarError:
            raise RunError("--outside armed: only with --scope kernel (outside the region is everywhere else)") from None
        env["LOGGP_OUTSIDE"] = args.outside
    env.update(jitter_environment(args))
    env.update(topology.environment(args, args.np, RunError))
    return env


def check_trace_folder(folder):
    """--trace DIR: a folder each rank can write into (made if missing, under an
    existing folder), refused before anything starts."""
    flag = f"--trace '{folder}'"
    if not folder:
        raise RunError(f"{flag}: expected a folder")
    where = Path(folder)
    if where.exists() and not where.is_dir():
        raise RunError(f"{flag}: not a folder (each rank writes trace.<rank>.bin into it)")
    target = where if where.exists() else where.resolve().parent
    if not where.exists() and not target.is_dir():
        raise RunError(f"{flag}: its parent folder does not exist or is not a folder")
    # os.access says yes to root everywhere: a real file tells (and is removed)
    try:
        with tempfile.NamedTemporaryFile(dir=target, prefix=".loggp-trace-check-"):
            pass
    except OSError as err:
        raise RunError(f"{flag}: cannot write into {target}: {err.strerror}") from None


def build(args, base_env, testbed_plan=None, target_plan=None):
    """The environment additions and the command for a parsed `loggp run`.
    testbed_plan(args, program) -> (routing, command): the `loggp testbed`
    launch, which the loggp root hands in (the shim does not import it);
    target_plan(args) -> [(flag, value)]: the knobs of --target, likewise."""
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        raise RunError("no program given (usage: loggp run -n N [knobs] -- PROGRAM ARGS...)")
    program = [venv_program(program[0], base_env.get("PATH")), *program[1:]]
    if args.hostfile and not Path(args.hostfile).is_file():
        raise RunError(f"--hostfile '{args.hostfile}': no such file")
    knob_args = [(flag, getattr(args, f"knob_{flag}")) for flag in KNOB_FLAGS
                 if getattr(args, f"knob_{flag}") is not None]
    knob_args = target_knobs(args, knob_args, target_plan)
    if args.engine == "pmpi" and args.provider:
        raise RunError("--provider applies to the libfabric engine, not --engine pmpi")
    env = {}
    env.update(knob_environment(knob_args))
    if args.engine == "pmpi" and env.get(ENVIRONMENT["L"], "0ns") != "0ns":
        raise RunError(f"--L {args.knob_L}: the PMPI fallback engine (--engine pmpi) cannot apply L, only o, g "
                       "and G around point-to-point calls; use --engine libfabric (or auto), or the testbed's "
                       "links (`loggp-knobs set --via netem --L ...`)")
    if args.profile == "":
        raise RunError("--profile '': expected a folder")
    if args.profile:
        where = Path(args.profile)
        if where.exists() and not where.is_dir():
            raise RunError(f"--profile '{args.profile}': not a folder (each rank writes "
                           f"profile.<rank>.json into it)")
        if not where.exists() and not where.resolve().parent.is_dir():
            raise RunError(f"--profile '{args.profile}': its parent folder does not exist")
    if args.trace is not None:
        check_trace_folder(args.trace)
    if args.launcher == "srun" and not args.dry_run:
        check_slurm()
    if args.launcher == "mpiexec" and not args.hostfile and args.testbed is None:
        # Every rank starts here: a missing program is ours to say, not the launcher's.
        try:
            abi.resolve_program(program[0], base_env.get("PATH"))
        except abi.AbiError as err:
            raise RunError(f"{err}") from None
    plan = program_plan(args, program, base_env)
    on_open_mpi = plan is not None and plan.open_mpi and args.launcher == "mpiexec" and args.testbed is None
    open_mpi_library = find_open_mpi_library() if on_open_mpi else None
    if on_open_mpi:
        check_open_mpi(args, program, open_mpi_library is not None)
    if args.testbed is not None:
        if testbed_plan is None:
            raise RunError("--testbed: no testbed here (run it as `loggp run`)")
        routing, cmd = testbed_plan(args, program)
    elif on_open_mpi:
        # Open MPI 4.1's ofi MTL does not take libfabric's shm provider
        routing = {} if args.engine == "pmpi" else provider_environment(args.provider, "tcp", base_env,
                                                                        single_host=not args.hostfile)
        cmd = None  # below, once every variable to export is known
    else:
        single_host = args.launcher == "mpiexec" and not args.hostfile
        routing = routing_environment(args.engine, args.provider, base_env, single_host, args.launcher)
        cmd = launcher_command(args.launcher, args.np, program, args.hostfile)
    # every LOGGP_* variable the ranks get, checked as their MPI_Init would, before anything starts
    loggp_vars = run_variables(args)
    ranks_here = args.launcher == "mpiexec" and not args.hostfile and args.testbed is None
    for line in run_env.check({**env, **loggp_vars}, base_env, RunError, ranks_here, args.np):
        print(f"loggp run: {line}", file=sys.stderr)
    env.update(routing)
    if plan is not None:
        env.update(abi_environment(args, plan, base_env))
    lib = str(open_mpi_library or find_library())
    preload = base_env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = lib + (":" + preload if preload and lib not in preload.split(":") else "")
    env.update(loggp_vars)
    if args.trace is not None and not args.dry_run:
        provider = None if args.engine == "pmpi" else env.get("FI_PROVIDER", base_env.get("FI_PROVIDER"))
        # the testbed's hosts are namespaces of their own; a host file, srun or a template may go either way
        one_host = True if ranks_here else False if args.testbed is not None else None
        try:
            trace_record.write(args.trace, trace_record.record(plan.library if plan else None, on_open_mpi,
                                                               args.engine, provider, one_host))
        except OSError as err:
            raise RunError(f"--trace '{args.trace}': {err.strerror}") from None
    if ranks_here and not args.dry_run:
        # made last, once nothing can refuse the run: run_record.launch removes it
        env[run_record.VARIABLE] = run_record.make_folder()
    if on_open_mpi:
        cmd = open_mpi.command(args.np, program, args.hostfile, env, base_env.get("PATH"),
                               ofi=args.engine != "pmpi")
    return env, cmd


def target_knobs(args, knob_args, target_plan):
    """The knob flags of --target (target_plan, from the root), or the ones given."""
    target = getattr(args, "target", None)
    if target is None:
        if getattr(args, "host_signature", None) or getattr(args, "clip", False):
            raise RunError("--host-signature and --clip go with --target")
        return knob_args
    if knob_args:
        raise RunError(f"--target {target} sets every knob; drop --{knob_args[0][0]} (or write a target file)")
    if target_plan is None:
        raise RunError("--target: no target catalogue here (run it as `loggp run`)")
    try:
        return target_plan(args)
    except ValueError as err:
        raise RunError(str(err)) from None


class RunCommand(Command):
    name = "run"

    def __init__(self, testbed_plan=None, target_plan=None):
        self.testbed_plan = testbed_plan
        self.target_plan = target_plan

    def parser(self):
        return parser()

    def run(self, args):
        return execute(args, self.testbed_plan, self.target_plan)


def oversubscription_note(np_ranks, cores):
    """The one line said when a single host gets more ranks than it has cores, or None."""
    if np_ranks <= cores:
        return None
    return (f"loggp run: note: {np_ranks} ranks on {cores} core{'s' if cores != 1 else ''}: ranks share cores, "
            "so timings are slower and noisier (o and g busy-wait on the CPU)")


def execute(args, testbed_plan=None, target_plan=None):
    additions, cmd = build(args, os.environ, testbed_plan, target_plan)
    if args.launcher == "mpiexec" and not args.hostfile and args.testbed is None and not args.quiet:
        note = oversubscription_note(args.np, len(os.sched_getaffinity(0)))
        if note:
            print(note, file=sys.stderr)
        shared = machine_load.before_run_line(sys.stderr.isatty())
        if shared:
            print(f"loggp run: note: {shared}", file=sys.stderr)
    if args.dry_run:
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in additions.items())
        print(f"env {assignments} {shlex.join(cmd)}")
        return 0
    env = dict(os.environ)
    env.update(additions)
    sys.stdout.flush()
    sys.stderr.flush()
    if args.launcher == "mpiexec" and cmd[0] == find_program("mpiexec"):
        # Hydra run here: every process's wait status, so a rank a signal killed is named (exit_status.py)
        cmd = exit_status.asking_statuses(cmd)
    if run_record.VARIABLE in additions:
        return run_record.launch(cmd, env, args.np, args.profile, args.trace)
    return run_program(cmd, env)
