"""Martin's count x delta models, fed by the measured profile.

From the baseline runs' profiles (per-rank JSON written by libloggp.so):
  overhead   dT = sent(busiest) * do_s + received(busiest) * do_r   (2*m*do when both move)
  bulk       dT = bytes sent over the network (busiest) * dG
  latency    dT = dependent messages on the busiest rank * dL
  gap        dT = stall the shim actually added on the busiest rank (profiles
             of the gap runs): gap costs only inside bursts faster than 1/g;
             sent(busiest) * dg is the upper bound if every message were in one.
The profile counts point-to-point messages the application posts; messages
inside collectives are estimated from the profile's collective call counts,
and the report says where it used that estimate. A message a rank sends
itself (`sent_to_self`) pays o_s + o_r at its send and nothing else, so it
counts for o and not for L, g or G.
"""
import math
import re

# Collectives that move P-1 messages per rank per call (pairwise exchange);
# the rest are taken as trees or recursive doubling: ceil(log2 P) messages.
PAIRWISE = {"MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Allgather",
            "MPI_Allgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Iallgather",
            "MPI_Iallgatherv", "MPI_Neighbor_alltoall", "MPI_Neighbor_allgather"}
# Calls after which a rank waits for a message: each exposes one latency.
BLOCKING = {"MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Wait", "MPI_Waitall",
            "MPI_Waitany", "MPI_Waitsome", "MPI_Probe", "MPI_Ssend", "MPI_Mprobe"}


def collective_messages(name, calls, size):
    if size <= 1:
        return 0
    per_call = size - 1 if name in PAIRWISE else math.ceil(math.log2(size))
    return calls * per_call


def collective_bytes(name, payload, size):
    """Bytes a rank puts on the wire for a collective whose send payload is given."""
    if size <= 1:
        return 0
    if name in PAIRWISE:
        return payload * (size - 1) / size   # its own block stays home
    return payload * math.ceil(math.log2(size))


def _mpi_name(name):
    # Some profiles spell collectives "MPI_MPI_Allreduce"; both mean MPI_Allreduce.
    return re.sub(r"^(MPI_)+", "MPI_", name)


def rank_counts(rank_profile):
    """Counts one rank contributes to the models."""
    size = rank_profile.get("size", 1)
    sent = rank_profile.get("sent", {})
    received = rank_profile.get("received", {})
    coll = {_mpi_name(n): c for n, c in (rank_profile.get("collectives", {}) or {}).items()}
    coll_msgs = sum(collective_messages(n, c.get("calls", 0), size) for n, c in coll.items())
    coll_bytes = sum(collective_bytes(n, c.get("bytes", 0), size) for n, c in coll.items())
    coll_calls = sum(c.get("calls", 0) for c in coll.values())
    calls = rank_profile.get("calls", {}) or {}
    blocking = sum(v for k, v in calls.items() if k in BLOCKING)
    to_self = rank_profile.get("sent_to_self", {}) or {}
    self_msgs, self_bytes = to_self.get("messages", 0), to_self.get("bytes", 0)
    return {
        "sent_messages": sent.get("messages", 0) + coll_msgs,
        "received_messages": received.get("messages", 0) + coll_msgs,
        "sent_bytes": sent.get("bytes", 0) + coll_bytes,
        "network_messages": max(sent.get("messages", 0) - self_msgs, 0) + coll_msgs,
        "network_bytes": max(sent.get("bytes", 0) - self_bytes, 0) + coll_bytes,
        "p2p_messages": sent.get("messages", 0),
        "collective_messages_estimate": coll_msgs,
        "collective_calls": coll_calls,
        "dependent_messages": max(blocking - self_msgs, 0) + coll_msgs,  # a wait for oneself waits for no L
        "injected_ns": rank_profile.get("injected_ns", {}) or {},
        "wall_seconds": rank_profile.get("wall_seconds"),
    }


def busiest(profile):
    """Model inputs from a merged profile: for each count, its busiest rank."""
    ranks = [rank_counts(r) for r in profile.get("ranks", [])]
    if not ranks:
        return None
    keys = ("sent_messages", "received_messages", "sent_bytes", "network_messages", "network_bytes", "p2p_messages",
            "collective_messages_estimate", "collective_calls", "dependent_messages")
    out = {k: max(r[k] for r in ranks) for k in keys}
    out["overhead_messages"] = max(r["sent_messages"] + r["received_messages"] for r in ranks)
    out["size"] = profile.get("size", len(ranks))
    out["engine"] = profile.get("engine")
    return out


def injected_busiest(profile, knob):
    """Largest delay the shim added for one knob on any rank, in seconds."""
    key = {"o": None, "o_s": "o_s", "o_r": "o_r", "g": "g", "G": "G", "L": "L"}[knob]
    best = None
    for r in profile.get("ranks", []):
        inj = r.get("injected_ns", {}) or {}
        value = inj.get("o_s", 0) + inj.get("o_r", 0) if key is None else inj.get(key, 0)
        best = value if best is None else max(best, value)
    return None if best is None else best * 1e-9


def per_unit_cost(counts, knob):
    """Model slope: seconds of added runtime per ns of the knob (per ns/B for G).
    None for the gap, whose cost depends on the burst timing, not a count."""
    if counts is None:
        return None
    if knob == "o":
        return counts["overhead_messages"] * 1e-9
    if knob == "o_s":
        return counts["sent_messages"] * 1e-9
    if knob == "o_r":
        return counts["received_messages"] * 1e-9
    if knob == "G":
        return counts["network_bytes"] * 1e-9
    if knob == "L":
        return counts["dependent_messages"] * 1e-9
    return None


def gap_upper_bound(counts):
    return None if counts is None else counts["network_messages"] * 1e-9


COUNT_LABEL = {
    "o": "messages sent + received by the busiest rank (2m)",
    "o_s": "messages sent by the busiest rank",
    "o_r": "messages received by the busiest rank",
    "G": "bytes sent by the busiest rank",
    "L": "dependent messages (blocking receives/waits + collective rounds) of the busiest rank",
    "g": "stall the shim added on the busiest rank (gap bites only in bursts)",
}
