"""`loggp testbed`: N emulated hosts on one machine, as Linux network namespaces.

Layout of a testbed NAME (default "tb"):
  loggp-NAME-sw      "switch" namespace holding the bridge loggp-br and ports loggp-p<i>
  loggp-NAME-h<i>    host namespace i: interface loggp-eth0 = the peer of loggp-p<i>,
                     address <subnet>.(i+1)/24 (subnet 198.18.0.0/24, the benchmarking range)
Every interface is created inside a namespace of the testbed, so the root namespace gets no
interface, address or route; nothing is routed or forwarded to the outside.

The system is the state: a testbed is whatever loggp-NAME-* namespaces exist. A small run
directory (/run/loggp/testbed-NAME) holds generated files: the hostfile, the launcher that
Hydra calls instead of ssh, and the knobs last applied by `netem set`
(testbed_netem.py). The shared base is testbed_hosts.py.
"""
import argparse
import ipaddress
import json
import os
import shlex
import shutil
import signal
import sys
import time

from loggp import testbed_netem, testbed_slurm
from loggp.knobs import grammar
from loggp.knobs.command import Command
from loggp.knobs.programs import find_program
from loggp.shim.run import RunError
from loggp.testbed_calibrate import calibrate
from loggp.testbed_hosts import (BENCHMARK_RANGE, BRIDGE, DEFAULT_NAME, DEFAULT_SUBNET, FAIL_AT_ENV, HOST_IFACE,
                                 MAX_HOSTS, TestbedError, UsageError, check_name, complete, default_name, discover,
                                 host_ns, ip_command, qdiscs, require_root, run_dir, sh, switch_ns, write_run_file)


# ---------------------------------------------------------------- up / down

def host_addresses(subnet, count):
    net = ipaddress.ip_network(subnet)
    return [str(net.network_address + i + 1) for i in range(count)]


def parse_subnet(text):
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as err:
        raise UsageError(f"--subnet '{text}': {err}") from None
    if net.version != 4 or not net.subnet_of(BENCHMARK_RANGE) or net.prefixlen > 24:
        raise UsageError(f"--subnet '{text}': expected an IPv4 /24 or larger inside 198.18.0.0/15 "
                         "(the benchmarking range, never routed)")
    return str(net)


def up_steps(name, hosts, subnet):
    """The commands that build a testbed, in order. Every link is created inside the switch
    namespace with its peer sent straight into a host namespace."""
    ip = ip_command()
    sw = switch_ns(name)
    prefix = ipaddress.ip_network(subnet).prefixlen
    no_ipv6 = "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"
    steps = [
        (f"create namespace {sw}", [ip, "netns", "add", sw]),
        (f"disable IPv6 in {sw}", [ip, "netns", "exec", sw, "/bin/sh", "-c", no_ipv6]),
        (f"create bridge {BRIDGE} in {sw}", [ip, "-n", sw, "link", "add", BRIDGE, "type", "bridge"]),
        (f"bring {BRIDGE} up", [ip, "-n", sw, "link", "set", BRIDGE, "up"]),
    ]
    for i, address in enumerate(host_addresses(subnet, hosts)):
        ns, port = host_ns(name, i), f"loggp-p{i}"
        steps += [
            (f"create namespace {ns}", [ip, "netns", "add", ns]),
            (f"disable IPv6 in {ns}", [ip, "netns", "exec", ns, "/bin/sh", "-c", no_ipv6]),
            (f"create veth {port} <-> {ns}:{HOST_IFACE}",
             [ip, "-n", sw, "link", "add", port, "type", "veth", "peer", "name", HOST_IFACE, "netns", ns]),
            (f"attach {port} to {BRIDGE}", [ip, "-n", sw, "link", "set", port, "master", BRIDGE, "up"]),
            (f"address {address} on {ns}", [ip, "-n", ns, "addr", "add", f"{address}/{prefix}", "dev", HOST_IFACE]),
            (f"bring {ns}:{HOST_IFACE} up", [ip, "-n", ns, "link", "set", HOST_IFACE, "up"]),
            (f"bring {ns}:lo up", [ip, "-n", ns, "link", "set", "lo", "up"]),
        ]
    return steps


def up(name, hosts, subnet, out=sys.stdout):
    require_root()
    state = discover(name)
    if state["switch"] or state["hosts"]:
        if complete(state) and len(state["hosts"]) == hosts:
            write_run_files(state)
            print(f"testbed '{name}' is already up with {hosts} hosts", file=out)
            return state
        raise TestbedError(f"testbed '{name}' already exists ({len(state['hosts'])} hosts): "
                           f"run `loggp testbed down --name {name}` first")
    fail_at = os.environ.get(FAIL_AT_ENV)
    try:
        for number, (what, cmd) in enumerate(up_steps(name, hosts, subnet), start=1):
            if fail_at == str(number):
                raise TestbedError(f"step {number} ({what}): failure injected by {FAIL_AT_ENV}")
            try:
                sh(cmd)
            except TestbedError as err:
                raise TestbedError(f"step {number} ({what}): {err}") from None
        write_run_file(run_dir(name) / "state.json", json.dumps({"hosts": hosts, "subnet": subnet}) + "\n")
        state = discover(name)
        if not complete(state) or len(state["hosts"]) != hosts:
            raise TestbedError(f"testbed '{name}' is incomplete after setup: {state}")
        write_run_files(state)
    except BaseException as err:
        leftovers = teardown(name)
        note = "; rolled back" if not leftovers else f"; rollback left {', '.join(leftovers)}"
        if isinstance(err, TestbedError):
            raise TestbedError(f"up failed: {err}{note}") from None
        raise
    print(f"testbed '{name}' up: {hosts} hosts on {subnet}", file=out)
    return state


def kill_namespace_processes(ns):
    """Processes still inside a namespace keep it alive: end them (they were started in our
    namespace, by `loggp run --testbed`)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = [int(p) for p in sh([ip_command(), "netns", "pids", ns], check=False).stdout.split()]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def teardown(name):
    """Removes every namespace of testbed NAME (their interfaces and qdiscs go with them) and its
    run directory. Returns what could not be removed."""
    state = discover(name)
    ordered = [ns for _, ns, _ in state["hosts"]] + ([switch_ns(name)] if state["switch"] else [])
    for ns in ordered:
        kill_namespace_processes(ns)
        sh([ip_command(), "netns", "del", ns], check=False)
    shutil.rmtree(run_dir(name), ignore_errors=True)
    left = discover(name)
    return [ns for _, ns, _ in left["hosts"]] + ([switch_ns(name)] if left["switch"] else [])


def down(name, out=sys.stdout):
    require_root()
    stuck = testbed_slurm.stop(name)
    if stuck:
        raise TestbedError(f"could not stop {', '.join(stuck)}; the testbed is left up")
    state = discover(name)
    if not state["switch"] and not state["hosts"]:
        shutil.rmtree(run_dir(name), ignore_errors=True)
        print(f"testbed '{name}' is not up", file=out)
        return
    leftovers = teardown(name)
    if leftovers:
        raise TestbedError(f"could not remove {', '.join(leftovers)}")
    print(f"testbed '{name}' down", file=out)


# ---------------------------------------------------------------- generated files

def launcher_script(state):
    """Hydra calls its ssh launcher as `EXEC [options] HOST COMMAND...`, COMMAND quoted for a
    remote shell. This runs COMMAND in the namespace of the host with that address and refuses
    any other host, so no proxy is ever started outside the testbed."""
    ip = ip_command()
    cases = "\n".join(f"  {address}) ns={ns} ;;" for _, ns, address in state["hosts"])
    return f"""#!/bin/sh
# Generated by `loggp testbed` for testbed '{state["name"]}': Hydra's launcher into its namespaces.
while [ $# -gt 0 ] && [ "${{1#-}}" != "$1" ]; do shift; done
host=$1
[ $# -gt 0 ] && shift
case "$host" in
{cases}
  *) echo "loggp testbed launcher: '$host' is not a host of testbed '{state["name"]}'" >&2; exit 255 ;;
esac
exec {shlex.quote(ip)} netns exec "$ns" /bin/sh -c "$*"
"""


def write_run_files(state):
    directory = run_dir(state["name"])
    write_run_file(directory / "hostfile", "".join(f"{address}\n" for _, _, address in state["hosts"]))
    write_run_file(directory / "launch", launcher_script(state), mode=0o755)
    return directory


# ---------------------------------------------------------------- `loggp run --testbed`

def launch_plan(args, program):
    """Routing environment and command for `loggp run --testbed`: mpiexec starts inside the first
    host's namespace, one rank per host, every message over libfabric tcp across the veths.
    The root hands this to `loggp run` (loggp.shim.run.build's testbed_plan)."""
    name = args.testbed or default_name()
    try:
        check_name(name)
    except UsageError as err:
        raise RunError(f"--testbed: {err}") from None
    if args.launcher != "mpiexec" or args.hostfile:
        raise RunError("--testbed chooses its own launcher and hosts: drop --launcher and --hostfile")
    if args.engine == "pmpi":
        raise RunError("--testbed routes MPI through libfabric tcp; it cannot be combined with --engine pmpi")
    if args.provider not in (None, "tcp"):
        raise RunError(f"--provider {args.provider}: a testbed's hosts talk over tcp only")
    if os.geteuid() != 0:
        raise RunError("--testbed needs root (it enters network namespaces)")
    try:
        state = discover(name)
    except TestbedError as err:
        raise RunError(str(err)) from None
    if not complete(state):
        raise RunError(f"testbed '{name}' is not up: run `loggp testbed up --hosts N --name {name}`")
    if args.np > len(state["hosts"]):
        raise RunError(f"-n {args.np}: testbed '{name}' has {len(state['hosts'])} hosts (one rank per host); "
                       f"run `loggp testbed down --name {name}` and `loggp testbed up --hosts {args.np} "
                       f"--name {name}`")
    directory = write_run_files(state)
    env = {"FI_PROVIDER": "tcp", "FI_TCP_IFACE": HOST_IFACE, "MPIR_CVAR_CH4_NETMOD": "ofi",
           "MPIR_CVAR_NOLOCAL": "1"}
    cmd = [ip_command(), "netns", "exec", state["hosts"][0][1], find_program("mpiexec"),
           "-f", str(directory / "hostfile"), "-n", str(args.np), "-iface", HOST_IFACE,
           "-launcher", "ssh", "-launcher-exec", str(directory / "launch"), *program]
    return env, cmd


def status(name, as_json, out=sys.stdout):
    require_root()
    state = discover(name)
    report = {"name": name, "up": complete(state), "switch": switch_ns(name) if state["switch"] else None,
              "hosts": [{"index": i, "namespace": ns, "address": address,
                         "qdiscs": qdiscs(ns) if address else []} for i, ns, address in state["hosts"]]}
    if as_json:
        print(json.dumps(report, indent=2), file=out)
        return 0
    if not state["switch"] and not state["hosts"]:
        print(f"testbed '{name}' is not up", file=out)
        return 0
    word = "up" if report["up"] else "INCOMPLETE (run `loggp testbed down --name " + name + "`)"
    expected = state.get("expected_hosts")
    of = f" of {expected}" if expected is not None and expected != len(state["hosts"]) else ""
    print(f"testbed '{name}' {word}: switch {report['switch']}, {len(state['hosts'])}{of} hosts", file=out)
    for host in report["hosts"]:
        qd = "; ".join(host["qdiscs"]) or "no qdisc"
        print(f"  h{host['index']} {host['namespace']} {host['address'] or '-'} ({qd})", file=out)
    for line in testbed_slurm.status_lines(name, state):
        print(line, file=out)
    return 0


# ---------------------------------------------------------------- command line

def host_count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 1 <= value <= MAX_HOSTS:
        raise argparse.ArgumentTypeError(f"'{text}' must be between 1 and {MAX_HOSTS}")
    return value


def configure(p):
    sub = p.add_subparsers(dest="command", required=True)

    def named(cmd, **kw):
        c = sub.add_parser(cmd, **kw)
        c.add_argument("--name", default=None, help=f"testbed name (default $LOGGP_TESTBED or '{DEFAULT_NAME}')")
        return c

    c = named("up", help="create N hosts", example="loggp testbed up --hosts 2")
    c.add_argument("--hosts", type=host_count, required=True, help="number of emulated hosts (required, no default)")
    c.add_argument("--subnet", default=DEFAULT_SUBNET, help=f"host addresses (default {DEFAULT_SUBNET})")
    c.add_argument("--slurm", action="store_true",
                   help="also start a Slurm cluster on the hosts (slurmctld on host 0; default: no Slurm)")
    named("down", help="remove the testbed (idempotent)", example="loggp testbed down")
    c = named("exec", help="run a command on host 0 (the Slurm login node)",
              example="loggp testbed exec -- srun -N 2 hostname")
    c.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    c = named("status", help="what exists", example="loggp testbed status --json")
    c.add_argument("--json", action="store_true", help="JSON instead of text (default: text)")
    c = named("calibrate", help="L through libloggp.so and through netem, measured side by side",
              example="loggp testbed calibrate --L 50us")
    c.add_argument("--L", default="50us", metavar="T", help="latency to set (default 50us)")
    c.add_argument("--time-limit", type=grammar.duration(0.0, 60.0, low_open=True), default="3s", metavar="T",
                   help="loggp-probe budget per run, e.g. 3s")
    c.add_argument("--repeat", type=host_count, default=3, metavar="R", help="rounds; each row keeps its least L (default 3)")
    c.add_argument("--json", metavar="FILE", help="also write the report as JSON (atomically; default: none)")
    netem = sub.add_parser("netem", help="latency and rate on the links with tc",
                           example="loggp testbed netem set --L 50us")
    nsub = netem.add_subparsers(dest="netem_command", required=True)
    name_help = f"testbed name (default $LOGGP_TESTBED or '{DEFAULT_NAME}')"
    c = nsub.add_parser("set", help="apply L (netem delay) and/or G (tbf rate)",
                        example="loggp testbed netem set --L 50us --G 8ns/B")
    c.add_argument("--name", default=None, help=name_help)
    c.add_argument("--L", metavar="T", help="one-way latency added between any two hosts (e.g. 50us; "
                   "default: unchanged)")
    c.add_argument("--G", metavar="T/B", help="time per byte: link rate 1/G (e.g. 8ns/B = 125 MB/s; "
                   "default: unchanged)")
    c = nsub.add_parser("show", help="what is applied where", example="loggp testbed netem show --json")
    c.add_argument("--name", default=None, help=name_help)
    c.add_argument("--json", action="store_true", help="JSON instead of text (default: text)")
    c = nsub.add_parser("reset", help="remove the link qdiscs", example="loggp testbed netem reset")
    c.add_argument("--name", default=None, help=name_help)


class TestbedCommand(Command):
    name = "testbed"
    description = "Emulated hosts as network namespaces joined by a bridge (needs root)."
    example = "sudo loggp testbed up --hosts 2 && loggp run -n 2 --testbed -- ./app"

    def configure(self, parser):
        configure(parser)

    def run(self, args):
        name = check_name(args.name if args.name is not None else default_name())
        if args.command == "up":
            if args.slurm:
                testbed_slurm.programs()  # missing Slurm is said before anything is made
            up(name, args.hosts, parse_subnet(args.subnet))
            if args.slurm:
                try:
                    testbed_slurm.start_cluster(name)
                except BaseException:
                    teardown(name)  # as a failed `up` leaves nothing, so does a failed `up --slurm`
                    raise
        elif args.command == "exec":
            return testbed_slurm.exec_on_host0(name, args.program)
        elif args.command == "down":
            down(name)
        elif args.command == "status":
            status(name, args.json)
        elif args.command == "calibrate":
            calibrate(name, args.L, args.time_limit, args.json, repeat=args.repeat)
        else:
            if args.netem_command == "set":
                testbed_netem.netem_set(name, args.L, args.G)
            elif args.netem_command == "show":
                testbed_netem.netem_show(name, args.json)
            else:
                testbed_netem.netem_reset(name)
        return 0
