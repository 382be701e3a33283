"""The multi-host testbed: namespaces, veths, bridge and qdiscs really created and really removed;
rollback of a failed `up`; MPI ranks in different namespaces; tc rate and delay visible in MPI
timings. Needs root; every test tears down what it creates, also on failure."""
import json
import os
import re
import shutil
import subprocess

import pytest

from tests.testkit import installed, run
from loggp import testbed, testbed_hosts, testbed_netem



def namespaces_unavailable():
    """Why network namespaces cannot be made here, or None: tried, not guessed
    from the uid (root in a container may lack CAP_SYS_ADMIN)."""
    for tool in ("unshare", "ip"):
        if not shutil.which(tool):
            return f"'{tool}' is not installed"
    try:
        proc = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"`unshare --net true` did not run: {err}"
    if proc.returncode != 0:
        return f"network namespaces cannot be made here (`unshare --net true`: {proc.stderr.strip()[:200]})"
    return None


_WHY_NOT = namespaces_unavailable()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")

# A name of our own, so a user's testbed (default 'tb') is never touched.
NAME = f"pt{os.getpid() % 1000000}"


def loggp(*args, env=None, timeout=120):
    return run([installed("loggp"), *args], env=env, timeout=timeout)


def netns_names():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def ours(name=NAME):
    return {ns for ns in netns_names() if ns.startswith(f"loggp-{name}-")}


def root_namespace_view():
    """Interfaces, addresses and routes of the root namespace (must not change)."""
    cmds = (["ip", "-o", "link", "show"], ["ip", "-o", "addr", "show"], ["ip", "route", "show", "table", "all"])
    text = [subprocess.run(c, capture_output=True, text=True, check=True).stdout for c in cmds]
    # Counters and link state flicker on a live host; names and addresses are what matter.
    links = sorted(re.findall(r"^\d+: (\S+):", text[0], re.M))
    addrs = sorted(re.findall(r"inet6? (\S+)", text[1]))
    return links, addrs, sorted(text[2].splitlines())


def in_ns(ns, *cmd):
    return subprocess.run(["ip", "-n", ns, *cmd], capture_output=True, text=True)


def halfrtt(*run_args, size=8, iters=200):
    proc = loggp("run", "--testbed", NAME, "-n", "2", "--quiet", *run_args, "--",
                 "loggp-timing", "pingpong", str(size), str(iters))
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"halfrtt_us=([0-9.]+)", proc.stdout)
    assert m, proc.stdout
    return float(m.group(1))


@pytest.fixture
def clean():
    """Fails if anything of the test testbed is left, and removes it either way."""
    assert not ours(), f"left from an earlier run: {ours()}"
    yield
    left = ours()
    loggp("testbed", "down", "--name", NAME)
    assert not left, f"left behind: {left}"


@pytest.fixture(scope="module")
def two_hosts():
    proc = loggp("testbed", "up", "--hosts", "2", "--name", NAME)
    try:
        assert proc.returncode == 0, proc.stderr
        yield NAME
    finally:
        loggp("testbed", "down", "--name", NAME)
        assert not ours(), f"down left {ours()}"


@pytest.fixture
def no_qdiscs(two_hosts):
    yield
    loggp("testbed", "netem", "reset", "--name", NAME)


def test_up_creates_hosts_on_a_bridge_and_down_removes_them(clean):
    before = root_namespace_view()
    proc = loggp("testbed", "up", "--hosts", "3", "--name", NAME)
    assert proc.returncode == 0, proc.stderr
    sw = f"loggp-{NAME}-sw"
    assert ours() == {sw, *(f"loggp-{NAME}-h{i}" for i in range(3))}
    bridge = in_ns(sw, "-o", "link", "show", "type", "bridge").stdout
    assert "loggp-br" in bridge
    for i in range(3):
        ns = f"loggp-{NAME}-h{i}"
        addr = in_ns(ns, "-4", "-o", "addr", "show", "dev", "loggp-eth0").stdout
        assert f"inet 198.18.0.{i + 1}/24" in addr
        port = in_ns(sw, "-o", "link", "show", f"loggp-p{i}").stdout
        assert "master loggp-br" in port and "state UP" in port
        # Only the subnet itself is reachable: no default route, no other route.
        routes = in_ns(ns, "-4", "route", "show").stdout.strip().splitlines()
        assert routes == [f"198.18.0.0/24 dev loggp-eth0 proto kernel scope link src 198.18.0.{i + 1}"]
    assert root_namespace_view() == before, "the root namespace changed"
    status = json.loads(loggp("testbed", "status", "--json", "--name", NAME).stdout)
    assert status["up"] and [h["address"] for h in status["hosts"]] == ["198.18.0.1", "198.18.0.2", "198.18.0.3"]

    proc = loggp("testbed", "down", "--name", NAME)
    assert proc.returncode == 0, proc.stderr
    assert not ours()
    assert not testbed_hosts.run_dir(NAME).exists()
    assert root_namespace_view() == before
    again = loggp("testbed", "down", "--name", NAME)
    assert again.returncode == 0 and "not up" in again.stdout


def test_a_host_removed_by_hand_makes_the_testbed_incomplete(clean):
    assert loggp("testbed", "up", "--hosts", "2", "--name", NAME).returncode == 0
    subprocess.run(["ip", "netns", "del", f"loggp-{NAME}-h1"], check=True)
    status = json.loads(loggp("testbed", "status", "--json", "--name", NAME).stdout)
    assert status["up"] is False and len(status["hosts"]) == 1
    assert "INCOMPLETE" in loggp("testbed", "status", "--name", NAME).stdout
    proc = loggp("run", "--testbed", NAME, "-n", "1", "--", "true")
    assert proc.returncode == 2 and "not up" in proc.stderr
    assert loggp("testbed", "down", "--name", NAME).returncode == 0
    assert not ours()


@pytest.mark.parametrize("step", [1, 2, 5, 7, 11, 18])
def test_failed_up_leaves_nothing(clean, step):
    total = len(testbed.up_steps(NAME, 2, testbed_hosts.DEFAULT_SUBNET))
    assert total == 18
    before = root_namespace_view()
    proc = loggp("testbed", "up", "--hosts", "2", "--name", NAME, env={testbed_hosts.FAIL_AT_ENV: str(step)})
    assert proc.returncode == 1
    assert f"step {step} " in proc.stderr and "rolled back" in proc.stderr
    assert not ours()
    assert not testbed_hosts.run_dir(NAME).exists()
    assert root_namespace_view() == before


def test_teardown_takes_qdiscs_away_with_the_namespaces(clean):
    """A qdisc lives on an interface in our namespaces: the rollback takes it away with them."""
    ip_real = testbed_hosts.ip_command()
    steps = testbed.up_steps(NAME, 1, testbed_hosts.DEFAULT_SUBNET)
    # Run all real steps but the last, add a qdisc, then let the last step fail.
    for _, cmd in steps[:-1]:
        subprocess.run(cmd, check=True, capture_output=True)
    ns = f"loggp-{NAME}-h0"
    subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "loggp-eth0", "root", "tbf", "rate", "1mbit",
                    "burst", "4096", "limit", "65536"], check=True)
    assert testbed_hosts.qdiscs(ns)
    leftovers = testbed.teardown(NAME)
    assert leftovers == [] and not ours()
    assert subprocess.run([ip_real, "-n", ns, "link"], capture_output=True).returncode != 0


def test_bad_usage_exits_2(clean):
    for args, word in ((["up", "--hosts", "0"], "'0'"), (["up", "--hosts", "x"], "'x'"),
                       (["up", "--hosts", "2", "--name", "Bad_Name"], "Bad_Name"),
                       (["up", "--hosts", "2", "--subnet", "10.0.0.0/24"], "10.0.0.0/24"),
                       (["netem", "set", "--L", "50", "--name", NAME], "'50'"),
                       (["netem", "set", "--G", "1GB/s", "--name", NAME], "1GB/s")):
        proc = loggp("testbed", *args, "--name", NAME) if "--name" not in args else loggp("testbed", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert word in proc.stderr, (args, proc.stderr)
    assert not ours()
    proc = loggp("run", "--testbed", NAME, "-n", "2", "--", "true")
    assert proc.returncode == 2 and f"testbed '{NAME}' is not up" in proc.stderr


def test_without_root_a_clear_error(clean):
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("setpriv (util-linux) is needed to drop root for this test")
    as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", installed("loggp")]
    start = run([*as_nobody, "--help"])
    if start.returncode != 0:
        pytest.skip(f"the installation is not readable by uid 65534: {start.stderr.strip()[-200:]}")
    for args in (["testbed", "up", "--hosts", "2"], ["testbed", "down"], ["testbed", "netem", "reset"]):
        proc = run([*as_nobody, *args, "--name", NAME])
        assert proc.returncode == 1 and "need root" in proc.stderr, (args, proc.stderr)
    proc = run([*as_nobody, "run", "--testbed", NAME, "-n", "2", "--", "true"])
    assert proc.returncode == 2 and "needs root" in proc.stderr, proc.stderr
    assert not ours()


def test_ranks_run_in_different_namespaces(two_hosts):
    proc = loggp("run", "--testbed", NAME, "-n", "2", "--quiet", "--", "ip", "netns", "identify")
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == [f"loggp-{NAME}-h0", f"loggp-{NAME}-h1"]
    proc = loggp("run", "--testbed", NAME, "-n", "3", "--", "true")
    assert proc.returncode == 2 and "has 2 hosts" in proc.stderr


def test_pingpong_across_namespaces(two_hosts):
    proc = loggp("run", "--testbed", NAME, "-n", "2", "--", "loggp-timing", "pingpong", "8", "200")
    assert proc.returncode == 0, proc.stderr
    assert "provider tcp" in proc.stderr
    value = float(re.search(r"halfrtt_us=([0-9.]+)", proc.stdout).group(1))
    assert 0 < value < 20000


def test_rate_limit_from_G_slows_bulk_messages(two_hosts, no_qdiscs):
    """G = 0.5 us/B is a 2 MB/s link: a 64 KiB message takes at least 32.8 ms one way."""
    size = 65536
    base = halfrtt(size=size, iters=1)
    proc = loggp("testbed", "netem", "set", "--G", "0.5us/B", "--name", NAME)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(loggp("testbed", "netem", "show", "--json", "--name", NAME).stdout)
    assert shown["knobs"]["G_ns_per_byte"] == 500
    for host in shown["hosts"]:
        assert any("tbf" in q and "16Mbit" in q for q in host["qdiscs"]), host
    limited = halfrtt(size=size, iters=1)
    wire = size * 0.5
    assert limited > base
    assert 0.9 * wire < limited < 3 * wire + base, (base, limited)
    proc = loggp("testbed", "netem", "reset", "--name", NAME)
    assert proc.returncode == 0
    for _, ns, _ in testbed_hosts.discover(NAME)["hosts"]:
        assert testbed_hosts.qdiscs(ns) == []


def test_latency_from_netem_shows_in_halfrtt(two_hosts, no_qdiscs):
    ok, why = testbed_netem.netem_supported(f"loggp-{NAME}-h0")
    if not ok:
        proc = loggp("testbed", "netem", "set", "--L", "200us", "--name", NAME)
        assert proc.returncode == 1 and "no netem qdisc" in proc.stderr
        for _, ns, _ in testbed_hosts.discover(NAME)["hosts"]:
            assert testbed_hosts.qdiscs(ns) == [], "a refused set must change nothing"
        pytest.skip(f"kernel without sch_netem ({why}); the refusal was checked")
    base = min(halfrtt() for _ in range(3))
    proc = loggp("testbed", "netem", "set", "--L", "200us", "--name", NAME)
    assert proc.returncode == 0, proc.stderr
    for _, ns, _ in testbed_hosts.discover(NAME)["hosts"]:
        assert any(re.search(r"netem .*delay (200(\.0*)?us|0?\.20*ms)", q) for q in testbed_hosts.qdiscs(ns))
    delayed = min(halfrtt() for _ in range(3))
    assert 100 <= delayed - base <= 400, (base, delayed)


def test_calibrate_reports_L_from_both_methods(two_hosts, no_qdiscs, tmp_path):
    """The report's shape, and that each method adds latency. How exactly libloggp.so's L adds up
    is the apparatus tests' business; on a loaded 2-core machine probe runs only ever gain time, so
    only a lower bound is checked here."""
    report_path = tmp_path / "cal.json"
    proc = loggp("testbed", "calibrate", "--name", NAME, "--L", "200us", "--time-limit", "1s", "--repeat", "2",
                 "--json", str(report_path), timeout=240)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    assert report["schema"] == "loggp-testbed-calibrate/1" and report["repeat"] == 2
    rows = {row["method"]: row for row in report["rows"]}
    assert list(rows) == ["baseline", "libloggp", "netem"]
    assert rows["libloggp"]["set_L_us"] == 200 and len(rows["libloggp"]["all_L_us"]) == 2
    assert rows["libloggp"]["added_L_us"] >= 100, proc.stdout
    if "unavailable" in rows["netem"]:
        assert "netem" in rows["netem"]["unavailable"]
    else:
        assert rows["netem"]["added_L_us"] >= 100, proc.stdout
    for method in rows:
        assert re.search(rf"^{method}\s", proc.stdout, re.M), proc.stdout
    for _, ns, _ in testbed_hosts.discover(NAME)["hosts"]:
        assert testbed_hosts.qdiscs(ns) == [], "calibration must leave no qdisc"
    bad = loggp("testbed", "calibrate", "--name", NAME, "--L", "0us")
    assert bad.returncode == 2 and "'0us'" in bad.stderr


def test_rate_and_units():
    assert testbed_netem.rate_bytes_per_s(1.0) == 1_000_000_000
    assert testbed_netem.rate_bytes_per_s(8.0) == 125_000_000
    assert testbed_netem.parse_knobs("50us", "1.953ns/B") == {"L": 50_000, "G": pytest.approx(1.953)}
    with pytest.raises(testbed_hosts.UsageError):
        testbed_netem.parse_knobs(None, "50us")
    both = testbed_netem.qdisc_commands(50_000, 8.0)
    assert both[0][:7] == ["qdisc", "add", "dev", "loggp-eth0", "root", "handle", "1:"] and "125000000bps" in both[0]
    assert both[1][4:6] == ["parent", "1:1"] and "50.000us" in both[1]
    assert testbed_netem.qdisc_commands(50_000, 0)[0][4:8] == ["root", "handle", "10:", "netem"]
    assert testbed_netem.qdisc_commands(0, 0) == []
    def burst(g):
        cmd = testbed_netem.qdisc_commands(0, g)[0]
        return int(cmd[cmd.index("burst") + 1])
    assert burst(8.0) == 125_000        # 1 ms at 125 MB/s
    assert burst(500.0) == 4096         # at least two full frames
