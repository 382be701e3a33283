"""Collectives as the point-to-point messages MPICH's default algorithms send
(facts from MPICH's default selection and coll/ sources; docs/predict.md lists
them and what was measured): one rank's part of one collective, as rounds of
sends and receives, each round ending in a wait for all of them.

schedule(name, rank, size, nbytes, root) -> [round, ...], round = [(op, peer, bytes), ...]
with op "send" or "recv"; nbytes is the collective's message size as the
trace records it (the largest over ranks: what one rank contributes; for
scatter the root's whole buffer; for all-to-all and reduce-scatter,
everything one rank sends)."""

# Allreduce: recursive doubling up to this many bytes, and above it while the
# element count is below the power of two the ranks fold onto; reduce-scatter +
# allgather otherwise.
ALLREDUCE_SHORT = 8
# Reduce: binomial up to this many bytes, and above it while the count is below
# that power of two; reduce-scatter + gather otherwise.
REDUCE_SHORT = 2048
# Broadcasts on 8 ranks or more: binomial up to BCAST_SHORT bytes, above it a
# scatter + allgather (recursive doubling on a power of two up to BCAST_MEDIUM,
# else a ring). Fewer ranks: binomial at every size.
BCAST_SHORT, BCAST_MEDIUM, BCAST_MIN_RANKS = 12288, 524288, 8
# Allgather: recursive doubling (power-of-two sizes) below this total, Bruck's
# (other sizes) below ALLGATHER_BRUCK, a ring above.
ALLGATHER_LONG, ALLGATHER_BRUCK = 524288, 81920
# Reduce-scatter: recursive halving below this total, pairwise above.
REDUCE_SCATTER_LONG = 524288
# Alltoall: Bruck's up to ALLTOALL_SHORT bytes per peer (8 ranks or more),
# scattered (every peer at once, ALLTOALL_THROTTLE at a time) up to
# ALLTOALL_MEDIUM, pairwise above. Alltoallv and w: scattered.
ALLTOALL_SHORT, ALLTOALL_MEDIUM, ALLTOALL_MIN_BRUCK_RANKS, ALLTOALL_THROTTLE = 256, 32768, 8, 32


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


def _exchange(peer, nbytes):
    return [("send", peer, nbytes), ("recv", peer, nbytes)]


def _shift(rank, size, k, nbytes):
    """Send to rank + k, receive from rank - k."""
    return [("send", (rank + k) % size, nbytes), ("recv", (rank - k) % size, nbytes)]


def _swapped(rounds):
    """The same messages the other way: sends become receives."""
    return [[("recv" if op == "send" else "send", peer, n) for op, peer, n in rnd] for rnd in rounds]


def floor_pow2(n):
    """The largest power of two <= n (n >= 1)."""
    return 1 << (n.bit_length() - 1)


def element_count(nbytes):
    """The element count behind a size: the trace records bytes, not the count and
    type, so 8-byte elements when 8 divides it, else 4-byte ones, else bytes."""
    for width in (8, 4):
        if nbytes % width == 0:
            return nbytes // width
    return nbytes


def barrier(rank, size):
    """Dissemination: round k talks to rank +- 2^k."""
    rounds, k = [], 1
    while k < size:
        rounds.append(_shift(rank, size, k, 0))
        k <<= 1
    return rounds


def subtree(vr, size):
    """How many ranks the binomial tree (relative rank vr, root 0) puts under vr, itself included."""
    return size if vr == 0 else min(vr & -vr, size - vr)


def binomial_tree(rank, size, root, edge_bytes):
    """Top-down: receive from the parent (vr with its lowest set bit cleared),
    then send to each child, farthest first; edge_bytes(child's vr)."""
    vr = (rank - root) % size
    rounds, mask = [], 1
    while mask < size:
        if vr & mask:
            rounds.append([("recv", (vr - mask + root) % size, edge_bytes(vr))])
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:
        if vr + mask < size:
            rounds.append([("send", (vr + mask + root) % size, edge_bytes(vr + mask))])
        mask >>= 1
    return rounds


def binomial_bcast(rank, size, nbytes, root):
    return binomial_tree(rank, size, root, lambda child: nbytes)


def binomial_reduce(rank, size, nbytes, root):
    """The broadcast's tree, walked up: children send to their parent."""
    return _swapped(reversed(binomial_bcast(rank, size, nbytes, root)))


def binomial_scatter(rank, size, nbytes, root):
    """nbytes: the root's whole buffer; each edge carries its subtree's blocks."""
    each = nbytes // size if size else 0
    return binomial_tree(rank, size, root, lambda child: each * subtree(child, size))


def binomial_gather(rank, size, nbytes, root):
    """nbytes: one rank's block; each edge carries its subtree's blocks up."""
    return _swapped(reversed(binomial_tree(rank, size, root, lambda child: nbytes * subtree(child, size))))


def recursive_doubling(rank, size, nbytes_at):
    """Exchange with rank ^ 2^k; nbytes_at(k) the bytes of step k. A partner
    beyond the size is skipped (MPICH's scan and exscan do so)."""
    rounds, k, mask = [], 0, 1
    while mask < size:
        peer = rank ^ mask
        if peer < size:
            rounds.append(_exchange(peer, nbytes_at(k)))
        mask <<= 1
        k += 1
    return rounds


def folded(rank, size, nbytes, body, back=None, odd_joins=True):
    """MPICH's fold of any size onto its largest power of two pof2: of the first
    2*rem ranks (rem = size - pof2), one of each pair hands its whole vector to
    the other and sits out: the even one to rank + 1 (odd_joins), or the odd one
    to rank - 1. The pof2 others run body(newrank, real, pof2), real(newrank)
    the rank of a partner; then the joined rank sends `back` bytes (default
    nbytes; 0: nothing) to the one that sat out."""
    back = nbytes if back is None else back
    pof2 = floor_pow2(size)
    rem = size - pof2
    joins = (rank % 2 == 1) == odd_joins

    def real(newrank):
        if newrank < rem:
            return 2 * newrank + 1 if odd_joins else 2 * newrank
        return newrank + rem
    if rank >= 2 * rem:
        return body(rank - rem, real, pof2)
    partner = rank + 1 if rank % 2 == 0 else rank - 1
    if not joins:
        return [[("send", partner, nbytes)]] + ([[("recv", partner, back)]] if back else [])
    return [[("recv", partner, nbytes)]] + body(rank // 2, real, pof2) + ([[("send", partner, back)]] if back else [])


def allreduce_halves(size, nbytes):
    """MPICH's choice of reduce-scatter + allgather over recursive doubling."""
    return nbytes > ALLREDUCE_SHORT and element_count(nbytes) >= floor_pow2(size)


def _halving(me, real, pof2, nbytes):
    """Recursive halving, partners 1, 2, 4, ... apart: the piece halves each step."""
    return [_exchange(real(me ^ (1 << k)), nbytes >> (k + 1)) for k in range(pof2.bit_length() - 1)]


def allreduce(rank, size, nbytes):
    if not allreduce_halves(size, nbytes):
        return folded(rank, size, nbytes, lambda me, real, pof2: [
            _exchange(real(me ^ (1 << k)), nbytes) for k in range(pof2.bit_length() - 1)])
    # reduce-scatter by recursive halving, then allgather by recursive doubling
    # back (partners 4, 2, 1 apart), the pieces regrowing
    def halve_then_double(me, real, pof2):
        halving = _halving(me, real, pof2, nbytes)
        return halving + [list(rnd) for rnd in reversed(halving)]
    return folded(rank, size, nbytes, halve_then_double)


def reduce_halves(size, nbytes):
    """MPICH's choice of reduce-scatter + gather over the binomial tree."""
    return nbytes > REDUCE_SHORT and element_count(nbytes) >= floor_pow2(size)


def reduce_scatter_gather(rank, size, nbytes, root):
    """Folded (odd ranks hand their vector to rank - 1), recursive halving, then a
    binomial gather of the pieces to the root's newrank, partners pof2/2 apart
    first. A root that sat out gets the first piece from rank 0 and gathers in
    its place."""
    pof2 = floor_pow2(size)
    rem = size - pof2
    root_sat_out = root < 2 * rem and root % 2 == 1
    newroot = 0 if root_sat_out else (root // 2 if root < 2 * rem else root - rem)
    first_piece = nbytes // pof2

    def gather(me, real, pof2):
        rounds = []
        for k in reversed(range(pof2.bit_length() - 1)):
            mask = 1 << k
            partner = me ^ mask
            peer = root if partner == 0 and root_sat_out else real(partner)
            if partner >> k == newroot >> k:
                rounds.append([("send", peer, nbytes >> (k + 1))])
                break
            rounds.append([("recv", peer, nbytes >> (k + 1))])
        return rounds

    def body(me, real, pof2):
        rounds = _halving(me, real, pof2, nbytes)
        if root_sat_out and me == 0:
            return rounds + [[("send", root, first_piece)]]
        return rounds + gather(me, real, pof2)
    if root_sat_out and rank == root:
        # sits out the halving, then takes newrank 0's place in the gather
        return [[("send", root - 1, nbytes)], [("recv", 0, first_piece)]] + \
            gather(0, lambda nr: 2 * nr if nr < rem else nr + rem, pof2)
    return folded(rank, size, nbytes, body, back=0, odd_joins=False)


def reduce(rank, size, nbytes, root):
    if reduce_halves(size, nbytes):
        return reduce_scatter_gather(rank, size, nbytes, root)
    return binomial_reduce(rank, size, nbytes, root)


def ring(rank, size, nbytes):
    return [_shift(rank, size, 1, nbytes) for _ in range(size - 1)]


def bruck_allgather(rank, size, nbytes):
    """Receive from rank + 2^k, send to rank - 2^k, 2^k blocks each, then the rest."""
    rounds, k = [], 1
    while k <= size // 2:
        rounds.append(_shift(rank, size, -k, nbytes * k))
        k *= 2
    if size - k:
        rounds.append(_shift(rank, size, -k, nbytes * (size - k)))
    return rounds


def allgather(rank, size, nbytes):
    total = nbytes * size
    if _pow2(size) and total < ALLGATHER_LONG:
        return recursive_doubling(rank, size, lambda k: nbytes << k)
    if not _pow2(size) and total < ALLGATHER_BRUCK:
        return bruck_allgather(rank, size, nbytes)
    return ring(rank, size, nbytes)


def scattered(rank, size, each):
    """Every peer at once, ALLTOALL_THROTTLE of them a round (itself left out:
    MPI copies to itself)."""
    rounds = []
    for start in range(0, size, ALLTOALL_THROTTLE):
        ks = [k for k in range(start, min(start + ALLTOALL_THROTTLE, size)) if k]
        if ks:
            rounds.append([("recv", (rank + k) % size, each) for k in ks]
                          + [("send", (rank - k) % size, each) for k in ks])
    return rounds


def pairwise(rank, size, each):
    """Round i: partner rank ^ i on a power of two, else send to rank + i, receive from rank - i."""
    if _pow2(size):
        return [_exchange(rank ^ i, each) for i in range(1, size)]
    return [_shift(rank, size, i, each) for i in range(1, size)]


def bruck_alltoall(rank, size, each):
    """Round k: to rank + 2^k, from rank - 2^k, the blocks whose index has bit k."""
    rounds, k = [], 1
    while k < size:
        blocks = sum(1 for b in range(1, size) if b & k)
        rounds.append(_shift(rank, size, k, each * blocks))
        k <<= 1
    return rounds


def alltoall(rank, size, nbytes):
    each = nbytes // size if size else 0
    if size >= ALLTOALL_MIN_BRUCK_RANKS and each <= ALLTOALL_SHORT:
        return bruck_alltoall(rank, size, each)
    if each <= ALLTOALL_MEDIUM:
        return scattered(rank, size, each)
    return pairwise(rank, size, each)


def linear_gather(rank, size, nbytes, root):
    if rank == root:
        return [[("recv", peer, nbytes) for peer in range(size) if peer != root]]
    return [[("send", root, nbytes)]]


def linear_scatter(rank, size, nbytes, root):
    each = nbytes // size if size else 0
    return _swapped(linear_gather(rank, size, each, root))


def bcast(rank, size, nbytes, root):
    if size < BCAST_MIN_RANKS or nbytes <= BCAST_SHORT:
        return binomial_bcast(rank, size, nbytes, root)
    each = nbytes // size
    scatter = binomial_scatter(rank, size, each * size, root)
    if _pow2(size) and nbytes <= BCAST_MEDIUM:
        vr = (rank - root) % size
        return scatter + [_exchange(((vr ^ (1 << k)) + root) % size, each << k) for k in range(size.bit_length() - 1)]
    return scatter + ring(rank, size, each)


def reduce_scatter(rank, size, nbytes):
    if nbytes >= REDUCE_SCATTER_LONG:
        return [_shift(rank, size, i, nbytes // size) for i in range(1, size)]
    # folded (as allreduce), recursive halving with partners pof2/2 apart first;
    # the joined rank sends the sat-out one its block
    return folded(rank, size, nbytes, lambda me, real, pof2: [
        _exchange(real(me ^ (pof2 >> (k + 1))), nbytes >> (k + 1)) for k in range(pof2.bit_length() - 1)],
        back=nbytes // size)


# name (without MPI_ and a leading I) -> how it is expanded
SCHEDULES = {
    "Barrier": lambda r, p, n, root: barrier(r, p),
    "Bcast": bcast,
    "Reduce": reduce,
    "Allreduce": lambda r, p, n, root: allreduce(r, p, n),
    "Allgather": lambda r, p, n, root: allgather(r, p, n),
    "Allgatherv": lambda r, p, n, root: allgather(r, p, n),
    "Alltoall": lambda r, p, n, root: alltoall(r, p, n),
    "Alltoallv": lambda r, p, n, root: scattered(r, p, n // p if p else 0),
    "Alltoallw": lambda r, p, n, root: scattered(r, p, n // p if p else 0),
    "Gather": binomial_gather,
    "Gatherv": linear_gather,
    "Scatter": binomial_scatter,
    "Scatterv": linear_scatter,
    "Reduce_scatter": lambda r, p, n, root: reduce_scatter(r, p, n),
    "Reduce_scatter_block": lambda r, p, n, root: reduce_scatter(r, p, n),
    "Scan": lambda r, p, n, root: recursive_doubling(r, p, lambda k: n),
    "Exscan": lambda r, p, n, root: recursive_doubling(r, p, lambda k: n),
}


def base_name(call):
    """'MPI_Iallreduce' -> 'Allreduce'; None for a call that is no collective."""
    name = call[4:] if call.startswith("MPI_") else call
    if name in SCHEDULES:
        return name
    if name.startswith("I") and name[1:].capitalize() in SCHEDULES:
        return name[1:].capitalize()
    return None


def schedule(name, rank, size, nbytes, root=0):
    return SCHEDULES[name](rank, size, int(nbytes), max(root, 0))
