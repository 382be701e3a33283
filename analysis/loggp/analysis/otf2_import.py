"""An OTF2 archive with MPI events, as Score-P writes one, as our trace records,
read with OTF2's own library (the `otf2` package) in one pass, each rank's records
made as its events come: kept in memory (read: what loggp.analysis.trace.read_folder
returns, one Trace per rank), or handed to any other sink (convert; otf2_stream
writes them to trace files a chunk at a time).

Ranks are the MPI paradigm's COMM_LOCATIONS group, in order. Each Enter/Leave of
an MPI region becomes a call record spanning them, filled from the MPI events
inside it:

    MpiSend                      MPI_Send (the region's name if it is a send)
    MpiIsend                     MPI_Isend with its request
    MpiIrecvRequest              MPI_Irecv, its source, tag and communicator taken
                                 from the MpiIrecv that completes it
    MpiRecv                      MPI_Recv and its completion record
    MpiSend + MpiRecv            MPI_Sendrecv
    MpiIsendComplete, MpiIrecv,  a completion call (the region's name, e.g.
    NonBlockingCollectiveComplete  MPI_Waitall) and one completion per request
    MpiCollectiveEnd             the collective, its size converted from Score-P's
                                 convention (loggp.analysis.collective_bytes)
    NonBlockingCollectiveRequest the region's nonblocking collective (MPI_Iscan,
                                 MPI_Ineighbor_alltoall, ...) with its request; in
                                 any other region, MPI_I<op> once its completion
                                 says the operation

Each communicator's group becomes its membership in the converted trace (peers and
roots stay its ranks, as in our own traces), so the replay maps them to
MPI_COMM_WORLD ranks and models point-to-point and collectives on any
communicator; a group with a location that is no rank keeps point-to-point peers
translated where they can be, and its collectives unmodelled. Time outside MPI
regions is computation. Docs: docs/trace-formats.md."""
import os
import sys
import tempfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from . import collective_bytes, replay, schedules, trace_write
from .otf2_export import _otf2
from .trace import COMPLETE, NONBLOCKING_COLLECTIVES, TraceError

EXPECTED = "expected an OTF2 archive's anchor file (as Score-P writes traces.otf2, with traces.def and traces/ beside it)"
ANY_SOURCE, ANY_TAG = replay.ANY_SOURCE, replay.ANY_TAG
HANDLED = {"MpiSend", "MpiIsend", "MpiIrecvRequest", "MpiRecv", "MpiIrecv", "MpiIsendComplete",
           "MpiCollectiveBegin", "MpiCollectiveEnd", "NonBlockingCollectiveRequest",
           "NonBlockingCollectiveComplete", "MpiRequestTest", "Enter", "Leave"}


def anchor_of(path):
    """The anchor file for a path given as the archive's folder or its anchor file."""
    path = Path(path)
    if path.is_dir():
        named = path / "traces.otf2"
        if named.is_file():
            return named
        found = sorted(path.glob("*.otf2"))
        if len(found) != 1:
            raise TraceError(path, None, "no OTF2 anchor file (*.otf2) in it" if not found else
                             f"{len(found)} OTF2 anchor files in it ({', '.join(f.name for f in found)}): "
                             "give one")
        return found[0]
    return path


def is_archive(path):
    """True for an OTF2 anchor file, or a folder holding one and no trace.<rank>.bin."""
    path = Path(path)
    if path.is_file():
        return path.suffix == ".otf2"
    return path.is_dir() and not any(path.glob("trace.*.bin")) and any(path.glob("*.otf2"))


@contextmanager
def _library_messages(box):
    """The OTF2 library prints its errors on stderr itself: keep them for our one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode("utf-8", "replace"))


def _first_error(text):
    for line in text.splitlines():
        if " error: " in line:
            return line.split(" error: ", 1)[1].strip()
    return None


def read(path, notes=None):
    """One Trace per rank of the archive at path (its folder or anchor file), in memory; TraceError
    naming the file when it is no readable archive, or has no MPI events. notes (a list) gets one
    line per kind of thing left out."""
    anchor = anchor_of(path)
    sinks = []

    def rows_of(rank):
        sinks.append(_Rows())
        return sinks[-1]

    world, ranks = convert(anchor, rows_of, notes)
    return [trace_write.make(rank, world, r.init_ns, r.finalize_ns, sink.rows, path=anchor, comms=r.comms())
            for rank, (r, sink) in enumerate(zip(ranks, sinks))]


def convert(path, sink_of, notes=None):
    """Reads the archive at path (its folder or anchor file) once, in the library's time order, each
    rank's events turned into our trace records as they come and handed to sink_of(rank) (an object
    with add(row) -> position and amend(position, row, **changes), see _Rows); (world size, each
    rank's converter: its init_ns and finalize_ns). Memory follows the ranks and the requests in
    flight, not the archive's length. TraceError naming the file when it is no readable archive,
    or has no MPI events; notes (a list) gets one line per kind of thing left out."""
    anchor = anchor_of(path)
    if not anchor.is_file():
        raise TraceError(anchor, None, f"no such file: {EXPECTED}")
    notes = notes if notes is not None else []
    otf2 = _otf2()
    said = []
    try:
        with _library_messages(said):
            reader = otf2.reader.Reader(str(anchor))
    except Exception as err:  # the library's own error class, or a definitions error of its bindings
        raise _open_error(anchor, said, err) from None
    try:
        defs = reader.definitions
        resolution = int(reader.timer_resolution)
        try:
            ranks = _rank_locations(otf2, anchor, defs)
        except TraceError as err:
            ranks, no_ranks = [], err  # said once the events are known to be whole
        else:
            no_ranks = None
        converters = _converters(otf2, defs, ranks, resolution, sink_of)
        by_location = {loc._ref: converters[r] for r, loc in enumerate(ranks)}
        counts = Counter()
        elsewhere = {}  # location -> Counter of MPI events on a location that is no rank
        failed = None
        with _library_messages(said):
            events = iter(reader.events)
            while True:
                try:
                    location, event = next(events)
                except StopIteration:
                    break
                except Exception as err:  # the library's, while reading: said below, naming the file
                    failed = err
                    break
                ref = location._ref
                counts[ref] += 1
                converter = by_location.get(ref)
                if converter is not None:
                    converter.feed(event)
                    continue
                here = elsewhere.setdefault(ref, Counter())
                if type(event).__name__.startswith(("Mpi", "NonBlockingCollective")):
                    here[defs.locations[ref].name] += 1
        if failed is not None:
            raise _events_error(otf2, anchor, defs, said, failed) from None
        for location in defs.locations:
            if counts[location._ref] != location.number_of_events:
                path = anchor.parent / anchor.stem / f"{location._ref}.evt"
                raise TraceError(path, None, f"truncated: {counts[location._ref]} events, the definitions "
                                             f"say {location.number_of_events} (location {location._ref}, "
                                             f"{location.group.name})")
    finally:
        with _library_messages([]):
            reader.close()
    if no_ranks is not None:
        raise no_ranks
    for converter in converters:
        converter.finish()
    _check(anchor, defs, converters, elsewhere, notes)
    return len(ranks), converters


def _open_error(anchor, said, err):
    text = "".join(said)
    detail = _first_error(text) or str(err)
    definitions = anchor.with_suffix(".def")
    if "AnchorFile" in text or not definitions.is_file():
        return TraceError(anchor, None, f"not an OTF2 anchor file ({detail}): {EXPECTED}")
    return TraceError(definitions, None, f"truncated or damaged OTF2 definitions ({detail}): expected the "
                                         f"global definitions of the archive {anchor.name}")


def _events_error(otf2, anchor, defs, said, err):
    """The event file that cannot be read: each location's read alone until one fails."""
    detail = _first_error("".join(said)) or str(err)
    for location in list(defs.locations):
        try:
            with _library_messages([]):
                with otf2.reader.open(str(anchor)) as again:
                    chosen = next(loc for loc in again.definitions.locations if loc._ref == location._ref)
                    count = sum(1 for _ in again.events(chosen))
            if count != location.number_of_events:
                raise ValueError(f"{count} events")
        except Exception:
            path = anchor.parent / anchor.stem / f"{location._ref}.evt"
            return TraceError(path, None, f"truncated or damaged OTF2 event file ({detail}): expected the events "
                                          f"of location {location._ref} ({location.group.name})")
    return TraceError(anchor, None, f"its events cannot be read ({detail}): {EXPECTED}")


def _rank_locations(otf2, anchor, defs):
    for group in defs.groups:
        if group.group_type == otf2.GroupType.COMM_LOCATIONS and group.paradigm == otf2.Paradigm.MPI:
            return list(group.members)
    raise TraceError(anchor, None, "no MPI ranks in its definitions (no COMM_LOCATIONS group of the MPI paradigm): "
                                   "expected an archive of an MPI program, as Score-P writes one with MPI recording on")


def _converters(otf2, defs, ranks, resolution, sink_of):
    """A converter per rank, each writing to its own sink."""
    world = len(ranks)
    rank_of = {loc._ref: r for r, loc in enumerate(ranks)}
    members = {}
    for comm in defs.comms:
        group = getattr(comm, "group", None)
        if group is not None and group.group_type == otf2.GroupType.COMM_GROUP:
            members[comm._ref] = [rank_of.get(loc._ref, -1) for loc in group.members]
    ops = {getattr(otf2.CollectiveOp, base.upper()).value: base for base in schedules.SCHEDULES
           if hasattr(otf2.CollectiveOp, base.upper())}
    return [_Rank(otf2, rank, world, members, ops, resolution, sink_of(rank)) for rank in range(world)]


def _check(anchor, defs, converters, elsewhere, notes):
    """TraceError when nothing in the archive can be predicted; notes on what is left out."""
    gone = Counter()
    for per_location in elsewhere.values():
        gone.update(per_location)
    if gone:
        notes.append("MPI events on locations that are no rank's (threads other than the master) left out: "
                     + ", ".join(f"{name} x{count}" for name, count in gone.most_common(4)))
    if not any(c.mpi_seen for c in converters):
        regions = sorted({r.name for r in defs.regions})[:6]
        raise TraceError(anchor, None, f"no MPI events in it (regions: {', '.join(regions) or 'none'}): expected an "
                                       "archive of an MPI program, as Score-P writes one with MPI recording on")
    calls = Counter()
    left_out = Counter()
    for c in converters:  # rank by rank: ties are listed in the order they first appear
        calls.update(c.calls)
        left_out.update(c.left_out)
    if not any(count and _modelled(name) for name, count in calls.items()):
        said = ", ".join(f"{name} x{count}" for name, count in calls.most_common(6)) or "none"
        events = ", ".join(f"{name} x{count}" for name, count in left_out.most_common(4))
        raise TraceError(anchor, None, f"no MPI call predict can model: its MPI calls are {said}"
                                       + (f" (events {events})" if events else "")
                                       + "; expected point-to-point or collective calls on its communicators")
    if left_out:
        notes.append("MPI events predict cannot model, their calls kept as computation: "
                     + ", ".join(f"{name} x{count}" for name, count in left_out.most_common(6)))


def _modelled(name):
    return (name in replay.SENDS | replay.ISENDS | replay.WAITS
            or name in ("MPI_Irecv", "MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace")
            or schedules.base_name(name) is not None)


class _Rows:
    """Where a rank's records go when they are kept in memory: a list of rows."""

    def __init__(self):
        self.rows = []

    def add(self, row):
        self.rows.append(row)
        return len(self.rows) - 1

    def amend(self, position, row, **changes):
        row.update(changes)  # the row in the list itself


class _Rank:
    """One location's events as rows of our trace records, fed one event at a time, each row
    handed to sink as soon as it is made."""

    def __init__(self, otf2, rank, world, members, ops, resolution, sink):
        self.otf2, self.rank, self.world, self.members, self.ops = otf2, rank, world, members, ops
        self.scale = (10 ** 9, resolution)
        self.sink = sink
        self.left_out = Counter()
        self.calls = Counter()  # records by call name
        self.pending = {}      # request id -> (position, row) of its post, completed later
        self.init_ns = self.finalize_ns = None
        self.first = self.last = None
        self.mpi_seen = False
        self.current = None  # [region, start ticks, events inside] of the MPI call being read
        self.depth = 0

    def ns(self, ticks):
        num, den = self.scale
        return int(ticks) * num // den

    def listed(self, ranks):
        """Whether the converted trace lists a group of these world ranks as its communicator's
        members: every one a rank, each once, and not the world's own order, which goes unsaid
        (the replay takes a communicator as large as the world in it when none are listed)."""
        return min(ranks, default=-1) >= 0 and len(set(ranks)) == len(ranks) and \
            tuple(ranks) != tuple(range(self.world))

    def comms(self):
        """{comm id: its members' world ranks} of the listed communicators this rank belongs to:
        what the converted trace lists (docs/trace-format.md), so that the replay maps their ranks,
        as it does our own traces'."""
        return {ref: tuple(ranks) for ref, ranks in self.members.items() if self.rank in ranks and self.listed(ranks)}

    def world_rank(self, comm, peer):
        """(rank, comm id, comm size as the replay needs it) of a peer in comm: a rank of comm when
        the trace lists its members (listed), else a world rank where its group says it."""
        ranks = self.members.get(comm._ref) if comm is not None else None
        if ranks is not None and self.listed(ranks):
            return int(peer), comm._ref, len(ranks)
        if ranks is None or not 0 <= int(peer) < len(ranks) or ranks[int(peer)] < 0:
            return int(peer), comm._ref if comm is not None else 0, len(ranks) if ranks else 0
        return ranks[int(peer)], comm._ref, self.world

    def feed(self, ev):
        kind = type(ev).__name__
        call = self.current
        self.first = ev.time if self.first is None else self.first
        self.last = ev.time
        if kind == "Enter":
            name = ev.region.name
            if call is not None:
                self.depth += ev.region._ref == call[0]._ref
                return
            if name in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize"):
                self.mpi_seen = True
                if name == "MPI_Finalize" and self.finalize_ns is None:
                    self.finalize_ns = self.ns(ev.time)
                return
            if name.startswith("MPI_") or ev.region.paradigm == self.otf2.Paradigm.MPI:
                self.current = [ev.region, ev.time, []]
                self.depth = 0
        elif kind == "Leave":
            name = ev.region.name
            if call is not None and ev.region._ref == call[0]._ref:
                if self.depth:
                    self.depth -= 1
                    return
                self.mpi_seen = True
                self.current = None
                self.call(name, self.ns(call[1]), self.ns(ev.time), call[2])
            elif call is None and name in ("MPI_Init", "MPI_Init_thread"):
                self.init_ns = self.ns(ev.time)
        elif call is not None:
            call[2].append(ev)
        elif kind.startswith(("Mpi", "NonBlockingCollective")):  # an MPI event outside any region
            self.call(None, self.ns(ev.time), self.ns(ev.time), [ev])

    def finish(self):
        """After the last event: the trace's start and end where MPI_Init and MPI_Finalize do not say."""
        if self.init_ns is None:
            self.init_ns = self.ns(self.first) if self.first is not None else 0
        if self.finalize_ns is None:
            self.finalize_ns = self.ns(self.last) if self.last is not None else self.init_ns

    def add(self, row):
        self.calls[row["call"]] += 1
        return self.sink.add(row)

    def amend(self, position, row, **changes):
        if "call" in changes:
            self.calls[row["call"]] -= 1
            if not self.calls[row["call"]]:
                del self.calls[row["call"]]
            self.calls[changes["call"]] += 1
        self.sink.amend(position, row, **changes)

    def call(self, name, start, end, events):
        self.mpi_seen = True
        span = {"start_ns": start, "end_ns": end}
        kinds = [type(ev).__name__ for ev in events]
        for kind in kinds:
            if kind not in HANDLED:
                self.left_out[kind] += 1
        sends = [ev for ev in events if type(ev).__name__ == "MpiSend"]
        recvs = [ev for ev in events if type(ev).__name__ == "MpiRecv"]
        done = [ev for ev in events if type(ev).__name__ in ("MpiIsendComplete", "MpiIrecv",
                                                              "NonBlockingCollectiveComplete")]
        made = 0
        paired = len(sends) == 1 and len(recvs) == 1
        if paired:
            both = name if name in ("MPI_Sendrecv", "MPI_Sendrecv_replace") else "MPI_Sendrecv"
            self.add({"call": both, **span, **self.p2p(sends[0], sends[0].receiver)})
            self.add({"call": both, **span, **self.p2p(recvs[0], recvs[0].sender), "kind": COMPLETE})
            made = 1
        for ev in events:
            kind = type(ev).__name__
            if kind in ("MpiSend", "MpiRecv") and paired:
                continue
            if kind == "MpiSend":
                self.add({"call": name if name in replay.SENDS else "MPI_Send", **span, **self.p2p(ev, ev.receiver)})
            elif kind == "MpiRecv":
                fields = self.p2p(ev, ev.sender)
                self.add({"call": "MPI_Recv", **span, **fields})
                self.add({"call": "MPI_Recv", **span, **fields, "kind": COMPLETE})
            elif kind == "MpiIsend":
                self.add({"call": name if name in replay.ISENDS else "MPI_Isend", **span,
                          **self.p2p(ev, ev.receiver), "request": ev.request_id + 1})
            elif kind == "MpiIrecvRequest":
                row = {"call": "MPI_Irecv", **span, "peer": ANY_SOURCE, "tag": ANY_TAG, "request": ev.request_id + 1}
                self.pending[ev.request_id] = (self.add(row), row)
            elif kind == "MpiCollectiveEnd":
                self.add({"call": self.collective_name(name, ev.collective_op), **span, **self.collective(ev)})
            elif kind == "NonBlockingCollectiveRequest":
                # named by its region; in another region (or none) a placeholder its completion renames
                row = {"call": name if name in NONBLOCKING_COLLECTIVES else "MPI_Ibarrier", **span,
                       "request": ev.request_id + 1}
                self.pending[ev.request_id] = (self.add(row), row)
            else:
                continue
            made += 1
        if done:
            wait = name if name in replay.WAITS else "MPI_Waitall"
            self.add({"call": wait, **span})
            for k, ev in enumerate(done):
                self.add({"call": wait, **span, **self.completion(ev), "kind": COMPLETE, "index": k,
                          "request": ev.request_id + 1})
            made += 1
        if not made and name is not None:
            self.add({"call": name, **span})

    def p2p(self, ev, peer):
        world_peer, comm, size = self.world_rank(ev.communicator, peer)
        return {"peer": world_peer, "tag": int(ev.msg_tag), "bytes": int(ev.msg_length), "comm_id": comm,
                "comm_size": size}

    def collective_name(self, region_name, op):
        base = self.ops.get(op.value)
        if region_name and schedules.base_name(region_name) == base:
            return region_name
        return f"MPI_{base}" if base else (region_name or "MPI_Barrier")

    def nonblocking_name(self, posted, op):
        """The name of a nonblocking collective posted as posted and completed as operation op: the
        operation's MPI_I<op> where the two differ, so the name still posts (trace.POSTING); a post
        the schedules do not know (MPI_Ineighbor_*: no OTF2 operation says it) keeps its name."""
        base = self.ops.get(op.value)
        if base is None or schedules.base_name(posted) in (base, None):
            return posted
        return "MPI_I" + base.lower()

    def collective(self, ev):
        base = self.ops.get(ev.collective_op.value)
        ranks = self.members.get(ev.communicator._ref)
        size = len(ranks) if ranks else 0
        root = int(ev.root)
        rooted = base in collective_bytes.ROOTED and root < size
        me = ranks.index(self.rank) if ranks and self.rank in ranks else 0
        nbytes = collective_bytes.from_scorep(base, ev.size_sent, ev.size_received, size, me,
                                              root if rooted else 0) if base else 0
        return {"comm_id": ev.communicator._ref, "comm_size": size, "bytes": nbytes,
                "peer": root if rooted else -1}

    def completion(self, ev):
        kind = type(ev).__name__
        position, post = self.pending.pop(ev.request_id, (None, None))
        if kind == "MpiIrecv":
            fields = self.p2p(ev, ev.sender)
            if post is not None:  # the post learns its message's communicator and source only now
                self.amend(position, post, comm_id=fields["comm_id"], comm_size=fields["comm_size"])
            return fields
        if kind == "NonBlockingCollectiveComplete" and post is not None:
            self.amend(position, post, **self.collective(ev),
                       call=self.nonblocking_name(post["call"], ev.collective_op))
        return {"peer": -1, "tag": -1}
