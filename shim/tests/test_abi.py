"""ABI swap (loggp.shim.abi and `loggp run`): the ELF reader against readelf on
real binaries, the decision for each kind of program, the private loader
folder, and a program built with Debian's MPICH getting L on the libfabric
engine through `loggp run`, side by side with --no-abi-swap."""
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from loggp.shim import abi
from tests.testkit import (ROOT, built, cpu_share, figures, installed, load_reason, run, skip_if_busy,
                           tolerance)

TIMING_SOURCE = ROOT / "shim" / "tests" / "mpi" / "timing.c"
WHEEL_LIB = abi.wheel_lib_dir()


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Loader folders go under the test's own folder, never ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "loggp" / "abi"


def compiled(tmp_path_factory, compiler, source, name):
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} is not installed (Debian's mpich / openmpi-bin: see setup.sh)")
    out = tmp_path_factory.mktemp("abi-build") / name
    proc = subprocess.run([compiler, "-O2", "-w", "-o", str(out), str(source)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def debian_timing(tmp_path_factory):
    """The apparatus's timing program built with Debian's MPICH: links libmpich.so.12."""
    return compiled(tmp_path_factory, "mpicc.mpich", TIMING_SOURCE, "timing-debian")


@pytest.fixture(scope="module")
def fortran_program(tmp_path_factory):
    source = tmp_path_factory.mktemp("abi-src") / "sum.f90"
    source.write_text("program sum\n  use mpi\n  integer :: ierr, rank, x\n  call MPI_Init(ierr)\n"
                      "  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)\n  x = rank + 1\n"
                      "  call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)\n"
                      "  if (rank == 0) print '(a,i0)', 'sum=', x\n  call MPI_Finalize(ierr)\nend program\n")
    return compiled(tmp_path_factory, "mpif90.mpich", source, "sum-debian")


def readelf_dynamic(path):
    """(needed, rpath, runpath) as binutils' readelf reports them."""
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True, check=True).stdout
    found = {"NEEDED": [], "RPATH": [], "RUNPATH": []}
    for line in out.splitlines():
        for tag in found:
            if f"({tag})" in line:
                value = line.split("[", 1)[1].rsplit("]", 1)[0]
                found[tag] += value.split(":") if tag != "NEEDED" else [value]
    return found["NEEDED"], found["RPATH"], found["RUNPATH"]


# ---- the ELF reader ---------------------------------------------------------------

def test_elf_reader_agrees_with_readelf_on_real_binaries(debian_timing):
    if not shutil.which("readelf"):
        pytest.skip("binutils' readelf is not installed")
    wheel_program = built("shim/tests/loggp-test-timing")
    for path in (wheel_program, debian_timing, WHEEL_LIB / "libmpi.so.12", Path(shutil.which("sh"))):
        info = abi.read_elf(path)
        assert (info.needed, info.rpath, info.runpath) == readelf_dynamic(path), path
    assert "libmpi.so.12" in abi.read_elf(wheel_program).needed
    assert "libmpich.so.12" in abi.read_elf(debian_timing).needed
    assert abi.read_elf(WHEEL_LIB / "libmpi.so.12").runpath == ["$ORIGIN", "$ORIGIN/mpich"]


def test_elf_reader_refuses_damaged_and_foreign_files(tmp_path, debian_timing):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(abi.AbiError, match="not an ELF file"):
        abi.read_elf(text)
    truncated = tmp_path / "truncated"
    truncated.write_bytes(debian_timing.read_bytes()[:40])
    with pytest.raises(abi.AbiError, match="damaged"):
        abi.read_elf(truncated)


# ---- the decision -----------------------------------------------------------------

def test_the_wheels_own_program_is_left_alone():
    plan = abi.plan_for(str(built("shim/tests/loggp-test-timing")))
    assert plan.links == {} and plan.note == ""
    assert plan.library == str(WHEEL_LIB / "libmpi.so.12")


def test_an_mpich_abi_program_is_swapped_onto_the_wheel(debian_timing):
    plan = abi.plan_for(str(debian_timing))
    wheel = WHEEL_LIB / "libmpi.so.12"
    assert plan.links == {"libmpich.so.12": wheel, "libmpi.so.12": wheel}
    assert "ABI swap" in plan.note and "libmpich.so.12" in plan.note and "libfabric engine" in plan.note
    assert plan.library == f"{wheel} (ABI swap from libmpich.so.12)"


def test_fortran_bindings_come_from_the_system_or_a_clear_error(fortran_program):
    plan = abi.plan_for(str(fortran_program))
    fort = plan.links["libmpichfort.so.12"]
    assert fort.name == "libmpichfort.so.12" and not str(fort).startswith(str(WHEEL_LIB))
    assert plan.links["libmpich.so.12"] == WHEEL_LIB / "libmpi.so.12"
    with pytest.raises(abi.AbiError, match=r"libmpichfort\.so\.12 \(MPICH's Fortran bindings\).*"
                                           r"apt-get install libmpich12"):
        abi.plan_for(str(fortran_program), find_system=lambda soname, like: None)


def test_a_program_whose_rpath_pins_its_mpi_is_refused(tmp_path_factory, debian_timing):
    libdir = str(abi.find_system_library("libmpich.so.12", abi.read_elf(debian_timing)).parent)
    out = tmp_path_factory.mktemp("abi-rpath") / "timing-rpath"
    subprocess.run(["mpicc.mpich", "-O2", "-w", "-o", str(out), str(TIMING_SOURCE), f"-Wl,-rpath,{libdir}",
                    "-Wl,--disable-new-dtags"], check=True, capture_output=True)
    assert abi.read_elf(out).rpath == [libdir] and abi.read_elf(out).runpath == []
    with pytest.raises(abi.AbiError, match=r"libmpich\.so\.12 through its DT_RPATH.*--enable-new-dtags"):
        abi.plan_for(str(out))


def test_an_open_mpi_program_is_not_swapped(tmp_path_factory):
    program = compiled(tmp_path_factory, "mpicc.openmpi", TIMING_SOURCE, "timing-openmpi")
    plan = abi.plan_for(str(program))
    assert plan.links == {} and plan.open_mpi
    assert "Open MPI (libmpi.so.40)" in plan.note and "no ABI swap" in plan.note
    # Open MPI's predefined handles are symbols (ompi_mpi_comm_world), MPICH's are integers.
    assert abi.read_elf(program).open_mpi_symbols
    assert not abi.read_elf(built("shim/tests/loggp-test-timing")).open_mpi_symbols
    # Open MPI 1.10 called its library libmpi.so.12 too: same-length rename of the soname.
    old_style = program.with_name("timing-openmpi-1.10")
    old_style.write_bytes(program.read_bytes().replace(b"libmpi.so.40\0", b"libmpi.so.12\0"))
    old_style.chmod(0o755)
    assert abi.read_elf(old_style).needed.count("libmpi.so.12") == 1
    plan = abi.plan_for(str(old_style))
    assert plan.links == {} and plan.open_mpi and "Open MPI (libmpi.so.12)" in plan.note


def test_a_standard_abi_program_is_refused_clearly(tmp_path_factory):
    mpicc_abi = Path(sys.prefix, "bin", "mpicc_abi")
    if not mpicc_abi.exists():
        pytest.skip("the mpich wheel has no mpicc_abi")
    program = compiled(tmp_path_factory, str(mpicc_abi), TIMING_SOURCE, "timing-abi")
    with pytest.raises(abi.AbiError, match=r"MPI 5 standard ABI \(libmpi_abi\.so\.1\)"):
        abi.plan_for(str(program))


def test_scripts_and_programs_without_mpi_run_as_they_are(tmp_path):
    script = tmp_path / "wrapper"
    script.write_text("#!/bin/sh\nexec true\n")
    script.chmod(0o755)
    plan = abi.plan_for(str(script))
    assert plan.links == {} and plan.warning and "script" in plan.note
    plan = abi.plan_for("true")   # found on PATH, links only libc
    assert plan.links == {} and plan.note == ""


# ---- the private loader folder ------------------------------------------------------

def test_loader_folder_is_private_shared_and_checked(private_cache, debian_timing):
    links = abi.plan_for(str(debian_timing)).links
    folders = []
    threads = [threading.Thread(target=lambda: folders.append(abi.loader_folder(links))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(folders)) == 1 and len(folders) == 8     # concurrent runs agree on one folder
    folder = folders[0]
    assert folder.parent == private_cache
    assert (private_cache.stat().st_mode & 0o777) == 0o700
    assert sorted(os.listdir(private_cache)) == [folder.name]  # no temporary folder left behind
    assert os.readlink(folder / "libmpich.so.12") == str(WHEEL_LIB / "libmpi.so.12")
    (folder / "libmpich.so.12").unlink()
    os.symlink("/somewhere/else.so", folder / "libmpich.so.12")
    with pytest.raises(abi.AbiError, match="something other than the expected links"):
        abi.loader_folder(links)


def test_loader_folder_refuses_an_unsafe_cache(tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o777)
    with pytest.raises(abi.AbiError, match="mode 0700"):
        abi.loader_folder({"libmpich.so.12": WHEEL_LIB / "libmpi.so.12"}, root=open_dir)
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(abi.AbiError, match="not a directory"):
        abi.loader_folder({"libmpich.so.12": WHEEL_LIB / "libmpi.so.12"}, root=link)


# ---- through `loggp run` ------------------------------------------------------------

def loggp_run(*args, timeout=180):
    return run([installed("loggp"), "run", "-n", "2", *args], timeout=timeout)


def halfrtt(program, *args):
    found, stderr = halfrtt_figures(program, *args)
    return found["halfrtt_us"], stderr


def halfrtt_figures(program, *args):
    """(the pingpong's figures: halfrtt_us, cpu_s, wall_s; its stderr)."""
    proc = loggp_run(*args, "--", program, "pingpong", "8", "100")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = figures(proc)
    assert "halfrtt_us" in found, proc.stdout
    return found, proc.stderr


def latency_effect(program, *args, pairs=3):
    """(median over side-by-side pairs of how far L=50us moves the half round trip, the slack
    this machine's own figure allows: tests.testkit.tolerance of the plain runs' median, why the
    plain runs show a loaded machine or '')."""
    moved, plain, shares = [], [], []
    for _ in range(pairs):
        slow, base = halfrtt_figures(program, *args, "--L", "50us")[0], halfrtt_figures(program, *args, "--L", "0ns")[0]
        moved.append(slow["halfrtt_us"] - base["halfrtt_us"])
        plain.append(base["halfrtt_us"])
        shares += [cpu_share(slow), cpu_share(base)]
    return statistics.median(moved), tolerance(0.0, statistics.median(plain)), load_reason(plain, shares)


def judge_latency(program, *args, attempts=3):
    """L reached the messages; a machine loaded in every attempt skips, saying why."""
    for attempt in range(attempts):   # under load: measure again rather than widen
        effect, noise, why = latency_effect(program, *args)
        if about_L(effect, noise):
            return
    if why:
        pytest.skip(f"L=50us not judged: loaded in the last attempt ({why})")
    skip_if_busy("L=50us through the ABI swap")
    assert about_L(effect, noise), f"L=50us moved the half round trip by {effect:.1f} us (noise {noise:.1f})"


def about_L(effect, noise, L_us=50.0):
    """L reached the messages (not half, not twice), give or take the plain figure's own noise."""
    return 0.6 * L_us - noise <= effect <= 1.6 * L_us + noise


def test_a_debian_mpich_program_gets_latency_through_the_swap(debian_timing):
    _, stderr = halfrtt(debian_timing)
    assert "ABI swap" in stderr and "engine libfabric" in stderr, stderr
    judge_latency(debian_timing)


def test_no_abi_swap_keeps_the_programs_own_mpich(debian_timing):
    _, stderr = halfrtt(debian_timing, "--no-abi-swap")
    assert "ABI swap" not in stderr and "engine pmpi fallback" in stderr, stderr
    effect, _, _ = latency_effect(debian_timing, "--no-abi-swap", pairs=1)
    assert effect < 0.3 * 50, f"L moved a program on its own MPICH by {effect:.1f} us"


def test_dry_run_prints_the_loader_environment(debian_timing, private_cache, tmp_path):
    proc = loggp_run("--dry-run", "--profile", str(tmp_path / "prof"), "--", str(debian_timing))
    assert proc.returncode == 0, proc.stderr
    assignment = [w for w in proc.stdout.split() if w.startswith("LD_LIBRARY_PATH=")]
    assert assignment, proc.stdout
    parts = assignment[0].split("=", 1)[1].split(":")
    assert Path(parts[0]).parent == private_cache and (Path(parts[0]) / "libmpich.so.12").is_symlink()
    assert parts[1:3] == [str(WHEEL_LIB), str(WHEEL_LIB / "mpich")]
    plain = loggp_run("--dry-run", "--no-abi-swap", "--", str(debian_timing))
    assert "LD_LIBRARY_PATH" not in plain.stdout
    assert not (tmp_path / "prof").exists()   # a dry run writes no record


def test_the_run_records_its_libmpi_beside_the_profiles(debian_timing, tmp_path):
    proc = loggp_run("--quiet", "--profile", str(tmp_path / "prof"), "--", str(debian_timing), "pingpong", "8", "5")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "prof" / "libmpi.json").read_text())
    assert record["libmpi"] == f"{WHEEL_LIB / 'libmpi.so.12'} (ABI swap from libmpich.so.12)"
    assert record["links"]["libmpich.so.12"] == str(WHEEL_LIB / "libmpi.so.12")
    assert sorted(p.name for p in (tmp_path / "prof").iterdir()) == ["libmpi.json", "outcome.json",
                                                                     "profile.0.json", "profile.1.json"]


@pytest.fixture(scope="module")
def open_mpi_timing(tmp_path_factory):
    """The apparatus's timing program built with Debian's Open MPI: links libmpi.so.40."""
    if not shutil.which("mpirun.openmpi"):
        pytest.skip("Open MPI's mpirun is not installed (Debian: openmpi-bin, which ./setup.sh installs)")
    return compiled(tmp_path_factory, "mpicc.openmpi", TIMING_SOURCE, "timing-openmpi")


def test_an_open_mpi_program_runs_on_its_own_mpirun_through_the_ofi_mtl(open_mpi_timing):
    proc = loggp_run("--dry-run", "--L", "5us", "--", str(open_mpi_timing))
    assert proc.returncode == 0, proc.stderr
    assert "linked against Open MPI (libmpi.so.40): no ABI swap" in proc.stderr
    words = proc.stdout.split()
    assert "LD_LIBRARY_PATH" not in proc.stdout
    assert "FI_PROVIDER=tcp" in words and "FI_TCP_IFACE=lo" in words, proc.stdout
    command = proc.stdout[proc.stdout.index("mpirun"):]
    assert "--mca pml cm --mca mtl ofi" in command, command
    # Open MPI hands no environment to other hosts unless told: every variable is exported
    for name in ("LD_PRELOAD", "LOGGP_LATENCY", "FI_PROVIDER"):
        assert f"-x {name}" in command, command


def test_an_open_mpi_program_gets_latency_through_the_ofi_mtl(open_mpi_timing):
    _, stderr = halfrtt(open_mpi_timing)
    assert "engine libfabric, provider tcp" in stderr, stderr
    judge_latency(open_mpi_timing)


def test_an_open_mpi_program_gets_libloggp_ompi_with_its_profile(open_mpi_timing, tmp_path):
    proc = loggp_run("--profile", str(tmp_path / "prof"), "--", str(open_mpi_timing), "pingpong", "8", "5")
    assert proc.returncode == 0, proc.stderr
    assert "engine libfabric, provider tcp" in proc.stderr, proc.stderr
    assert sorted(p.name for p in (tmp_path / "prof").iterdir()) == ["libmpi.json", "outcome.json",
                                                                     "profile.0.json", "profile.1.json"]
    profile = json.loads((tmp_path / "prof" / "profile.0.json").read_text())
    assert profile["engine"].startswith("libfabric:tcp"), profile["engine"]
    dry = loggp_run("--dry-run", "--", str(open_mpi_timing))
    assert "libloggp-ompi.so" in dry.stdout, dry.stdout


def test_an_open_mpi_program_is_traced_with_32_bit_communicator_ids(open_mpi_timing, tmp_path):
    from loggp.analysis import trace
    proc = loggp_run("--quiet", "--trace", str(tmp_path / "tr"), "--", str(open_mpi_timing), "pingpong", "8", "5")
    assert proc.returncode == 0, proc.stderr
    traces = trace.read_folder(tmp_path / "tr")
    sends = [r for t in traces for r, n in zip(t.records, t.call_names()) if n == "MPI_Send"]
    assert sends
    # Open MPI's handles are pointers: the trace names communicators by their Fortran index
    # (MPI_COMM_WORLD is 0 there), not by a pointer's low half
    assert {int(r["comm_id"]) for r in sends} == {0}


def test_an_open_mpi_program_on_the_fallback_engine_keeps_ob1(open_mpi_timing):
    proc = loggp_run("--engine", "pmpi", "--o", "1us", "--", str(open_mpi_timing), "pingpong", "8", "5")
    assert proc.returncode == 0, proc.stderr
    assert "engine pmpi fallback" in proc.stderr, proc.stderr
    dry = loggp_run("--dry-run", "--engine", "pmpi", "--", str(open_mpi_timing))
    assert "mtl ofi" not in dry.stdout and "FI_PROVIDER" not in dry.stdout, dry.stdout


def test_an_open_mpi_program_cannot_have_shm(open_mpi_timing):
    proc = loggp_run("--provider", "shm", "--", str(open_mpi_timing))
    assert proc.returncode == 2 and "--provider shm: " in proc.stderr and "does not take" in proc.stderr


@pytest.mark.parametrize("flag, message", [
    ("engine", "--engine pmpi: .* no libloggp-ompi.so .*libopenmpi-dev"),
    ("profile", "--profile: .* no libloggp-ompi.so .*no profile or trace"),
    ("trace", "--trace: .* no libloggp-ompi.so .*no profile or trace"),
])
def test_without_libloggp_ompi_what_needs_it_is_refused(flag, message):
    from types import SimpleNamespace
    from loggp.shim.run import RunError, check_open_mpi
    args = SimpleNamespace(provider=None, engine="pmpi" if flag == "engine" else "auto",
                           profile="p" if flag == "profile" else None, trace="t" if flag == "trace" else None)
    with pytest.raises(RunError, match=message):
        check_open_mpi(args, ["./app"], full_library=False)
    check_open_mpi(args, ["./app"], full_library=True)  # libloggp-ompi.so has them all


def executable(path, data):
    path.write_bytes(data)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("make,message", [
    (lambda d: d / "absent", r"program '\S*absent' not found"),
    (lambda d: "loggp-no-such-program", r"program 'loggp-no-such-program' not found on PATH"),
    (lambda d: executable(d / "data.bin", b"\0\1\2\3" * 8), r"not an ELF file: neither an executable nor a #!"),
    (lambda d: executable(d / "short", b"\x7fELF\2\1\1"), r"damaged ELF file"),
    (lambda d: (d / "plain").write_text("x") and d / "plain", r"program '\S*plain' is not an executable file"),
])
def test_bad_programs_get_a_clear_error(tmp_path, make, message):
    proc = loggp_run("--", str(make(tmp_path)))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("loggp run: ") and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(message, proc.stderr), proc.stderr


# ---- the study runner records which libmpi ran ----------------------------------------

STUDY = """
name = "abi"
repetitions = 1
budget = "1s"
np = 2
timeout = "60s"
[launcher]
kind = "mpiexec"
[sweep]
L = ["20us"]
[[benchmark]]
name = "debian-pingpong"
command = ["{program}", "pingpong", "8", "50"]
runtime_regex = 'wall_s=(\\S+)'
"""


def test_a_study_runs_a_debian_program_on_the_libfabric_engine_and_says_so(tmp_path, debian_timing):
    study = tmp_path / "study.toml"
    study.write_text(STUDY.replace("{program}", str(debian_timing)))
    results = tmp_path / "res"
    proc = run([sys.executable, "-m", "loggp.cli", "study", "run", str(study), "--out", str(results),
                "--no-report"], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    conn = sqlite3.connect(results / "results.sqlite")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM runs")]
    conn.close()
    # one round of the zero-knob baseline, the armed baseline and the setting, and any rounds the
    # 1 s budget adds for precision: every run swapped alike
    assert {r["sweep"] for r in rows} == {"baseline", "armed", "L"}, rows
    swapped = f"{WHEEL_LIB / 'libmpi.so.12'} (ABI swap from libmpich.so.12)"
    for row in rows:
        assert row["status"] == "ok" and row["libmpi"] == swapped, row
        assert json.loads(row["profile"])["engine"].startswith("libfabric")
        with open(results / "runs" / str(row["plan_id"]) / "run.json") as f:
            assert json.load(f)["libmpi"] == swapped


def test_a_store_from_before_the_libmpi_column_stays_readable(tmp_path):
    from loggp.harness import store
    path = str(tmp_path / "old.sqlite")
    conn = store.connect(path, migrate_to=2)
    conn.execute("INSERT INTO plan (round, position, setting_key, benchmark, np, class, sweep, knobs)"
                 " VALUES (0, 0, 'k', 'cg', 2, 'S', 'baseline', '{}')")
    conn.execute("INSERT INTO runs (plan_id, round, benchmark, kind, class, np, sweep, knobs, o_s_ns, o_r_ns,"
                 " g_ns, G_ns_per_byte, L_ns, command, started_at, finished_at, wall_seconds, status)"
                 " VALUES (1, 0, 'cg', 'kernel', 'S', 2, 'baseline', '{}', 0, 0, 0, 0, 0, 'cmd', 't0', 't1',"
                 " 1.5, 'ok')")
    conn.close()
    s = store.Store(path)
    try:
        runs = s.runs()
        assert len(runs) == 1 and runs[0]["libmpi"] is None and runs[0]["wall_seconds"] == 1.5
    finally:
        s.close()
