"""Regions that libfabric's shm provider left in /dev/shm for processes that are gone.

The provider names each endpoint's region after its process, "PID:UID:INDEX" (with
":SEED" added when that name was taken). A killed rank leaves its region behind. When a
later rank gets the same PID, the provider finds the region's recorded owner alive (itself),
renames its own region with a seed, and MPICH 5.0.2's ch4:ofi hands the peers that longer
name cut to the length of their own: the job hangs in MPI_Init or dies with a segmentation
fault. A rank under libloggp.so removes the regions named after its own PID before MPI_Init
(shim/src/pmpi/route.c); a plain launch routed through libfabric without the apparatus (the
peer suite's plain runs, `loggp bench`'s plain MPICH) first removes this user's regions whose
process no longer runs, which the provider would overwrite anyway if it could tell them from
its own."""
import os
from pathlib import Path

FOLDER = Path("/dev/shm")


def region_owner(name, uid):
    """The PID in a shm region's name if `name` is one of user `uid`'s regions, else None."""
    parts = name.split(":")
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts):
        return None
    pid, owner = int(parts[0]), int(parts[1])
    return pid if owner == uid and pid > 0 else None


def running(pid):
    """Whether a process `pid` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale(names, uid, alive=running):
    """The names among `names` of user `uid`'s regions whose process is gone."""
    return [n for n in names if (pid := region_owner(n, uid)) is not None and not alive(pid)]


def names_in(folder):
    """The names in `folder`, or none if it cannot be read."""
    try:
        return os.listdir(folder)
    except OSError:
        return []


def remove_own(folder, names, since=None):
    """Removes those of `names` in `folder` that this user owns (and changed at or after
    `since`, seconds since the epoch, if given); the names removed. One another process
    removes first is passed over."""
    removed = []
    for name in names:
        path = Path(folder, name)
        try:
            info = path.lstat()
            if info.st_uid != os.geteuid() or (since is not None and info.st_mtime < since):
                continue
            path.unlink()
        except OSError:
            continue
        removed.append(name)
    return removed


def remove_stale(folder=FOLDER, since=None):
    """Removes this user's regions in `folder` whose process is gone (only those changed at or
    after `since`, if given); the names removed."""
    return remove_own(folder, stale(names_in(folder), os.geteuid()), since)
