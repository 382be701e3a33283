#!/usr/bin/env python3
"""MPICH's own test suite (test/mpi of Debian's mpich source package) as the
judge of the apparatus: every program that passes plain must pass under
libloggp.so with zero knobs and with nonzero knobs.

Steps: find the source that `./setup.sh peer-suite` fetched (Debian's mpich
source package, unpacked under the project's .peer-suite/); compile each chosen C test directly with the venv's mpicc and the
suite's support library (no configure run: we write its config headers);
read process counts, arguments and environments from the testlist files; run
every test plain (same libfabric routing as the apparatus), under `loggp run`
with zero knobs, and with nonzero knobs; print a table and write a JSON result.

Exit status: 0 when every test that passes plain also passes under the
apparatus (and at least one passes plain), 1 otherwise, 2 for bad usage,
3 when the source or a tool cannot be obtained.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from loggp.knobs import FLAGS
from loggp.knobs.command import positive_int
from loggp.knobs.vocabulary import SETTINGS, deprecated_spelling, setting_name
from loggp.knobs.files import write_text_atomic
from loggp.knobs.programs import which
from loggp.shim import shm_regions

DIRECTORIES = ("basic", "pt2pt", "coll", "rma", "comm", "datatype")
MODES = ("plain", "zero", "loggp")
DEFAULT_KNOBS = "o=2us,g=1us,G=0.5ns/B,L=5us"
ZERO_KNOBS = "o=0us,g=0us,G=0ns/B,L=0us"
KNOB_NAMES = SETTINGS

# test/mpi/basic has no testlist (the suite's top-level list comments it out),
# and its programs do not print " No Errors": they pass on exit status 0 with
# no "FAILURE" line. Process counts are the smallest each program is meant for.
# netpipe and adapt are bandwidth benchmarks, not tests.
BASIC_TESTLIST = """\
self 1
simple 2
sendrecv 2
srtest 3
patterns 2
wtime 1
"""

# The CI subset: quick programs across the six directories (np <= 4), each
# exercising a different path (eager, rendezvous, probe, Ssend, collectives,
# RMA fence/lock/atomics, communicator creation, derived datatypes).
SMALL_SUBSET = (
    "basic/sendrecv 2",
    "basic/patterns 2",
    "pt2pt/sendrecv3 2",
    "pt2pt/anyall 2",
    "pt2pt/mprobe 2",
    "pt2pt/rqstatus 2",
    "pt2pt/bsendfrag 2",
    "coll/allred 4 arg=-count=10",
    "coll/bcasttest 4",
    "coll/alltoallw_zeros 2",
    "coll/iallred 2",
    "coll/red_scat_block 4",
    "rma/test1 2",
    "rma/wintest 2",
    "rma/win_dynamic_rma_flush_get 2 arg=-count=1 arg=-op=fop",
    "rma/lockcontention 3",
    "rma/strided_acc_indexed 2",
    "rma/manyrma3 2",  # thousands of held accumulate completions: caught a hold-queue bug
    "comm/dup 2",
    "comm/cmsplit 4",
    "comm/comm_idup 2",
    "datatype/sendrecvt2 2",
    "datatype/tresized 2",
    "datatype/getpartelm 2",
)

MEMORY_LIMIT_GB = 2.0  # mem= tests above this are skipped: several run at once here


class UsageError(Exception):
    """Bad command-line input (exit 2)."""


class EnvironmentProblem(Exception):
    """Something outside the driver is missing (exit 3)."""


@dataclass
class TestCase:
    directory: str
    program: str
    np: int
    args: list = field(default_factory=list)
    env: list = field(default_factory=list)
    time_limit: int = 0
    xfail: str = ""
    mem: float = 0.0
    check: str = "no-errors"  # or "exit-status" for test/mpi/basic

    @property
    def ident(self):
        extra = [f"arg={a}" for a in self.args] + [f"env={e}" for e in self.env]
        return " ".join([f"{self.directory}/{self.program}", str(self.np), *extra])


# ---------------------------------------------------------------- parsing

def parse_testlist(text, directory, check="no-errors"):
    """Entries of a testlist: `program np [key=value ...]`. Lines naming a
    subdirectory (no np), comments and configure-substituted lines (@...@,
    disabled unless configured) are left out. Returns (tests, problems)."""
    tests, problems = [], []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("@"):
            continue
        words = line.split()
        if len(words) < 2:
            continue  # a subdirectory entry
        try:
            np_ = int(words[1])
        except ValueError:
            problems.append(f"{directory}/testlist line {number}: process count '{words[1]}' is not a number")
            continue
        test = TestCase(directory, words[0], np_, check=check)
        for word in words[2:]:
            key, eq, value = word.partition("=")
            if not eq:
                continue  # runtests ignores words that are not key=value
            if key == "arg":
                test.args.append(value)
            elif key == "env":
                test.env.append(value)
            elif key == "timeLimit" and value.isdigit():
                test.time_limit = int(value)
            elif key == "xfail":
                test.xfail = value
            elif key == "mem":
                try:
                    test.mem = float(value)
                except ValueError:
                    problems.append(f"{directory}/testlist line {number}: mem '{value}' is not a number")
        tests.append(test)
    return tests, problems


def parse_automake(text):
    """Variable assignments of a Makefile.am (with continuation lines):
    {name: value}. Only `name = value` and `name += value` forms."""
    joined = re.sub(r"\\\n", " ", text)
    variables = {}
    for line in joined.splitlines():
        match = re.match(r"^([A-Za-z0-9_]+)\s*(\+?=)\s*(.*)$", line)
        if not match:
            continue
        name, op, value = match.groups()
        value = value.split("#", 1)[0].strip()
        variables[name] = (variables.get(name, "") + " " + value).strip() if op == "+=" else value
    return variables


def build_recipe(program, variables):
    """(sources, cppflags, needs_dtypes, link_flags) for one program, from
    its Makefile.am's <program>_SOURCES, _CPPFLAGS and _LDADD."""
    canonical = re.sub(r"[^A-Za-z0-9_]", "_", program)
    sources = variables.get(f"{canonical}_SOURCES", f"{program}.c").split()
    sources = [s for s in sources if s.endswith(".c")]
    cppflags = [f for f in variables.get(f"{canonical}_CPPFLAGS", "").split() if f != "$(AM_CPPFLAGS)"]
    ldadd = variables.get(f"{canonical}_LDADD", "")
    needs_dtypes = "LDADDDATA" in ldadd or "libdtypes" in ldadd
    link_flags = [f for f in ldadd.split() if f.startswith("-l")]
    return sources, cppflags, needs_dtypes, link_flags


def parse_knobs(text):
    """'o=2us,g=1us' -> [('o', '2us'), ('g', '1us')]; values are checked by
    loggp-knobs later."""
    knobs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not value:
            raise UsageError(f"--knobs: '{item}' is not NAME=VALUE (e.g. {DEFAULT_KNOBS})")
        try:
            name, old = setting_name(name)
        except KeyError:
            raise UsageError(f"--knobs: unknown knob '{name}' (known: {', '.join(KNOB_NAMES)})") from None
        if old:
            print(f"mpich_suite: --knobs: {deprecated_spelling(old, name)}", file=sys.stderr)
        knobs.append((name, value))
    if not knobs:
        raise UsageError(f"--knobs: '{text}' gives no knob (e.g. {DEFAULT_KNOBS})")
    return knobs


def judge(test, returncode, output):
    """MPICH's rule: exit 0, a " No Errors" line and no other output (besides
    "Test Passed"). test/mpi/basic programs: exit 0 and no FAILURE line."""
    if returncode != 0:
        return "fail", f"exit status {returncode}"
    lines = [line for line in output.splitlines() if line.strip()]
    if test.check == "exit-status":
        bad = [line for line in lines if "FAILURE" in line]
        return ("fail", f"reported: {bad[0].strip()}") if bad else ("pass", "")
    if not any(re.match(r"^\s*No [Ee]rrors\s*$", line) for line in lines):
        return "fail", "no ' No Errors' line"
    unexpected = [line for line in lines
                  if not re.match(r"^\s*(No [Ee]rrors|Test Passed)\s*$", line)]
    if unexpected:
        return "fail", f"unexpected output: {unexpected[0].strip()[:200]}"
    return "pass", ""


# ---------------------------------------------------------------- source

def run_logged(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise EnvironmentProblem(f"`{shlex.join(cmd)}` failed (exit {proc.returncode}):\n"
                                 f"{(proc.stdout + proc.stderr).strip()[-2000:]}")
    return proc


def suite_root(cache):
    """test/mpi of the newest mpich source unpacked in the cache, or None."""
    candidates = sorted(cache.glob("mpich-*/test/mpi/pt2pt/testlist.in"))
    return candidates[-1].parents[1] if candidates else None


def obtain_source(cache, log):
    """test/mpi under the cache. The sources come from `./setup.sh peer-suite`
    (a private apt configuration, no change under /etc): this driver never runs apt."""
    root = suite_root(cache)
    if root:
        log(f"MPICH test sources: {root}")
        return root
    raise EnvironmentProblem(f"no MPICH test sources in {cache} (mpich-*/test/mpi): run `./setup.sh peer-suite` "
                             "once to fetch them, or unpack `apt-get source mpich` there yourself")


# ---------------------------------------------------------------- build

# The suite's configure would probe these; on Linux with the MPICH wheel
# (no Fortran, no GPU) the answers are fixed.
MPITESTCONF_H = """\
/* Written by loggp's mpich_suite.py in place of the suite's configure. */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_STDARG_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_DLFCN_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_STRDUP 1
#define HAVE_USLEEP 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE__BOOL 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define USE_LONG_DOUBLE_COMPLEX 1
#define HAVE_MPI_WIN_CREATE 1
%(integer16)s
#define STDC_HEADERS 1
#define POINTERINT_t MPI_Aint
#define SIZEOF_SHORT %(short)d
#define SIZEOF_INT %(int)d
#define SIZEOF_LONG %(long)d
#define SIZEOF_LONG_LONG %(long_long)d
#define SIZEOF_VOID_P %(void_p)d
#define SIZEOF_MPI_OFFSET 8
#define THREAD_PACKAGE_NONE 0
#define THREAD_PACKAGE_POSIX 1
#define THREAD_PACKAGE_SOLARIS 2
#define THREAD_PACKAGE_WIN 3
#define THREAD_PACKAGE_ARGOBOTS 4
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#endif
"""

DTPOOLSCONF_H = """\
/* Written by loggp's mpich_suite.py in place of dtpools' configure. */
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_LIMITS_H 1
#define HAVE_MEMSET 1
#define HAVE_STRDUP 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define STDC_HEADERS 1
"""

SUPPORT_SOURCES = ("util/mtest.c", "util/mtest_common.c", "util/mtest_single.c")


def type_sizes(mpicc, workdir):
    """sizeof of the C types the config header names, from the compiler."""
    probe = workdir / "sizes.c"
    probe.write_text('#include <stdio.h>\n#include <mpi.h>\n#ifdef MPI_INTEGER16\n#define HAS_I16 1\n#else\n'
                     '#define HAS_I16 0\n#endif\nint main(void){printf("%zu %zu %zu %zu %zu %d\\n",'
                     "sizeof(short),sizeof(int),sizeof(long),sizeof(long long),sizeof(void*),HAS_I16);"
                     "return 0;}\n")
    exe = workdir / "sizes"
    run_logged([mpicc, str(probe), "-o", str(exe)])
    values = [int(v) for v in run_logged([str(exe)]).stdout.split()]
    sizes = dict(zip(("short", "int", "long", "long_long", "void_p"), values))
    # mpi.h names MPI_INTEGER16 even without Fortran bindings; configure would say so
    sizes["integer16"] = "#define HAVE_MPI_INTEGER16 1" if values[5] else "/* no MPI_INTEGER16 */"
    return sizes


class Builder:
    """Compiles tests with mpicc into build_dir; the support library (mtest,
    dtypes, dtpools) once per mpicc."""

    def __init__(self, suite, build_dir, mpicc, log):
        self.suite = suite
        self.mpicc = mpicc
        self.log = log
        stamp = hashlib.sha256(f"{mpicc}:{os.stat(mpicc).st_mtime_ns}:{suite}".encode()).hexdigest()[:12]
        self.dir = build_dir / stamp  # a different mpicc or source gets fresh binaries
        self.gen = self.dir / "gen"
        self.makefiles = {}

    def includes(self):
        # dtpools' sources include "../dtpoolsconf.h": gen/dtp/../dtpoolsconf.h
        return ["-I", str(self.gen), "-I", str(self.gen / "dtp"), "-I", str(self.suite / "include"),
                "-I", str(self.suite / "dtpools" / "include")]

    def compile(self, cmd, what):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return f"{what}: {(proc.stdout + proc.stderr).strip()[-1500:]}"
        return ""

    def prepare(self, jobs=1):
        (self.gen / "dtp").mkdir(parents=True, exist_ok=True)
        self.libmtest = self.dir / "libmtest.a"
        self.libdtypes = self.dir / "libdtypes.a"
        # headers are rewritten only when their text changes, so that their
        # mtime tells which objects and programs are stale
        for name, text in (("mpitestconf.h", MPITESTCONF_H % type_sizes(self.mpicc, self.gen)),
                           ("dtpoolsconf.h", DTPOOLSCONF_H)):
            path = self.gen / name
            if not path.is_file() or path.read_text() != text:
                write_text_atomic(path, text)
        self.headers = [self.gen / "mpitestconf.h", self.gen / "dtpoolsconf.h"]
        newest_header = max(h.stat().st_mtime for h in self.headers)
        if all(a.is_file() and a.stat().st_mtime >= newest_header for a in (self.libmtest, self.libdtypes)):
            return
        sources = [self.suite / s for s in SUPPORT_SOURCES]
        sources += sorted((self.suite / "dtpools" / "src").glob("*.c"))
        sources.append(self.suite / "util" / "dtypes.c")
        (self.dir / "support").mkdir(parents=True, exist_ok=True)
        objects = [self.dir / "support" / (src.stem + ".o") for src in sources]
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            errors = pool.map(lambda pair: self.compile(
                [self.mpicc, "-O2", "-w", *self.includes(), "-c", str(pair[0]), "-o", str(pair[1])],
                f"support library {pair[0].name}"), zip(sources, objects))
            errors = [e for e in errors if e]
        if errors:
            raise EnvironmentProblem(f"cannot build the suite's support library: {errors[0]}")
        dtypes_obj = str(objects.pop())
        objects = [str(o) for o in objects]
        for archive, members in ((self.libdtypes, [str(dtypes_obj)]), (self.libmtest, objects)):
            tmp = archive.with_suffix(".tmp.a")
            tmp.unlink(missing_ok=True)
            run_logged(["ar", "rcs", str(tmp), *members])
            os.replace(tmp, archive)

    def makefile(self, directory):
        if directory not in self.makefiles:
            path = self.suite / directory / "Makefile.am"
            self.makefiles[directory] = parse_automake(path.read_text()) if path.is_file() else {}
        return self.makefiles[directory]

    def executable(self, test):
        return self.dir / "bin" / test.directory / test.program

    def build(self, test):
        """Compiles one program; returns an error text or ''."""
        exe = self.executable(test)
        sources, cppflags, needs_dtypes, link_flags = build_recipe(test.program, self.makefile(test.directory))
        paths = [self.suite / test.directory / s for s in sources]
        missing = [str(p.relative_to(self.suite)) for p in paths if not p.is_file()]
        if missing:
            return f"source missing: {', '.join(missing)}"
        inputs = paths + self.headers + [self.libmtest]
        if exe.is_file() and all(exe.stat().st_mtime >= p.stat().st_mtime for p in inputs):
            return ""
        exe.parent.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_name(f".{exe.name}.{os.getpid()}.tmp")
        libs = ([str(self.libdtypes)] if needs_dtypes else []) + [str(self.libmtest)]
        cmd = [self.mpicc, "-O2", "-w", *self.includes(), "-I", str(self.suite / test.directory), *cppflags,
               *map(str, paths), "-o", str(tmp), *libs, *link_flags, "-lm"]
        error = self.compile(cmd, "compile")
        if error:
            tmp.unlink(missing_ok=True)
            return error
        os.replace(tmp, exe)
        return ""


# ---------------------------------------------------------------- selection

def load_tests(suite):
    tests, problems = parse_testlist(BASIC_TESTLIST, "basic", check="exit-status")
    for directory in DIRECTORIES[1:]:
        path = suite / directory / "testlist.in"
        if not path.is_file():
            path = suite / directory / "testlist"
        if not path.is_file():
            problems.append(f"{directory}: no testlist in {suite / directory}")
            continue
        found, bad = parse_testlist(path.read_text(), directory)
        tests += found
        problems += bad
    return tests, problems


def select(tests, subset, max_np, directories, skip_longer_than=0):
    """(chosen, skipped) where skipped is [(test, reason)]."""
    chosen, skipped = [], []
    if subset == "small":
        by_ident = {t.ident: t for t in tests}
        for ident in SMALL_SUBSET:
            if ident not in by_ident:
                raise EnvironmentProblem(f"small subset entry '{ident}' is not in this source's testlists")
            chosen.append(by_ident[ident])
        return [t for t in chosen if t.directory in directories], skipped
    seen = set()
    for test in tests:
        if test.directory not in directories:
            continue
        if test.ident in seen:
            continue  # a few lists repeat a line verbatim
        seen.add(test.ident)
        if test.np > max_np:
            skipped.append((test, f"needs {test.np} ranks (> --max-np {max_np})"))
        elif skip_longer_than and test.time_limit > skip_longer_than:
            skipped.append((test, f"testlist timeLimit={test.time_limit} s > --timeout {skip_longer_than} "
                                  "(--skip-long)"))
        elif test.mem > MEMORY_LIMIT_GB:
            skipped.append((test, f"needs {test.mem} GB (mem=, > {MEMORY_LIMIT_GB} GB)"))
        else:
            chosen.append(test)
    return chosen, skipped


# ---------------------------------------------------------------- running

def routing_env(provider):
    env = {"MPIR_CVAR_CH4_NETMOD": "ofi", "MPIR_CVAR_NOLOCAL": "1", "FI_PROVIDER": provider}
    if provider == "tcp":
        env["FI_TCP_IFACE"] = "lo"
    return env


def knob_flags(knobs):
    flags = []
    for name, value in knobs:
        flags += [FLAGS[name], value]
    return flags


def command_for(mode, test, exe, tools, knobs, provider):
    program = [str(exe), *test.args]
    if mode == "plain":
        return [tools["mpiexec"], "-n", str(test.np), *program]
    chosen = ZERO_KNOBS if mode == "zero" else knobs
    return [tools["loggp"], "run", "-n", str(test.np), "--quiet", "--provider", provider,
            *knob_flags(parse_knobs(chosen) if isinstance(chosen, str) else chosen), "--", *program]


def run_one(cmd, env, timeout, cwd):
    """Runs a command in its own process group, killing the whole group on timeout.
    Returns (returncode or None on timeout, output, seconds)."""
    shm_regions.remove_stale()  # a killed rank's region hangs a later rank given its PID
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
        return proc.returncode, output, time.monotonic() - start
    except subprocess.TimeoutExpired:
        # mpiexec cleans up its ranks on SIGTERM (they run in sessions of
        # their own); SIGKILL the group only if it does not exit.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
        return None, output, time.monotonic() - start


def run_test(test, exe, modes, tools, knobs, provider, timeout, base_env, workdir, plain_retries=1):
    """Runs one test in each mode; the apparatus modes only when plain passes
    (a program failing plain is excluded, not judged). A plain failure is
    retried: a flake under load must not hide the program from the judge.
    Apparatus failures are never retried."""
    outcomes = {}
    env = dict(base_env)
    env.update(routing_env(provider))
    for item in test.env:
        name, _, value = item.partition("=")
        env[name] = value
    limit = max(timeout, test.time_limit)
    rundir = workdir / test.directory
    rundir.mkdir(parents=True, exist_ok=True)
    for mode in modes:
        if mode != "plain" and outcomes.get("plain", {}).get("status") != "pass":
            outcomes[mode] = {"status": "not-run", "detail": "failed plain"}
            continue
        cmd = command_for(mode, test, exe, tools, knobs, provider)
        attempts = 1 + (plain_retries if mode == "plain" else 0)
        earlier = []
        for attempt in range(attempts):
            returncode, output, seconds = run_one(cmd, env, limit, rundir)
            if returncode is None:
                status, detail = "timeout", f"no exit within {limit} s"
            else:
                status, detail = judge(test, returncode, output)
            if status == "pass" or attempt == attempts - 1:
                break
            earlier.append(f"{status}: {detail}")
        outcomes[mode] = {"status": status, "detail": detail, "seconds": round(seconds, 2),
                          "command": shlex.join(cmd),
                          "output": output[-3000:] if status != "pass" else ""}
        if earlier:
            outcomes[mode]["earlier_attempts"] = earlier
    return outcomes


# ---------------------------------------------------------------- report

def summarize(results, directories):
    summary = {}
    for directory in directories + ("total",):
        rows = [r for r in results if directory in ("total", r["directory"])]
        entry = {"tests": len(rows), "programs": len({r["program"] for r in rows})}
        for mode in MODES:
            entry[mode] = {s: sum(1 for r in rows if r["outcomes"].get(mode, {}).get("status") == s)
                           for s in ("pass", "fail", "timeout", "not-run", "build-failed")}
        entry["regressions"] = sum(1 for r in rows if r["regression"])
        summary[directory] = entry
    return summary


def table(summary):
    lines = [f"{'directory':10} {'tests':>5} {'progs':>5} " +
             " ".join(f"{m + ' pass/fail':>16}" for m in MODES) + f" {'regress':>8}"]
    for name, entry in summary.items():
        cells = []
        for mode in MODES:
            counts = entry[mode]
            failed = counts["fail"] + counts["timeout"] + counts["build-failed"]
            cells.append(f"{counts['pass']:>7}/{failed:<8}")
        lines.append(f"{name:10} {entry['tests']:>5} {entry['programs']:>5} " + " ".join(cells) +
                     f" {entry['regressions']:>8}")
    return "\n".join(lines)


def library_fingerprint(loggp_tool):
    """sha256 and mtime of the libloggp.so `loggp run` preloads: the lead may
    reinstall it during a long run, which would mix two versions."""
    override = os.environ.get("LOGGP_LIBRARY")
    lib = Path(override) if override else Path(loggp_tool).resolve().parent.parent / "lib" / "libloggp.so"
    if not lib.is_file():
        return {"path": str(lib), "sha256": None}
    digest = hashlib.sha256(lib.read_bytes()).hexdigest()
    stamp = datetime.datetime.fromtimestamp(lib.stat().st_mtime, datetime.timezone.utc)
    return {"path": str(lib), "sha256": digest, "mtime": stamp.isoformat(timespec="seconds")}


def load_resume(path, chosen, args, library):
    """Results of `path` for the chosen tests, if it was made with the same
    knobs, provider and libloggp.so; anything else is a usage error."""
    try:
        previous = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise UsageError(f"--resume '{path}': cannot read a result ({err})") from None
    mismatches = [name for name, mine, theirs in (
        ("knobs", args.knobs, previous.get("knobs", {}).get("loggp")),
        ("provider", args.provider, previous.get("provider")),
        ("libloggp.so", library.get("sha256"), previous.get("library", {}).get("sha256")))
        if mine != theirs]
    if mismatches:
        raise UsageError(f"--resume '{path}': made with a different {', '.join(mismatches)}")
    wanted = {t.ident for t in chosen}
    return [r for r in previous.get("tests", []) if r.get("id") in wanted]


def find_tool(name):
    # The venv's own first: Debian's mpich/openmpi put mpicc and mpiexec in /usr/bin too.
    path = which(name)
    if not path:
        raise EnvironmentProblem(f"'{name}' is not on PATH (put the loggp venv's bin/ first on PATH)")
    return path


def parser():
    default_cache = Path(__file__).resolve().parents[2] / ".peer-suite"
    p = argparse.ArgumentParser(prog="mpich_suite.py", allow_abbrev=False,
                                description="Run MPICH's test/mpi programs plain and under libloggp.so.")
    p.add_argument("--subset", choices=("small", "full"), default="small",
                   help="small: the CI set (~20 quick programs); full: every testlist entry of "
                        f"{', '.join(DIRECTORIES)} within --max-np")
    p.add_argument("--jobs", type=positive_int, default=1, help="tests run at once (and compile jobs)")
    p.add_argument("--timeout", type=positive_int, default=120,
                   help="seconds per run (a testlist timeLimit above it wins); default 120")
    p.add_argument("--out", default="peer-suite-result.json", help="JSON result file (written atomically)")
    p.add_argument("--cache-dir", type=Path, default=Path(os.environ.get("LOGGP_MPICH_CACHE", default_cache)),
                   help="where the mpich source is unpacked and tests are built (default %(default)s, "
                        "or $LOGGP_MPICH_CACHE)")
    p.add_argument("--build-dir", type=Path,
                   help="where the tests are compiled (default: build/ in the cache directory)")
    p.add_argument("--knobs", default=DEFAULT_KNOBS, help="nonzero knobs for the third run (default %(default)s)")
    p.add_argument("--provider", choices=("shm", "tcp"), default="shm", help="libfabric provider (default shm)")
    p.add_argument("--max-np", type=positive_int, default=4, help="skip tests needing more ranks (default 4)")
    p.add_argument("--dirs", default=",".join(DIRECTORIES),
                   help="comma-separated test directories (default all six)")
    p.add_argument("--match", help="only tests whose id contains this text")
    p.add_argument("--resume", metavar="RESULT.json",
                   help="reuse the tests already done in this (partial) result of the same knobs, provider "
                        "and libloggp.so; run only the rest")
    p.add_argument("--skip-long", action="store_true",
                   help="skip tests whose testlist timeLimit exceeds --timeout (otherwise timeLimit wins)")
    p.add_argument("--plain-retries", type=int, choices=range(0, 4), default=1, metavar="{0..3}",
                   help="reruns of a plain failure before the test is excluded (default 1)")
    return p


def check_arguments(args):
    """The knobs (both sets checked by loggp-knobs), directories, output file and tools, or UsageError."""
    knobs = parse_knobs(args.knobs)
    directories = tuple(d for d in (x.strip() for x in args.dirs.split(",")) if d)
    unknown = [d for d in directories if d not in DIRECTORIES]
    if unknown or not directories:
        raise UsageError(f"--dirs: unknown directory '{(unknown or [args.dirs])[0]}' "
                         f"(known: {', '.join(DIRECTORIES)})")
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"--out '{out}' is a directory")
    if not out.resolve().parent.is_dir():
        raise UsageError(f"--out '{out}': directory {out.resolve().parent} does not exist")
    tools = {name: find_tool(name) for name in ("mpicc", "mpiexec", "loggp", "loggp-knobs")}
    for zero_or_not in (knobs, parse_knobs(ZERO_KNOBS)):
        check = subprocess.run([tools["loggp-knobs"], "env", "--format", "sh", *knob_flags(zero_or_not)],
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise UsageError(f"--knobs '{args.knobs}': {check.stderr.strip()}")
    return knobs, directories, out, tools


def select_tests(args, suite, directories, log):
    """The testlist entries to run and those left out with a reason, or UsageError when none is left."""
    all_tests, problems = load_tests(suite)
    for problem in problems:
        log(f"warning: {problem}")
    chosen, skipped = select(all_tests, args.subset, args.max_np, directories,
                             args.timeout if args.skip_long else 0)
    if args.match:
        chosen = [t for t in chosen if args.match in t.ident]
    if not chosen:
        raise UsageError("no test selected (check --dirs, --match, --max-np)")
    return chosen, skipped


def build_programs(args, suite, cache, to_run, mpicc, log):
    """Builds the support library and every program to run; the builder and each program's build error."""
    build_dir = args.build_dir.expanduser().resolve() if args.build_dir else cache / "build"
    builder = Builder(suite, build_dir, mpicc, log)
    log(f"building the support library and {len({(t.directory, t.program) for t in to_run})} programs "
        f"in {builder.dir}")
    builder.prepare(args.jobs)
    programs = sorted({(t.directory, t.program): t for t in to_run}.items())
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        build_errors = dict(zip([key for key, _ in programs],
                                pool.map(lambda item: builder.build(item[1]), programs)))
    return builder, build_errors


def clean_environment(workdir):
    """This process's environment with a private knob file and none of the user's loggp settings."""
    base_env = dict(os.environ)
    base_env["LOGGP_KNOB_FILE"] = str(workdir / "knobs")  # a user's live knob file must not leak in
    for name in ("LOGGP_OS", "LOGGP_OR", "LOGGP_GAP", "LOGGP_GAP_PER_BYTE", "LOGGP_LATENCY",
                 "LOGGP_PROFILE", "LOGGP_QUIET", "LOGGP_ENGINE"):
        base_env.pop(name, None)
    return base_env


@dataclass
class SuiteRun:
    """What the result file says about the run besides the tests' results."""
    args: argparse.Namespace
    argv: list
    suite: Path
    tools: dict
    directories: tuple
    chosen: list
    skipped: list
    library_before: dict
    started: datetime.datetime = field(default_factory=lambda: datetime.datetime.now(datetime.timezone.utc))

    def document(self, results, complete):
        order = {t.ident: i for i, t in enumerate(self.chosen)}
        args = self.args
        results = sorted(results, key=lambda r: order[r["id"]])
        return {
            "complete": complete, "resumed_from": args.resume,
            "started": self.started.isoformat(timespec="seconds"),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"host": platform.node(), "system": platform.platform(), "cpus": os.cpu_count()},
            "command": shlex.join([Path(sys.argv[0]).name, *(self.argv if self.argv is not None else sys.argv[1:])]),
            "source": str(self.suite.parents[1].name), "mpicc": self.tools["mpicc"], "provider": args.provider,
            "knobs": {"zero": ZERO_KNOBS, "loggp": args.knobs}, "subset": args.subset,
            "max_np": args.max_np, "timeout": args.timeout, "library": self.library_before,
            "library_changed_during_run": library_fingerprint(self.tools["loggp"]) != self.library_before,
            "summary": summarize(results, self.directories),
            "excluded_plain_failures": [{"id": r["id"], "status": r["outcomes"]["plain"]["status"],
                                         "detail": r["outcomes"]["plain"]["detail"]}
                                        for r in results if r["outcomes"]["plain"]["status"] != "pass"],
            "regressions": [r["id"] for r in results if r["regression"]],
            "skipped": [{"id": t.ident, "reason": reason} for t, reason in self.skipped],
            "tests": results,
        }


def run_tests(run, to_run, work, reused, out, log):
    """Runs the tests `jobs` at a time; the result file is rewritten after each, so a partial
    result survives an interrupted long run. Returns every result, the reused ones first."""
    results = list(reused)
    if results:
        log(f"resuming: {len(results)} tests reused from {run.args.resume}")
    already = len({r["id"] for r in reused})
    with concurrent.futures.ThreadPoolExecutor(run.args.jobs) as pool:
        futures = {pool.submit(work, t): t for t in to_run}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            test = futures[future]
            outcomes = future.result()
            regression = outcomes["plain"]["status"] == "pass" and any(
                outcomes[m]["status"] != "pass" for m in MODES[1:])
            results.append({"id": test.ident, "directory": test.directory, "program": test.program,
                            "np": test.np, "args": test.args, "env": test.env, "xfail": test.xfail,
                            "outcomes": outcomes, "regression": regression})
            marks = " ".join(f"{m}={outcomes[m]['status']}" for m in MODES)
            log(f"[{done + already}/{len(run.chosen)}] {test.ident}: {marks}" + ("  <-- REGRESSION" if regression else ""))
            write_text_atomic(out, json.dumps(run.document(results, False), indent=1) + "\n")
    return results


def report(final, out, skipped, log):
    """Writes the complete result, prints the table and each regression; the exit code."""
    summary = final["summary"]
    if final["library_changed_during_run"]:
        log(f"warning: {final['library']['path']} changed during the run: results mix two versions, rerun")
    plain_passes = summary["total"]["plain"]["pass"]
    regressions = [r for r in final["tests"] if r["regression"]]
    write_text_atomic(out, json.dumps(final, indent=1) + "\n")
    print(table(summary))
    if skipped:
        print(f"skipped {len(skipped)} testlist entries (see 'skipped' in {out})")
    for r in regressions:
        bad = {m: r["outcomes"][m] for m in MODES[1:] if r["outcomes"][m]["status"] != "pass"}
        for mode, outcome in bad.items():
            print(f"REGRESSION {r['id']} [{mode}]: {outcome['status']} ({outcome['detail']})\n"
                  f"  command: {outcome.get('command', '')}")
    print(f"result: {out}")
    if plain_passes == 0:
        log("no test passed plain: nothing was judged")
        return 1
    return 1 if regressions else 0


def main(argv=None):
    try:
        args = parser().parse_args(argv)
    except SystemExit as exit_:
        return exit_.code
    log = lambda text: print(f"mpich_suite: {text}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        knobs, directories, out, tools = check_arguments(args)
        cache = args.cache_dir.expanduser().resolve()
        suite = obtain_source(cache, log)
        chosen, skipped = select_tests(args, suite, directories, log)
        run = SuiteRun(args, argv, suite, tools, directories, chosen, skipped, library_fingerprint(tools["loggp"]))
        reused = load_resume(args.resume, chosen, args, run.library_before) if args.resume else []
        done_ids = {r["id"] for r in reused}
        to_run = [t for t in chosen if t.ident not in done_ids]
        builder, build_errors = build_programs(args, suite, cache, to_run, tools["mpicc"], log)
        workdir = Path(tempfile.mkdtemp(prefix="mpich-suite-"))
        base_env = clean_environment(workdir)

        def work(test):
            error = build_errors[(test.directory, test.program)]
            if error:
                return {mode: {"status": "build-failed" if mode == "plain" else "not-run", "detail": error}
                        for mode in MODES}
            return run_test(test, builder.executable(test), MODES, tools, knobs, args.provider, args.timeout,
                            base_env, workdir, args.plain_retries)

        results = run_tests(run, to_run, work, reused, out, log)
        shutil.rmtree(workdir, ignore_errors=True)
        return report(run.document(results, True), out, skipped, log)
    except UsageError as err:
        print(f"mpich_suite: {err}", file=sys.stderr)
        return 2
    except EnvironmentProblem as err:
        print(f"mpich_suite: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
