"""Regions libfabric's shm provider left in /dev/shm for ranks that were killed: a later rank
given such a rank's PID renames its own region, and MPICH 5.0.2 hands its peers the new
name cut short, so the job hangs in MPI_Init or crashes. `loggp run` removes them first."""
import importlib.util
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

from loggp.shim import patterns_run, shm_regions
from tests.testkit import ROOT, built, installed, run

spec = importlib.util.spec_from_file_location("mpich_suite", ROOT / "shim" / "peer-suite" / "mpich_suite.py")
peer_suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer_suite)

UID = os.geteuid()
PLAIN = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": "shm"}


def gone_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_region_is_named_by_its_process_and_user():
    assert shm_regions.region_owner(f"4711:{UID}:0", UID) == 4711
    assert shm_regions.region_owner(f"4711:{UID}:2:123456789", UID) == 4711
    for other in (f"4711:{UID + 1}:0", "mpich_shm_6c35b16a_0", f"4711:{UID}", f"0:{UID}:0",
                  f"4711:{UID}:0:1:2", f"47a1:{UID}:0", f":{UID}:0", f"4711:{UID}:0:"):
        assert shm_regions.region_owner(other, UID) is None, other


def test_only_regions_of_processes_that_are_gone_are_stale():
    names = [f"10:{UID}:0", f"11:{UID}:0", f"12:{UID}:0:77", f"13:{UID + 1}:0", "mpich_shm_1_0"]
    assert shm_regions.stale(names, UID, alive=lambda pid: pid == 11) == [f"10:{UID}:0", f"12:{UID}:0:77"]


def test_removing_keeps_live_regions_other_files_and_older_ones(tmp_path):
    dead, alive = gone_pid(), os.getpid()
    for name in (f"{dead}:{UID}:0", f"{dead}:{UID}:1:42", f"{alive}:{UID}:0", "mpich_shm_1_0", "notes"):
        (tmp_path / name).write_bytes(b"x")
    old = tmp_path / f"{dead}:{UID}:2"
    old.write_bytes(b"x")
    os.utime(old, (1000, 1000))
    removed = shm_regions.remove_stale(tmp_path, since=2000)
    assert sorted(removed) == sorted([f"{dead}:{UID}:0", f"{dead}:{UID}:1:42"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{alive}:{UID}:0", "mpich_shm_1_0", "notes", old.name])
    assert shm_regions.remove_stale(tmp_path) == [old.name]
    assert shm_regions.remove_stale(tmp_path / "missing") == []


def live_region_header(folder):
    """The first 4 KiB of a running rank's region, its PID's offset in them, and the names
    the run left: a ping-pong is started and killed once a rank has written its PID."""
    before = set(os.listdir(folder))
    job = subprocess.Popen([installed("mpiexec"), "-n", "2", built("shim/tests/loggp-test-timing"),
                            "pingpong", "8", "100000000"], env={**os.environ, **PLAIN},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while job.poll() is None and time.monotonic() < deadline:
            for name in set(os.listdir(folder)) - before:
                pid = shm_regions.region_owner(name, UID)
                if pid is None:
                    continue
                header = Path(folder, name).read_bytes()[:4096]
                offsets = [i for i in range(0, len(header) - 3, 4) if struct.unpack_from("<i", header, i)[0] == pid]
                if offsets:
                    return header, offsets[0]
            time.sleep(0.01)
        pytest.fail("no rank of a plain ping-pong wrote its region within 120 s")
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()


def fails_without_removal(cmd):
    """Whether cmd, launched plain with the regions left, hangs or crashes (MPICH 5.0.2 over shm)."""
    job = subprocess.Popen([str(c) for c in cmd], env={**os.environ, **PLAIN}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return job.wait(timeout=15) != 0
    except subprocess.TimeoutExpired:
        return True
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()


def plant_regions_of_killed_ranks(folder, header, offset):
    """A killed rank's region under every other PID to come: of two ranks started one after
    the other, exactly one then finds a region named after it."""
    first, planted = gone_pid() + 1, []
    for pid in range(first, first + 400, 2):
        path = folder / f"{pid}:{UID}:0"
        if not path.exists():
            region = bytearray(header)
            struct.pack_into("<i", region, offset, pid)
            path.write_bytes(region)
            planted.append(path)
    return planted


def launched_by_the_tests(cmd, tmp_path):
    proc = run(cmd, env=PLAIN, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def launched_by_the_peer_suite(cmd, tmp_path):
    code, output, _ = peer_suite.run_one([str(c) for c in cmd], {**os.environ, **PLAIN}, 60, tmp_path)
    return code, output


def launched_by_the_bench(cmd, tmp_path):
    # `loggp bench`'s plain MPICH: loggp-patterns routed through shm without libloggp.so
    try:
        out = patterns_run.run_patterns([("pingpong", 8, 2)], preload=False, provider="shm", reps=1, timeout=60)
    except (RuntimeError, subprocess.TimeoutExpired) as err:
        return 1, str(err)
    return 0, f"halfrtt_us={out}"


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm")
@pytest.mark.parametrize("launch", [launched_by_the_tests, launched_by_the_peer_suite, launched_by_the_bench])
def test_a_plain_run_is_not_hung_by_the_region_of_a_killed_rank_with_its_pid(launch, tmp_path):
    folder = shm_regions.FOLDER
    header, offset = live_region_header(folder)
    pingpong = [installed("mpiexec"), "-n", "2", built("shim/tests/loggp-test-timing"), "pingpong", "8", "100"]
    planted = plant_regions_of_killed_ranks(folder, header, offset)
    try:
        if not fails_without_removal(pingpong):
            pytest.skip("this MPI's ranks started next to regions of killed ranks with their PIDs")
        for path in planted:  # PIDs of both parities would rename both ranks alike
            path.unlink(missing_ok=True)
        planted = plant_regions_of_killed_ranks(folder, header, offset)
        code, output = launch(pingpong, tmp_path)  # a plain launch removes them first
        assert code == 0 and "halfrtt_us=" in output, output
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
