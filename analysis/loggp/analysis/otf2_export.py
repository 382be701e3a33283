"""A trace (loggp.analysis.trace) as an OTF2 archive laid out as Score-P lays one
out, written with OTF2's own library (the `otf2` package): definitions (strings,
one region per MPI call, a location per rank, MPI_COMM_WORLD and its group), and
per rank Enter/Leave of each call with its MPI events:

    MPI_Send...            MpiSend
    MPI_Isend..., Start    MpiIsend; its completion MpiIsendComplete
    MPI_Irecv, Start       MpiIrecvRequest; its completion MpiIrecv
    MPI_Recv               MpiRecv          MPI_Sendrecv   MpiSend + MpiRecv
    collectives            MpiCollectiveBegin/End (sizes in Score-P's convention,
                           loggp.analysis.collective_bytes); nonblocking ones
                           NonBlockingCollectiveRequest/Complete

Timestamps are nanoseconds on rank 0's clock (timer resolution 1e9 per second).
A communicator whose members the trace lists (version 4) is one over a group of
those members, in its rank order; calls on a smaller communicator whose members
it does not list keep their Enter/Leave but no MPI event. Docs:
docs/trace-formats.md."""
import os
import shutil
from collections import Counter
from pathlib import Path

from . import collective_bytes, replay, schedules
from .trace import CALL, COMPLETE, memberships

ARCHIVE = "traces"        # the anchor file is OUT/traces.otf2, as Score-P names it
WORLD_NAME = "MPI_COMM_WORLD"


def _otf2():
    import otf2  # the OTF2 library's bindings; imported when an archive is written or read
    return otf2


def collective_op(otf2, base):
    return getattr(otf2.CollectiveOp, base.upper())


def _role(otf2, name):
    base = schedules.base_name(name)
    roles = otf2.RegionRole
    if base == "Barrier":
        return roles.BARRIER
    if base in ("Bcast", "Scatter", "Scatterv"):
        return roles.COLL_ONE2ALL
    if base in ("Reduce", "Gather", "Gatherv"):
        return roles.COLL_ALL2ONE
    if base is not None:
        return roles.COLL_ALL2ALL
    if name in replay.SENDS | replay.ISENDS | replay.WAITS | {"MPI_Recv", "MPI_Irecv", "MPI_Sendrecv",
                                                                 "MPI_Sendrecv_replace"}:
        return roles.POINT2POINT
    return roles.FUNCTION


def instance_sizes(traces):
    """(comm_id, n-th collective on it) -> largest bytes any rank recorded (the replay's size)."""
    sizes = {}
    for t in traces:
        seen = Counter()
        for rec, name in zip(t.records, t.call_names()):
            if rec["kind"] != CALL or schedules.base_name(name) is None:
                continue
            key = (int(rec["comm_id"]), seen[int(rec["comm_id"])])
            seen[int(rec["comm_id"])] += 1
            sizes[key] = max(sizes.get(key, 0), int(rec["bytes"]))
    return sizes


def write(traces, out_dir):
    """Writes the archive into out_dir (which must not exist), whole or not at all:
    it is built beside it and renamed. Returns Counter of calls written without MPI
    events (on communicators smaller than MPI_COMM_WORLD whose members the traces do not list)."""
    otf2 = _otf2()
    out_dir = Path(out_dir)
    tmp = out_dir.parent / f".{out_dir.name}.tmp.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        skipped = _write(otf2, traces, tmp)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return skipped


def _write(otf2, traces, folder):
    world = traces[0].size
    sizes = instance_sizes(traces)
    known = memberships(traces)
    skipped = Counter()
    with otf2.writer.open(str(folder), archive_name=ARCHIVE, timer_resolution=10 ** 9) as archive:
        defs = archive.definitions
        node = defs.system_tree_node("machine", class_name="machine")
        locations = []
        for t in traces:
            group = defs.location_group(f"MPI Rank {t.rank}", system_tree_parent=node,
                                        location_group_type=otf2.LocationGroupType.PROCESS)
            locations.append(defs.location("Master thread", type=otf2.LocationType.CPU_THREAD, group=group))
        defs.group("", group_type=otf2.GroupType.COMM_LOCATIONS, paradigm=otf2.Paradigm.MPI, members=locations)
        world_group = defs.group("", group_type=otf2.GroupType.COMM_GROUP, paradigm=otf2.Paradigm.MPI,
                                 members=list(range(world)))
        comms = {}
        regions = {}

        def comm_of(comm_id):
            if comm_id not in comms:
                members = known.get(comm_id)
                if members is not None and list(members) != list(range(world)):
                    group = defs.group("", group_type=otf2.GroupType.COMM_GROUP, paradigm=otf2.Paradigm.MPI,
                                       members=list(members))
                    comms[comm_id] = defs.comm(f"communicator {comm_id:#x}", group=group)
                else:
                    # MPICH's handle of the world, or Open MPI's Fortran index of it; others are duplicates
                    name = WORLD_NAME if comm_id in (0x44000000, 0) else f"{WORLD_NAME} duplicate {comm_id:#x}"
                    comms[comm_id] = defs.comm(name, group=world_group)
            return comms[comm_id]

        def region(name):
            if name not in regions:
                regions[name] = defs.region(name, paradigm=otf2.Paradigm.MPI, region_role=_role(otf2, name))
            return regions[name]

        for t, location in zip(traces, locations):
            _write_rank(otf2, archive.event_writer_from_location(location), t, world, sizes, comm_of, region,
                        skipped, known)
    return skipped


def _write_rank(otf2, w, t, world, sizes, comm_of, region, skipped, known):
    recs, names, posts = t.records, t.call_names(), t.posts()
    shift = int(t.clock_offset_ns)

    def at(ns):
        return int(ns) - shift

    undefined_root = otf2.Undefined.UINT32.value
    requests = {}       # post record -> (kind, details) of the request event written for it
    persistent = {}     # request handle -> its init record
    coll_seen = Counter()
    init = region("MPI_Init")
    w.enter(at(t.init_ns), init)
    w.leave(at(t.init_ns), init)
    n = len(recs)
    i = 0
    while i < n:
        rec, name = recs[i], names[i]
        j = i + 1
        while j < n and recs[j]["kind"] == COMPLETE:
            j += 1
        start, end = at(rec["start_ns"]), at(rec["end_ns"])
        reg = region(name)
        w.enter(start, reg)
        members = replay.members_of(known, int(rec["comm_id"]), int(rec["comm_size"]), world)
        local = members is not None
        comm = comm_of(int(rec["comm_id"])) if local else None
        peer, tag, nbytes = int(rec["peer"]), max(int(rec["tag"]), 0), int(rec["bytes"])
        base = schedules.base_name(name)
        if name in replay.SEND_INITS or name == "MPI_Recv_init":
            persistent[int(rec["request"])] = rec
        made = persistent.get(int(rec["request"])) if name in ("MPI_Start", "MPI_Startall") else None
        if made is not None:
            local = replay.members_of(known, int(made["comm_id"]), int(made["comm_size"]), world) is not None
            comm = comm_of(int(made["comm_id"])) if local else None
            peer, tag, nbytes = int(made["peer"]), max(int(made["tag"]), 0), int(made["bytes"])
        if not local and (name in replay.SENDS | replay.ISENDS or base is not None or made is not None
                          or name in ("MPI_Irecv", "MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace")):
            skipped[name] += 1
        elif name in replay.SENDS and peer >= 0:
            w.mpi_send(start, peer, comm, tag, nbytes)
        elif (name in replay.ISENDS or (made is not None and t.names[made["call"]] in replay.SEND_INITS)) \
                and peer >= 0:
            w.mpi_isend(start, peer, comm, tag, nbytes, i + 1)
            requests[i] = ("send", None)
        elif name == "MPI_Irecv" or (made is not None and t.names[made["call"]] == "MPI_Recv_init"):
            w.mpi_irecv_request(start, i + 1)
            requests[i] = ("recv", comm)
        elif name in ("MPI_Sendrecv", "MPI_Sendrecv_replace") and peer >= 0:
            w.mpi_send(start, peer, comm, tag, nbytes)
        elif base is not None:
            seq = coll_seen[int(rec["comm_id"])]
            coll_seen[int(rec["comm_id"])] += 1
            root = peer if base in collective_bytes.ROOTED else undefined_root
            sent, received = collective_bytes.to_scorep(base, sizes[(int(rec["comm_id"]), seq)], len(members),
                                                        members.index(t.rank), peer)
            details = (collective_op(otf2, base), comm, root, sent, received)
            if int(rec["request"]):
                w.non_blocking_collective_request(start, i + 1)
                requests[i] = ("coll", details)
            else:
                w.mpi_collective_begin(start)
                w.mpi_collective_end(end, *details)
        if name in ("MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace") and local and j > i + 1:
            got = recs[i + 1]
            if int(got["peer"]) >= 0:
                w.mpi_recv(end, int(got["peer"]), comm, max(int(got["tag"]), 0), int(got["bytes"]))
        else:
            for c in range(i + 1, j):
                post = int(posts[c])
                kind, details = requests.pop(post, (None, None))
                if kind == "send":
                    w.mpi_isend_complete(end, post + 1)
                elif kind == "recv" and int(recs[c]["peer"]) >= 0:
                    w.mpi_irecv(end, int(recs[c]["peer"]), details, max(int(recs[c]["tag"]), 0),
                                int(recs[c]["bytes"]), post + 1)
                elif kind == "coll":
                    w.non_blocking_collective_complete(end, *details, post + 1)
        w.leave(end, reg)
        i = j
    fin = region("MPI_Finalize")
    w.enter(at(t.finalize_ns), fin)
    w.leave(at(t.finalize_ns), fin)
