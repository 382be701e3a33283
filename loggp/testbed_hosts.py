"""What every `loggp testbed` command shares: names, errors, discovery of what exists, the
run folder, and the commands that reach into the namespaces. testbed.py (the command) and its
parts testbed_slurm.py, testbed_netem.py and testbed_calibrate.py build on it; it imports none of them.
"""
import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from loggp.knobs.command import EXIT_USAGE, CommandError
from loggp.knobs.files import write_text_atomic

DEFAULT_NAME = "tb"
DEFAULT_SUBNET = "198.18.0.0/24"
BENCHMARK_RANGE = ipaddress.ip_network("198.18.0.0/15")
HOST_IFACE = "loggp-eth0"
BRIDGE = "loggp-br"
MAX_HOSTS = 64
NAME_RE = re.compile(r"[a-z0-9]{1,12}")
# Set only by tests: make step N of `up` fail, to prove the rollback.
FAIL_AT_ENV = "LOGGP_TESTBED_FAIL_AT"


class TestbedError(CommandError):
    """A failure reported without a traceback (exit 1)."""


class UsageError(TestbedError):
    """Bad usage or a bad value (exit 2)."""

    def __init__(self, message):
        super().__init__(message, exit_code=EXIT_USAGE)


# ---------------------------------------------------------------- names and discovery

def check_name(name):
    if not NAME_RE.fullmatch(name or ""):
        raise UsageError(f"testbed name '{name}': expected 1-12 lowercase letters or digits")
    return name


def default_name():
    return os.environ.get("LOGGP_TESTBED") or DEFAULT_NAME


def switch_ns(name):
    return f"loggp-{name}-sw"


def host_ns(name, index):
    return f"loggp-{name}-h{index}"


def run_dir(name):
    return Path(os.environ.get("LOGGP_TESTBED_RUN_DIR", "/run/loggp")) / f"testbed-{name}"


def require_root():
    if os.geteuid() != 0:
        raise TestbedError("network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run as root, "
                           "e.g. sudo loggp testbed ...")


def ip_command():
    found = shutil.which("ip")
    if not found:
        raise TestbedError("'ip' (iproute2) not found on PATH")
    return found


def tc_command():
    found = shutil.which("tc")
    if not found:
        raise TestbedError("'tc' (iproute2) not found on PATH")
    return found


def sh(cmd, check=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise TestbedError(f"{shlex.join(cmd)}: {proc.stderr.strip() or f'exit {proc.returncode}'}")
    return proc


def namespaces():
    """Names of all network namespaces iproute2 knows."""
    out = sh([ip_command(), "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def discover(name):
    """What exists of testbed NAME: {'switch': bool, 'hosts': [(index, ns, address or None)]}."""
    existing = set(namespaces())
    pattern = re.compile(rf"loggp-{re.escape(name)}-h(\d+)")
    hosts = []
    for ns in existing:
        m = pattern.fullmatch(ns)
        if m:
            hosts.append((int(m.group(1)), ns, host_address(ns)))
    hosts.sort()
    try:
        expected = json.loads((run_dir(name) / "state.json").read_text())["hosts"]
    except (OSError, ValueError, KeyError, TypeError):
        expected = None
    return {"name": name, "switch": switch_ns(name) in existing, "hosts": hosts, "expected_hosts": expected}


def host_address(ns):
    proc = sh([ip_command(), "-n", ns, "-4", "-o", "addr", "show", "dev", HOST_IFACE], check=False)
    m = re.search(r"inet (\S+)/", proc.stdout)
    return m.group(1) if m else None


def complete(state):
    """A testbed is usable when the switch and hosts 0..N-1 all exist with addresses."""
    hosts = state["hosts"]
    expected = state.get("expected_hosts")
    return (state["switch"] and bool(hosts) and [h[0] for h in hosts] == list(range(len(hosts)))
            and all(h[2] for h in hosts) and expected in (None, len(hosts)))


# ---------------------------------------------------------------- run folder and host state

def write_run_file(path, text, mode=0o644):
    """A file under the testbed's run folder, which is made on first use."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    write_text_atomic(path, text, mode)


def qdiscs(ns):
    """The qdisc lines tc reports on a host interface (the default noqueue is no setting)."""
    out = sh([tc_command(), "-n", ns, "qdisc", "show", "dev", HOST_IFACE]).stdout
    return [line.strip() for line in out.splitlines() if line.strip() and not line.startswith("qdisc noqueue")]


def up_state(name):
    require_root()
    state = discover(name)
    if not complete(state):
        raise TestbedError(f"testbed '{name}' is not up: run `loggp testbed up --hosts N --name {name}`")
    return state
