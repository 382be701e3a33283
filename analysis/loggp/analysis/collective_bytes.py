"""A collective's message size in two conventions.

Ours (shim/src/pmpi/collectives.tbl, "bytes this rank sends", the profile's
count): for most collectives one rank's contribution b; for scatter the root's
whole buffer, for all-to-all everything one rank sends.

Score-P's (its MPI adapter's byte counts, as facts; written into OTF2's
MpiCollectiveEnd as sizeSent and sizeReceived, for n ranks, this rank me):

    Barrier                      0 / 0
    Bcast                        root n*b / b, others 0 / b
    Reduce, Gather(v)            root b / n*b, others b / 0
    Scatter(v)                   root n*e / e, others 0 / e      (e = one rank's block)
    Allreduce, Allgather(v)      n*b / n*b
    Alltoall(v,w), Reduce_scatter(_block)   what we record, both ways
    Scan                         (n-me)*b / (me+1)*b
    Exscan                       (n-me-1)*b / me*b

to_scorep(name, b, n, me, root) -> (sent, received); from_scorep(...) -> b, so that
from_scorep(to_scorep(b)) is b on at least one rank and no more than b on any
(the replay takes the largest over ranks)."""

ROOTED = {"Bcast", "Reduce", "Gather", "Gatherv", "Scatter", "Scatterv"}


def to_scorep(name, b, n, me, root):
    b, n = int(b), max(int(n), 1)
    is_root = me == root
    if name == "Barrier":
        return 0, 0
    if name == "Bcast":
        return (n * b if is_root else 0), b
    if name in ("Reduce", "Gather", "Gatherv"):
        return b, (n * b if is_root else 0)
    if name in ("Scatter", "Scatterv"):
        return (b if is_root else 0), b // n
    if name in ("Allreduce", "Allgather", "Allgatherv"):
        return n * b, n * b
    if name == "Scan":
        return (n - me) * b, (me + 1) * b
    if name == "Exscan":
        return (n - me - 1) * b, me * b
    return b, b  # all-to-all and reduce-scatter: the same count


def from_scorep(name, sent, received, n, me, root):
    sent, received, n = int(sent), int(received), max(int(n), 1)
    if name == "Barrier":
        return 0
    if name == "Bcast":
        return received
    if name in ("Allreduce", "Allgather", "Allgatherv"):
        return sent // n
    if name == "Scan":
        return received // (me + 1)
    if name == "Exscan":
        if me < n - 1:
            return sent // (n - me - 1)
        return received // me if me > 0 else 0
    return sent  # Reduce, Gather(v), Scatter(v) (the root's whole buffer), all-to-all, reduce-scatter
