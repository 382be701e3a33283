"""Collectives as the point-to-point messages MPICH's default algorithms send
(facts from MPICH's coll/ sources and its CVARs; docs/predict.md lists them):
one rank's part of one collective, as rounds of sends and receives, each round
ending in a wait for all of them.

schedule(name, rank, size, nbytes, root) -> [round, ...], round = [(op, peer, bytes), ...]
with op "send" or "recv"; nbytes is the collective's message size as the
trace records it (the largest over ranks: what one rank contributes; for
all-to-all, everything one rank sends)."""

# MPICH's allreduce (its default selection, measured: docs/predict.md): recursive
# doubling up to this many bytes, and above it while the element count is below
# the power of two the ranks fold onto; reduce-scatter + allgather otherwise.
ALLREDUCE_SHORT = 8
# Broadcasts above this use scatter + allgather (MPIR_CVAR_BCAST_SHORT_MSG_SIZE); binomial below.
BCAST_SHORT = 12288


def _pow2(n):
    return n > 0 and n & (n - 1) == 0


def _exchange(peer, nbytes):
    return [("send", peer, nbytes), ("recv", peer, nbytes)]


def barrier(rank, size):
    """Dissemination: round k talks to rank +- 2^k."""
    rounds, k = [], 1
    while k < size:
        rounds.append([("send", (rank + k) % size, 0), ("recv", (rank - k) % size, 0)])
        k <<= 1
    return rounds


def binomial_bcast(rank, size, nbytes, root):
    vr = (rank - root) % size
    rounds, mask = [], 1
    while mask < size:  # receive from the parent: vr with its lowest set bit cleared
        if vr & mask:
            rounds.append([("recv", (vr - mask + root) % size, nbytes)])
            break
        mask <<= 1
    mask >>= 1
    while mask > 0:
        if vr + mask < size:
            rounds.append([("send", (vr + mask + root) % size, nbytes)])
        mask >>= 1
    return rounds


def binomial_reduce(rank, size, nbytes, root):
    """The broadcast's tree, walked up: children send to their parent."""
    return [[("recv" if op == "send" else "send", peer, n) for op, peer, n in rnd]
            for rnd in reversed(binomial_bcast(rank, size, nbytes, root))]


def recursive_doubling(rank, size, nbytes_at, steps=None):
    """Exchange with rank ^ 2^k; nbytes_at(k) the bytes of step k. Sizes that
    are not powers of two are taken as the next lower power (an approximation)."""
    rounds, k, mask = [], 0, 1
    while mask < size and (steps is None or k < steps):
        peer = rank ^ mask
        if peer < size:
            rounds.append(_exchange(peer, nbytes_at(k)))
        mask <<= 1
        k += 1
    return rounds


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


def allreduce_halves(size, nbytes):
    """MPICH's choice of reduce-scatter + allgather over recursive doubling."""
    return nbytes > ALLREDUCE_SHORT and element_count(nbytes) >= floor_pow2(size)


def folded(rank, size, nbytes, body):
    """MPICH's fold of any size onto its largest power of two pof2: of the first
    2*rem ranks (rem = size - pof2) each even one hands its vector to rank + 1 and
    waits for the result from it; the others run body(newrank, real, pof2), where
    real(newrank) maps a partner back to its rank, odd ones between the two."""
    pof2 = floor_pow2(size)
    rem = size - pof2
    if rank < 2 * rem and rank % 2 == 0:
        return [[("send", rank + 1, nbytes)], [("recv", rank + 1, nbytes)]]
    def real(newrank):
        return 2 * newrank + 1 if newrank < rem else newrank + rem
    if rank < 2 * rem:
        return [[("recv", rank - 1, nbytes)]] + body(rank // 2, real, pof2) + [[("send", rank - 1, nbytes)]]
    return body(rank - rem, real, pof2)


def allreduce(rank, size, nbytes):
    if not allreduce_halves(size, nbytes):
        return folded(rank, size, nbytes, lambda me, real, pof2: [
            _exchange(real(me ^ (1 << k)), nbytes) for k in range(pof2.bit_length() - 1)])
    # reduce-scatter by recursive halving (partners 1, 2, 4, ... apart), then
    # allgather by recursive doubling back (4, 2, 1), the pieces halving and regrowing
    def halve_then_double(me, real, pof2):
        steps = pof2.bit_length() - 1
        halving = [_exchange(real(me ^ (1 << k)), nbytes >> (k + 1)) for k in range(steps)]
        return halving + [list(rnd) for rnd in reversed(halving)]
    return folded(rank, size, nbytes, halve_then_double)


def allgather(rank, size, nbytes):
    if _pow2(size):
        return recursive_doubling(rank, size, lambda k: nbytes << k)
    return [[("send", (rank + 1) % size, nbytes), ("recv", (rank - 1) % size, nbytes)] for _ in range(size - 1)]


def pairwise_alltoall(rank, size, nbytes):
    each = nbytes // size if size else 0
    return [[("send", (rank + i) % size, each), ("recv", (rank - i) % size, each)] for i in range(1, size)]


def linear_gather(rank, size, nbytes, root):
    if rank == root:
        return [[("recv", peer, nbytes) for peer in range(size) if peer != root]]
    return [[("send", root, nbytes)]]


def linear_scatter(rank, size, nbytes, root):
    each = nbytes // size if size else 0
    return [[("recv" if op == "send" else "send", peer, each) for op, peer, _ in rnd]
            for rnd in linear_gather(rank, size, nbytes, root)]


def bcast(rank, size, nbytes, root):
    if nbytes <= BCAST_SHORT or size < 3:
        return binomial_bcast(rank, size, nbytes, root)
    return linear_scatter(rank, size, nbytes, root) + allgather(rank, size, nbytes // size)


def reduce_scatter(rank, size, nbytes):
    if not _pow2(size):
        return allreduce(rank, size, nbytes)
    return [_exchange(rank ^ (size >> (k + 1)), nbytes >> (k + 1)) for k in range(size.bit_length() - 1)]


# name (without MPI_ and a leading I) -> how it is expanded
SCHEDULES = {
    "Barrier": lambda r, p, n, root: barrier(r, p),
    "Bcast": bcast,
    "Reduce": binomial_reduce,
    "Allreduce": lambda r, p, n, root: allreduce(r, p, n),
    "Allgather": lambda r, p, n, root: allgather(r, p, n),
    "Allgatherv": lambda r, p, n, root: allgather(r, p, n),
    "Alltoall": lambda r, p, n, root: pairwise_alltoall(r, p, n),
    "Alltoallv": lambda r, p, n, root: pairwise_alltoall(r, p, n),
    "Alltoallw": lambda r, p, n, root: pairwise_alltoall(r, p, n),
    "Gather": linear_gather,
    "Gatherv": linear_gather,
    "Scatter": linear_scatter,
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
