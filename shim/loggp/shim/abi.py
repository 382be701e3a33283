"""ABI swap for `loggp run`: which MPI library a program was linked against
(its ELF DT_NEEDED entries), and a private loader folder that lets a program
built against another MPICH-ABI library run on the venv's ch4:ofi MPICH, so
the libfabric engine applies to it.

MPICH's ABI (libmpi.so.12, libmpich.so.12: integer handles) is shared by
MPICH 3.x-5.x, Intel MPI, MVAPICH and Cray MPICH; the loader is simply handed
the wheel's libmpi.so.12 under the soname the program asks for. Open MPI's
handles are pointers (libmpi.so.40), so its programs are never swapped: they
run on Open MPI's own mpirun (open_mpi.py)."""
import hashlib
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from loggp.knobs.files import write_text_atomic
from loggp.knobs.programs import which


class AbiError(Exception):
    """A program the ABI swap cannot handle, or a missing piece, reported as is."""


# ---- ELF dynamic section ------------------------------------------------------

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 15, 29


@dataclass
class ElfInfo:
    bits: int                  # 32 or 64
    machine: int               # e_machine
    needed: list = field(default_factory=list)
    rpath: list = field(default_factory=list)
    runpath: list = field(default_factory=list)
    open_mpi_symbols: bool = False   # imports ompi_* (Open MPI's predefined handles)


def read_elf(path):
    """DT_NEEDED, DT_RPATH and DT_RUNPATH of an ELF file; AbiError if the file is
    not ELF or is damaged. A static executable has no DT_NEEDED."""
    try:
        with open(path, "rb") as f:
            return _read_elf(f, path)
    except OSError as err:
        raise AbiError(f"cannot read '{path}': {err.strerror}") from None
    except struct.error:
        raise AbiError(f"'{path}' is a damaged ELF file (truncated headers)") from None


def _read_elf(f, path):
    ident = f.read(16)
    if ident[:4] != b"\x7fELF":
        raise AbiError(f"'{path}' is not an ELF file")
    if ident[4] not in (1, 2) or ident[5] not in (1, 2):
        raise AbiError(f"'{path}' is an ELF file of unknown class or byte order")
    bits = 32 if ident[4] == 1 else 64
    order = "<" if ident[5] == 1 else ">"
    header = f.read(48 if bits == 64 else 36)
    machine = struct.unpack_from(order + "H", header, 2)[0]
    if bits == 64:
        phoff, = struct.unpack_from(order + "Q", header, 16)
        phentsize, phnum = struct.unpack_from(order + "HH", header, 38)
        ph_format, fields = order + "IIQQQQQQ", ("type", "flags", "offset", "vaddr", "paddr", "filesz")
    else:
        phoff, = struct.unpack_from(order + "I", header, 12)
        phentsize, phnum = struct.unpack_from(order + "HH", header, 26)
        ph_format, fields = order + "IIIIII", ("type", "offset", "vaddr", "paddr", "filesz", "memsz")
    segments = []
    for i in range(phnum):
        f.seek(phoff + i * phentsize)
        values = struct.unpack(ph_format, f.read(struct.calcsize(ph_format)))
        segments.append(dict(zip(fields, values)))
    info = ElfInfo(bits, machine)
    dynamic = [s for s in segments if s["type"] == PT_DYNAMIC]
    if not dynamic:
        return info
    entry = order + ("qQ" if bits == 64 else "iI")
    size = struct.calcsize(entry)
    f.seek(dynamic[0]["offset"])
    raw = f.read(dynamic[0]["filesz"])
    entries = []
    for pos in range(0, len(raw) - size + 1, size):
        tag, value = struct.unpack_from(entry, raw, pos)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    tags = dict(entries)
    if DT_STRTAB not in tags:
        raise AbiError(f"'{path}' has a dynamic section without a string table")
    strtab = _file_offset(segments, tags[DT_STRTAB], path)
    f.seek(strtab)
    strings = f.read(tags.get(DT_STRSZ, 1 << 20))
    info.open_mpi_symbols = b"\0ompi_mpi_" in strings

    def text(offset):
        end = strings.find(b"\0", offset)
        if offset >= len(strings) or end < 0:
            raise AbiError(f"'{path}' has a dynamic entry outside its string table")
        return strings[offset:end].decode("utf-8", "replace")

    for tag, value in entries:
        if tag == DT_NEEDED:
            info.needed.append(text(value))
        elif tag in (DT_RPATH, DT_RUNPATH):
            (info.rpath if tag == DT_RPATH else info.runpath).extend(p for p in text(value).split(":") if p)
    return info


def _file_offset(segments, vaddr, path):
    """The file offset of a virtual address (string tables are given as addresses)."""
    for s in segments:
        if s["type"] == PT_LOAD and s["vaddr"] <= vaddr < s["vaddr"] + s["filesz"]:
            return s["offset"] + vaddr - s["vaddr"]
    raise AbiError(f"'{path}' has a string table outside its loadable segments")


# ---- which MPI a program uses ---------------------------------------------------

MPICH_CORE = ("libmpi.so.12", "libmpich.so.12")
MPICH_COMPANIONS = {  # bindings the wheel may lack; either name serves (Debian renames them)
    "libmpifort.so.12": ("Fortran", ("libmpifort.so.12", "libmpichfort.so.12")),
    "libmpichfort.so.12": ("Fortran", ("libmpichfort.so.12", "libmpifort.so.12")),
    "libmpicxx.so.12": ("C++", ("libmpicxx.so.12", "libmpichcxx.so.12")),
    "libmpichcxx.so.12": ("C++", ("libmpichcxx.so.12", "libmpicxx.so.12")),
}
STANDARD_ABI = "libmpi_abi.so.1"
DEBIAN_COMPANION_PACKAGE = "libmpich12"
OPEN_MPI = re.compile(r"libmpi\.so\.(?!12$)\d+$|libmpi_(mpifh|usempi|usempif08|cxx|java)")
ANY_MPI = re.compile(r"libmpi|libmpich")


@dataclass
class Plan:
    """What `loggp run` does about a program's MPI library."""
    links: dict       # soname -> library the private folder points it at ({}: no swap)
    library: str      # which libmpi the ranks use, as a study records it
    note: str         # the line `loggp run` prints ('' for nothing to say)
    warning: bool = False  # print the note even with --quiet
    open_mpi: bool = False  # started by Open MPI's own mpirun, through its ofi MTL (loggp.shim.open_mpi)


def wheel_lib_dir():
    """Where the venv's mpich wheel puts libmpi.so.12 (its helpers sit in mpich/ below)."""
    return Path(sys.prefix, "lib")


def resolve_program(name, path_env=None):
    """The file `name` stands for: as given with a slash, else the venv's bin/ first,
    then PATH (loggp.knobs.programs.which; `loggp run` starts that file)."""
    if "/" in name:
        path = Path(name)
    else:
        found = which(name, path_env)
        if not found:
            raise AbiError(f"program '{name}' not found on PATH")
        path = Path(found)
    if not path.exists():
        raise AbiError(f"program '{name}' not found")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise AbiError(f"program '{name}' is not an executable file")
    return path


def is_script(path):
    with open(path, "rb") as f:
        return f.read(2) == b"#!"


def plan_for(program, wheel_lib=None, path_env=None, find_system=None):
    """The ABI decision for `program` (argv[0] as given to `loggp run`)."""
    wheel_lib = Path(wheel_lib or wheel_lib_dir())
    find_system = find_system or find_system_library
    path = resolve_program(program, path_env)
    try:
        script = is_script(path)
    except OSError as err:
        raise AbiError(f"cannot read '{program}': {err.strerror}") from None
    if script:
        return Plan({}, "unknown (a script)", f"{program} is a script, so its MPI library is unknown: no ABI "
                    "swap (give loggp run the MPI program itself to have it swapped)", warning=True)
    try:
        elf = read_elf(path)
    except AbiError as err:
        raise AbiError(f"{err}: neither an executable nor a #! script") from None
    mpi = [n for n in elf.needed if ANY_MPI.match(n)]
    wheel = wheel_lib / "libmpi.so.12"
    if not mpi:
        return Plan({}, "none (no MPI library among DT_NEEDED)", "")
    # Open MPI 1.10 also called its library libmpi.so.12: its handles give it away.
    open_mpi = [n for n in mpi if OPEN_MPI.match(n) or (n == "libmpi.so.12" and elf.open_mpi_symbols)]
    if open_mpi:
        return Plan({}, f"Open MPI ({open_mpi[0]})",
                    f"{program} is linked against Open MPI ({open_mpi[0]}): no ABI swap (Open MPI's handles "
                    "are not MPICH's); its ranks run on Open MPI's own mpirun (with its ofi MTL for the "
                    "libfabric engine)", open_mpi=True)
    unknown = [n for n in mpi if n not in MPICH_CORE and n not in MPICH_COMPANIONS and n != STANDARD_ABI]
    if unknown:
        return Plan({}, f"unknown ({unknown[0]})", f"{program} is linked against {unknown[0]}, an MPI library "
                    "of unknown ABI: no ABI swap", warning=True)
    if STANDARD_ABI in mpi:
        raise AbiError(f"{program} is built against the MPI 5 standard ABI ({STANDARD_ABI}); libloggp.so's "
                       "PMPI layer is built for MPICH's ABI (libmpi.so.12) and cannot wrap it: rebuild the "
                       "program with the venv's mpicc (not mpicc_abi)")
    if mpi == ["libmpi.so.12"] and _own_wheel(path, elf, wheel):
        return Plan({}, str(wheel), "")
    if not wheel.is_file():
        raise AbiError(f"the venv's MPICH library {wheel} is missing (run ./setup.sh)")
    pinned = _rpath_first(path, elf, mpi)
    if pinned:
        raise AbiError(f"{program} finds {pinned} through its DT_RPATH, which the loader searches before "
                       "LD_LIBRARY_PATH, so the ABI swap cannot take effect: relink it with "
                       "-Wl,--enable-new-dtags (DT_RUNPATH), or run with --no-abi-swap")
    # Both core names: a companion taken from the system needs one of them.
    links = {name: wheel for name in MPICH_CORE}
    for name in mpi:
        if name in MPICH_COMPANIONS:
            links[name] = _companion(program, name, wheel_lib, elf, find_system)
    asked = ", ".join(mpi)
    extra = "".join(f"; {n} from {links[n]}" for n in mpi if n in MPICH_COMPANIONS)
    return Plan(links, f"{wheel} (ABI swap from {asked})",
                f"ABI swap: {program} asks for {asked}; its ranks run on the venv's MPICH ({wheel}, ch4:ofi) "
                f"so the libfabric engine applies{extra} (--no-abi-swap keeps the program's own MPI)")


def _search_dirs(path, dirs):
    origin = str(path.resolve().parent)
    return [Path(d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)) for d in dirs]


def _own_wheel(path, elf, wheel):
    """True if the program's RPATH/RUNPATH already finds the wheel's libmpi.so.12."""
    for directory in _search_dirs(path, elf.runpath or elf.rpath):
        candidate = directory / "libmpi.so.12"
        try:
            if candidate.is_file() and wheel.is_file() and os.path.samefile(candidate, wheel):
                return True
        except OSError:
            continue
    return False


def _rpath_first(path, elf, names):
    """A library of `names` the program's DT_RPATH finds: the loader searches
    DT_RPATH (when there is no DT_RUNPATH) before LD_LIBRARY_PATH."""
    if elf.runpath:
        return None
    for directory in _search_dirs(path, elf.rpath):
        for name in names:
            if (directory / name).exists():
                return directory / name
    return None


def _companion(program, name, wheel_lib, elf, find_system):
    language, names = MPICH_COMPANIONS[name]
    for candidate in names:
        if (wheel_lib / candidate).is_file():
            return wheel_lib / candidate
    for candidate in names:
        found = find_system(candidate, elf)
        if found:
            return found
    raise AbiError(f"{program} needs {name} (MPICH's {language} bindings), which the venv's mpich wheel lacks, "
                   f"and no system copy was found: install Debian's {DEBIAN_COMPANION_PACKAGE} "
                   f"(apt-get install {DEBIAN_COMPANION_PACKAGE}), or run with --no-abi-swap")


def find_system_library(soname, like):
    """A system copy of `soname` for the program's class and machine (ElfInfo
    `like`), from the loader's cache (ldconfig -p) or the usual folders."""
    candidates = []
    ldconfig = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.access(p, os.X_OK)), None)
    if ldconfig:
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        for line in out.splitlines():
            name, _, target = line.strip().partition(" => ")
            if name.split(" (")[0] == soname and target:
                candidates.append(Path(target))
    for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                      "/lib64", "/lib"):
        candidates.append(Path(directory, soname))
    for candidate in candidates:
        try:
            info = read_elf(candidate)
        except AbiError:
            continue
        if (info.bits, info.machine) == (like.bits, like.machine):
            return candidate
    return None


# ---- the private loader folder ----------------------------------------------------

def cache_root(env=None):
    """$XDG_CACHE_HOME/loggp/abi (absolute values only, as the XDG spec says), else ~/.cache/loggp/abi."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "loggp" / "abi"


def private_dir(path):
    """Creates `path` (mode 0700) if needed and checks it is a real directory
    only we can write: nobody else can then plant links in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as err:
        raise AbiError(f"cannot create {path}: {err.strerror}") from None
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise AbiError(f"{path} is not a directory (a symlink?); remove it")
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise AbiError(f"{path} must be a directory owned by you with mode 0700 "
                       f"(it is owned by uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):04o})")
    return path


def loader_folder(links, root=None):
    """A folder holding one symlink per soname, named after its contents, so
    concurrent runs share it: each builds a temporary copy and renames it into
    place; the loser checks the winner's and drops its own."""
    root = private_dir(Path(root) if root else cache_root())
    items = sorted((name, str(target)) for name, target in links.items())
    digest = hashlib.sha256(repr(items).encode()).hexdigest()[:16]
    final = root / f"ld-{digest}"
    if _holds(final, items):
        return final
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
    try:
        for name, target in items:
            os.symlink(target, tmp / name)
        try:
            os.rename(tmp, final)
            return final
        except OSError:
            if _holds(final, items):
                return final
            raise AbiError(f"{final} holds something other than the expected links; remove it") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _holds(folder, items):
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode) or sorted(os.listdir(folder)) != [n for n, _ in items]:
            return False
        return all(os.readlink(folder / name) == target for name, target in items)
    except OSError:
        return False


RECORD_NAME = "libmpi.json"


def write_record(plan, directory):
    """DIR/libmpi.json: which libmpi the ranks use, next to their profiles
    (`loggp run --profile DIR`), so a study can record it. Written atomically."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"libmpi": plan.library, "links": {k: str(v) for k, v in sorted(plan.links.items())}},
                      indent=1)
    write_text_atomic(directory / RECORD_NAME, text + "\n")


def environment(plan, base_env, wheel_lib=None, root=None):
    """LD_LIBRARY_PATH for a swapped plan: the folder, then the wheel's own
    folders (its libfabric first, ahead of any system copy), then the user's."""
    if not plan.links:
        return {}
    wheel_lib = Path(wheel_lib or wheel_lib_dir())
    parts = [str(loader_folder(plan.links, root)), str(wheel_lib), str(wheel_lib / "mpich")]
    existing = base_env.get("LD_LIBRARY_PATH", "")
    return {"LD_LIBRARY_PATH": ":".join(parts + ([existing] if existing else []))}
