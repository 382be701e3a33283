"""What every part writes files with: one mode for every result file, and one atomic writer."""
import os
import tempfile
from pathlib import Path


def created_mode():
    """The mode open() gives a new file under the current umask. Atomic writers use it
    for their temporary file (mkstemp makes 0600), so every result file gets one mode."""
    return 0o666 & ~_umask()


def _umask():
    # Linux says it without changing it; setting and restoring it would give a thread
    # that starts a process in between a umask of 0
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path, write, mode=None):
    """Calls write(tmp) for a temporary path beside `path`, flushes it to disk and renames it
    onto `path`: a reader sees the old file or the whole new one, never half of one, and a
    failed write leaves nothing behind. The file gets `mode` (default: what open() gives).
    The temporary name keeps the suffix, for writers that choose a format by it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix or ".tmp")
    try:
        os.fchmod(fd, created_mode() if mode is None else mode)
        os.close(fd)
        fd = -1
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path, text, mode=None):
    """atomic_write for a text (or, given bytes, a binary) file."""
    def write(tmp):
        with open(tmp, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
    atomic_write(path, write, mode)
