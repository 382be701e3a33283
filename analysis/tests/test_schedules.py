"""MPICH's collective schedules (loggp.analysis.schedules): which algorithm at which size and
process count, both sides of every switch, and the order of each schedule's rounds."""
import pytest

from loggp.analysis import loggops, schedules
from loggp.analysis.loggops import Params


def messages(name, size, nbytes, root=0):
    """Every (sender, receiver, bytes) of one collective, checked to pair up."""
    sent, received = [], []
    for r in range(size):
        for rnd in schedules.schedule(name, r, size, nbytes, root):
            for op, peer, n in rnd:
                (sent if op == "send" else received).append((r, peer, n) if op == "send" else (peer, r, n))
    assert sorted(sent) == sorted(received), name
    return sent


def test_barrier_is_dissemination():
    assert len(schedules.barrier(0, 4)) == 2 and len(schedules.barrier(0, 5)) == 3
    assert sorted(messages("Barrier", 4, 0)) == sorted((r, (r + k) % 4, 0) for r in range(4) for k in (1, 2))


def test_bcast_and_reduce_are_binomial_trees():
    assert sorted(messages("Bcast", 4, 8, root=1)) == [(1, 2, 8), (1, 3, 8), (3, 0, 8)]
    assert sorted(messages("Reduce", 4, 8, root=0)) == [(1, 0, 8), (2, 0, 8), (3, 2, 8)]


def test_allreduce_doubles_small_messages_and_halves_then_doubles_large_ones():
    assert sorted(messages("Allreduce", 2, 8)) == [(0, 1, 8), (1, 0, 8)]
    big = 1 << 20
    assert sorted(messages("Allreduce", 2, big)) == [(0, 1, big // 2)] * 2 + [(1, 0, big // 2)] * 2
    assert len(schedules.allreduce(0, 4, big)) == 4


@pytest.mark.parametrize("name", sorted(schedules.SCHEDULES))
@pytest.mark.parametrize("size", [2, 3, 4])
def test_every_schedule_pairs_its_messages(name, size):
    messages(name, size, 4096, root=size - 1)


@pytest.mark.parametrize("name", ["Bcast", "Reduce", "Gather", "Scatter", "Gatherv", "Scatterv"])
def test_a_rooted_collective_without_a_recorded_root_is_rooted_at_rank_zero(name):
    # a trace gives root -1 when it did not record one (otf2_import reads its sizes at root 0):
    # rank 0 only sends down a broadcast or scatter tree, only receives up a reduce or gather
    got = messages(name, 5, 40, root=-1)
    down = name in ("Bcast", "Scatter", "Scatterv")
    assert not [m for m in got if m[1 if down else 0] == 0], got
    assert [m for m in got if m[0 if down else 1] == 0]


def test_collective_names_map_to_their_schedules():
    assert schedules.base_name("MPI_Iallreduce") == "Allreduce"
    assert schedules.base_name("MPI_Reduce_scatter_block") == "Reduce_scatter_block"
    assert schedules.base_name("MPI_Send") is None


# ---- both sides of every switch of algorithm ------------------------------------------

def contributions(name, size, nbytes):
    """Whose vectors each rank holds at the end, if every message carries
    everything its sender holds when its round starts (a round's sends go out
    at its start, its receives end it)."""
    plans = [schedules.schedule(name, r, size, nbytes) for r in range(size)]
    held = [{r} for r in range(size)]
    step, sent = [0] * size, [False] * size
    inbox = {}   # (sender, receiver) -> [what each message carries, in order]
    progress = True
    while progress:
        progress = False
        for r in range(size):
            if step[r] == len(plans[r]):
                continue
            rnd = plans[r][step[r]]
            if not sent[r]:
                for op, peer, _ in rnd:
                    if op == "send":
                        inbox.setdefault((r, peer), []).append(set(held[r]))
                sent[r] = progress = True
            if any(op == "recv" and not inbox.get((peer, r)) for op, peer, _ in rnd):
                continue
            for op, peer, _ in rnd:
                if op == "recv":
                    held[r] |= inbox[(peer, r)].pop(0)
            step[r] += 1
            sent[r], progress = False, True
    assert step == [len(p) for p in plans], "the schedule deadlocks"
    return held


def critical_rounds(name, size, nbytes):
    """The replay's time for one collective at L = 1 and nothing else: latencies on its critical path."""
    programs = []
    for r in range(size):
        prog = []
        for k, rnd in enumerate(schedules.schedule(name, r, size, nbytes)):
            reqs = [(k, i) for i in range(len(rnd))]
            prog += [("isend" if op == "send" else "irecv", peer, 0, n, req) for (op, peer, n), req in zip(rnd, reqs)]
            prog.append(("wait", tuple(reqs)))
        programs.append(prog)
    return loggops.simulate_reference(programs, Params(L=1.0)).runtime_ns


@pytest.mark.parametrize("nbytes, count", [(8, 1), (16, 2), (24, 3), (12, 3), (28, 7), (36, 9), (3, 3), (9, 9), (257, 257)])
def test_a_size_is_read_as_doubles_then_ints_then_bytes(nbytes, count):
    assert schedules.element_count(nbytes) == count


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 7, 8])
def test_allreduce_halves_above_eight_bytes_once_the_count_reaches_the_power_of_two(size):
    pof2 = 1 << (size.bit_length() - 1)
    steps = pof2.bit_length() - 1
    # at 8 B, and above it while the count (doubles here) is below pof2: one exchange of
    # the whole vector per step; from a count of pof2 on, a halving and a doubling per step
    cases = [(8, False), (9, True), (8 * pof2, True)] + ([(8 * (pof2 - 1), False)] if pof2 > 2 else [])
    for nbytes, halves in cases:
        assert schedules.allreduce_halves(size, nbytes) == halves, nbytes
        folded = size - pof2   # ranks that hand their vector to a neighbour and back
        sizes = sorted({n for _, _, n in messages("Allreduce", size, nbytes)})
        if halves:
            want = {nbytes >> (k + 1) for k in range(steps)} | ({nbytes} if folded else set())
        else:
            want = {nbytes}
        assert sizes == sorted(want), nbytes
        if not folded:
            assert critical_rounds("Allreduce", size, nbytes) == (2 if halves else 1) * steps, nbytes


@pytest.mark.parametrize("size", [2, 4, 8])
def test_allreduce_switches_between_eight_and_nine_bytes(size):
    steps = size.bit_length() - 1
    # up to 8 B recursive doubling, whatever the count (8 chars measured 1 L at 2 ranks)
    assert [critical_rounds("Allreduce", size, n) for n in range(1, 9)] == [steps] * 8
    assert [critical_rounds("Allreduce", size, n) for n in (9, 10, 11, 16 * size)] == [2 * steps] * 4
    if size == 2:
        assert sorted(messages("Allreduce", 2, 9)) == [(0, 1, 4), (0, 1, 4), (1, 0, 4), (1, 0, 4)]


@pytest.mark.parametrize("size", [4, 8])
def test_allreduce_switches_at_a_count_of_the_power_of_two(size):
    below, at = 8 * (size - 1), 8 * size    # doubles
    assert critical_rounds("Allreduce", size, below) == size.bit_length() - 1
    assert critical_rounds("Allreduce", size, at) == 2 * (size.bit_length() - 1)
    assert sorted(messages("Allreduce", size, below)) == \
        sorted((r, r ^ m, below) for r in range(size) for m in (1, 2, 4) if m < size)
    # ints (a size 4 divides and 8 does not): a count of size - 1, and of size + 1
    assert not schedules.allreduce_halves(size, 4 * (size - 1))
    assert schedules.allreduce_halves(size, 4 * (size + 1))


def test_allreduce_halving_pairs_ranks_one_apart_first():
    n = 1024
    assert sorted(messages("Allreduce", 4, n)) == sorted(
        [(r, r ^ 1, n >> 1) for r in range(4)] * 2 + [(r, r ^ 2, n >> 2) for r in range(4)] * 2)
    assert [rnd[0][1] for rnd in schedules.allreduce(0, 4, n)] == [1, 2, 2, 1]


@pytest.mark.parametrize("size", [3, 5, 6, 7, 12])
@pytest.mark.parametrize("nbytes", [8, 1 << 20])
def test_allreduce_folds_a_size_that_is_no_power_of_two(size, nbytes):
    pof2 = 1 << (size.bit_length() - 1)
    rem = size - pof2
    # every rank ends with every rank's vector (recursive doubling; the folding of either)
    if not schedules.allreduce_halves(size, nbytes):
        assert contributions("Allreduce", size, nbytes) == [set(range(size))] * size
    got = messages("Allreduce", size, nbytes)
    # the first 2 rem ranks: each even one hands its whole vector to the next and gets the result back
    for r in range(0, 2 * rem, 2):
        assert schedules.allreduce(r, size, nbytes) == [[("send", r + 1, nbytes)], [("recv", r + 1, nbytes)]]
        assert got.count((r, r + 1, nbytes)) == 1 and got.count((r + 1, r, nbytes)) == 1
    # the pof2 others talk only among themselves
    inside = [r for r in range(size) if r >= 2 * rem or r % 2]
    assert len(inside) == pof2
    assert all(a in inside and b in inside for a, b, n in got if not (a < 2 * rem and b < 2 * rem))


def test_allreduce_at_three_ranks_costs_two_latencies_small_and_four_halved():
    # 0 -> 1 while 2 already sends to 1; 1 -> 2 and 1 -> 0 at once: 2 L (measured 2.07 L a call
    # in a loop of 8 B allreduces, docs/predict.md); halved, 1 <-> 2 twice in turn: 4 L (4.12 L)
    assert sorted(messages("Allreduce", 3, 8)) == [(0, 1, 8), (1, 0, 8), (1, 2, 8), (2, 1, 8)]
    assert critical_rounds("Allreduce", 3, 8) == 2
    assert sorted(messages("Allreduce", 3, 16)) == [(0, 1, 16), (1, 0, 16)] + [(1, 2, 8)] * 2 + [(2, 1, 8)] * 2
    assert critical_rounds("Allreduce", 3, 16) == 4


@pytest.mark.parametrize("size, small, halved", [(5, 3, 6), (6, 3, 6), (7, 4, 6), (12, 4, 8)])
def test_allreduce_folded_critical_paths(size, small, halved):
    # the fold adds a flight before and after the pof2 ranks' part, which overlaps its first step
    assert critical_rounds("Allreduce", size, 8) == small
    assert critical_rounds("Allreduce", size, 1 << 20) == halved


@pytest.mark.parametrize("size", [2, 3, 4, 7])
def test_bcast_below_eight_ranks_is_binomial_at_every_size(size):
    for n in (8, schedules.BCAST_SHORT + 1, 1 << 20):
        got = messages("Bcast", size, n, root=1)
        assert len(got) == size - 1 and {b for _, _, b in got} == {n}
        assert sorted(r for _, r, _ in got) == sorted(set(range(size)) - {1})


@pytest.mark.parametrize("size", [8, 12])
def test_bcast_from_eight_ranks_switches_to_scatter_allgather_just_above_its_short_size(size):
    short, root = schedules.BCAST_SHORT, 1
    got = messages("Bcast", size, short, root=root)
    assert len(got) == size - 1 and {b for _, _, b in got} == {short}
    n = short + 1
    each = n // size
    # a binomial scatter: each rank gets its subtree's blocks from its parent (relative to the root)
    scatter = [(((v - (v & -v)) + root) % size, (v + root) % size, each * schedules.subtree(v, size))
               for v in range(1, size)]
    if size == 8:  # then recursive doubling: blocks 1, 2, 4 to relative partners ^1, ^2, ^4
        allgather = [(r, (((r - root) % 8 ^ m) + root) % 8, each * m) for r in range(8) for m in (1, 2, 4)]
    else:          # a ring of single blocks
        allgather = [(r, (r + 1) % size, each) for r in range(size)] * (size - 1)
    assert sorted(messages("Bcast", size, n, root=root)) == sorted(scatter + allgather)
    assert [len(schedules.bcast(r, 8, 1 << 20, 0)) for r in range(8)] == \
        [3 + 7, 1 + 7, 2 + 7, 1 + 7, 3 + 7, 1 + 7, 2 + 7, 1 + 7]  # above 512 KiB: scatter + a 7-step ring


@pytest.mark.parametrize("size", [8, 16])
def test_bcast_on_a_power_of_two_switches_to_a_ring_just_above_its_medium_size(size):
    # up to BCAST_MEDIUM bytes the scatter's blocks are gathered by recursive doubling
    # (log2 P exchanges), one byte above by a ring (P - 1 steps to the next rank)
    medium, root = schedules.BCAST_MEDIUM, 3
    steps = size.bit_length() - 1
    for n, ring in ((medium - 1, False), (medium, False), (medium + 1, True)):
        for r in range(size):
            v = (r - root) % size
            # the scatter's rounds: the root sends log2 P times, another rank takes its block
            # and passes one on per trailing zero bit of its relative rank
            scatter = steps if v == 0 else 1 + (v & -v).bit_length() - 1
            assert len(schedules.bcast(r, size, n, root)) == scatter + (size - 1 if ring else steps), (n, r)
        to_next = sum((t - s) % size == 1 for s, t, _ in messages("Bcast", size, n, root=root))
        # the ring sends P - 1 blocks to the next rank from every rank; doubling's first step pairs
        # relative ranks 2k and 2k + 1 (half of them one apart), the scatter adds a few more
        assert (to_next >= size * (size - 1)) == ring, (n, to_next)


@pytest.mark.parametrize("size", [2, 3, 4, 5, 8, 12])
def test_scatter_and_gather_are_binomial_trees_of_blocks(size):
    block = 8
    gathered = messages("Gather", size, block, root=0)
    scattered = messages("Scatter", size, block * size, root=0)
    # each rank's block goes up (down) once per level: every edge carries its subtree's blocks
    assert sorted(gathered) == sorted((b, a, n) for a, b, n in scattered)
    assert sum(n for a, b, n in gathered if b == 0) == block * (size - 1)
    assert sum(n for _, _, n in gathered) == block * sum(schedules.subtree(v, size) for v in range(1, size))
    # a rank's depth in the tree is the number of set bits of its relative rank
    assert critical_rounds("Gather", size, block) == max(bin(v).count("1") for v in range(size))


def test_gatherv_and_scatterv_stay_linear():
    assert sorted(messages("Gatherv", 4, 8, root=2)) == [(0, 2, 8), (1, 2, 8), (3, 2, 8)]
    assert sorted(messages("Scatterv", 4, 32, root=2)) == [(2, 0, 8), (2, 1, 8), (2, 3, 8)]


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 8])
def test_reduce_switches_to_reduce_scatter_gather_above_2048_bytes(size):
    short = schedules.REDUCE_SHORT
    tree = messages("Reduce", size, 8)
    assert sorted(messages("Reduce", size, short)) == sorted((a, b, short) for a, b, _ in tree)
    n = short + 8   # 257 doubles: at least pof2 elements here
    got = messages("Reduce", size, n)
    pof2 = 1 << (size.bit_length() - 1)
    rem = size - pof2
    steps = pof2.bit_length() - 1
    # the odd ones of the first 2 rem ranks hand their vector to rank - 1 and sit out
    assert sorted(m for m in got if m[2] == n) == [(r, r - 1, n) for r in range(1, 2 * rem, 2)]
    # halving: every one of the pof2 ranks exchanges n/2, n/4, ...; the gather sends the same
    # pieces back up, the smallest first: 2^k senders of n / 2^(k+1)
    halving = [n >> (k + 1) for k in range(steps)] * pof2
    gather = [n >> (k + 1) for k in range(steps) for _ in range(1 << k)]
    assert sorted(b for _, _, b in got if b != n) == sorted(halving + gather)
    assert critical_rounds("Reduce", size, n) == 2 * steps + (1 if rem else 0)
    # the count, not the bytes, decides too: 511 doubles stay binomial on 512 ranks
    assert not schedules.reduce_halves(512, 8 * 511) and schedules.reduce_halves(512, 8 * 512)


@pytest.mark.parametrize("size", [2, 4, 5])
def test_reduce_leaves_the_binomial_tree_one_byte_past_2048(size):
    # MPICH's tuning: binomial while the message is at most 2048 B; 2049 chars (a count of 2049,
    # above any pof2 here) go to reduce-scatter + gather, whose halving splits the vector
    tree = sorted(messages("Reduce", size, 8))
    assert sorted((a, b, 2048) for a, b, _ in tree) == sorted(messages("Reduce", size, 2048))
    halved = messages("Reduce", size, 2049)
    assert any(n < 2049 for _, _, n in halved) and len(halved) > len(tree)


@pytest.mark.parametrize("size, root", [(3, 1), (5, 1), (6, 3), (7, 5), (6, 0), (5, 4), (4, 2)])
def test_reduce_scatter_gather_reaches_any_root(size, root):
    n = 1 << 16
    messages("Reduce", size, n, root=root)   # pairs up
    pof2 = 1 << (size.bit_length() - 1)
    sat_out = root < 2 * (size - pof2) and root % 2 == 1
    rounds = schedules.reduce(root, size, n, root)
    # the root ends receiving pieces: all but its own block, or (sat out) every one, the first from rank 0
    tail = [rnd for rnd in rounds if all(op == "recv" for op, _, _ in rnd) and rnd[0][2] != n]
    assert sum(b for rnd in tail for _, _, b in rnd) == (n if sat_out else n - n // pof2)
    if sat_out:
        assert tail[0] == [("recv", 0, n // pof2)]
    # every other rank ends with one send
    for r in set(range(size)) - {root}:
        last = schedules.reduce(r, size, n, root)[-1]
        assert len(last) == 1 and last[0][0] == "send", r


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 8, 12])
def test_allgather_switches_by_total_size(size):
    pow2 = size & (size - 1) == 0
    small = messages("Allgather", size, 8)
    if pow2:
        want = [(r, r ^ (1 << k), 8 << k) for r in range(size) for k in range(size.bit_length() - 1)]
    else:  # Bruck's: to rank - 2^k, 2^k blocks, then the rest
        want, k = [], 1
        while k <= size // 2:
            want += [(r, (r - k) % size, 8 * k) for r in range(size)]
            k *= 2
        want += [(r, (r - k) % size, 8 * (size - k)) for r in range(size) if size > k]
    assert sorted(small) == sorted(want)
    # a ring from the total's switch on: 524288 B on a power of two, 81920 B otherwise
    switch = schedules.ALLGATHER_LONG if pow2 else schedules.ALLGATHER_BRUCK
    below, at = (switch - 1) // size, -(-switch // size)
    assert sorted(messages("Allgather", size, at)) == sorted([(r, (r + 1) % size, at) for r in range(size)] * (size - 1))
    assert sorted(messages("Allgather", size, below)) != sorted(
        [(r, (r + 1) % size, below) for r in range(size)] * (size - 1)) or size == 2


@pytest.mark.parametrize("size", [5, 10])
def test_allgather_leaves_brucks_at_a_total_of_81920_bytes(size):
    # MPICH's tuning: Bruck's while the total is below 81920 B on sizes that are no power of two
    at = 81920 // size
    ring = sorted([(r, (r + 1) % size, at) for r in range(size)] * (size - 1))
    assert sorted(messages("Allgather", size, at)) == ring
    below = at - 1
    assert len(schedules.allgather(0, size, below)) == (size - 1).bit_length()   # Bruck's rounds


@pytest.mark.parametrize("size", [3, 4, 5, 8])
def test_reduce_scatter_halves_below_its_long_size_and_goes_pairwise_from_it(size):
    long = schedules.REDUCE_SCATTER_LONG
    n = long - 8 * size
    pof2 = 1 << (size.bit_length() - 1)
    rem = size - pof2
    got = messages("Reduce_scatter", size, n)
    inside = [(a, b, m) for a, b, m in got if m != n and not (a < 2 * rem and b < 2 * rem)]
    assert sorted(m for _, _, m in inside) == sorted([n >> (k + 1) for k in range(pof2.bit_length() - 1)] * pof2)
    # the first 2 rem ranks: the even one's vector to rank + 1, its block back
    assert sorted(m for m in got if m[0] < 2 * rem and m[1] < 2 * rem) == \
        sorted([(r, r + 1, n) for r in range(0, 2 * rem, 2)] + [(r + 1, r, n // size) for r in range(0, 2 * rem, 2)])
    each = long // size
    assert sorted(messages("Reduce_scatter", size, long)) == \
        sorted((r, (r + i) % size, each) for r in range(size) for i in range(1, size))


@pytest.mark.parametrize("size", [2, 3, 4, 5, 7, 8, 12, 33, 40])
def test_alltoall_is_bruck_scattered_or_pairwise_by_the_bytes_a_peer(size):
    def per_peer(each):
        return messages("Alltoall", size, each * size)
    short, medium = schedules.ALLTOALL_SHORT, schedules.ALLTOALL_MEDIUM
    everyone = sorted((r, p, medium) for r in range(size) for p in range(size) if p != r)
    # scattered: everything at once, in one round up to 32 peers
    assert sorted(per_peer(medium)) == everyone
    # (oneself counts in the first block, as in MPICH: 33 ranks take two rounds)
    assert len(schedules.alltoall(0, size, medium * size)) == -(-size // schedules.ALLTOALL_THROTTLE)
    # pairwise above: size - 1 rounds, the same messages
    big = medium + 1
    assert sorted(per_peer(big)) == sorted((a, b, big) for a, b, _ in everyone)
    assert len(schedules.alltoall(0, size, big * size)) == size - 1
    # Bruck's from 8 ranks at 256 B a peer or less: log2 rounds of several blocks
    rounds = schedules.alltoall(0, size, short * size)
    if size >= schedules.ALLTOALL_MIN_BRUCK_RANKS:
        assert len(rounds) == (size - 1).bit_length()
        assert sum(n for rnd in rounds for op, _, n in rnd if op == "send") == \
            short * sum(bin(b).count("1") for b in range(1, size))
    else:
        assert len(rounds) == 1


def test_alltoallv_is_scattered_at_every_size():
    for n in (8, 1 << 20):
        assert len(schedules.schedule("Alltoallv", 0, 4, n)) == 1
        assert sorted(messages("Alltoallv", 4, n)) == sorted((r, p, n // 4) for r in range(4) for p in range(4) if p != r)


def test_barrier_rounds_grow_past_each_power_of_two():
    assert [len(schedules.barrier(0, n)) for n in (1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 2, 3, 3, 4]


# ---- the order of a schedule's rounds (MPICH's loops), not only its messages ------------

def test_a_binomial_tree_sends_to_its_farthest_child_first():
    # MPICH's binomial bcast walks its mask down: the root's largest subtree is served first
    assert [rnd[0][1] for rnd in schedules.bcast(0, 8, 8, 0)] == [4, 2, 1]
    assert [rnd[0][1] for rnd in schedules.bcast(3, 8, 8, 3)] == [7, 5, 4]
    assert schedules.bcast(4, 8, 8, 0) == [[("recv", 0, 8)], [("send", 6, 8)], [("send", 5, 8)]]


@pytest.mark.parametrize("name", ["Scan", "Exscan"])
def test_a_scan_exchanges_its_whole_partial_result_at_every_step(name):
    # recursive doubling with the whole vector each step; a partner beyond the size is skipped
    assert schedules.schedule(name, 0, 8, 64) == [_pair(1, 64), _pair(2, 64), _pair(4, 64)]
    assert schedules.schedule(name, 4, 5, 64) == [_pair(0, 64)]


def _pair(peer, n):
    return [("send", peer, n), ("recv", peer, n)]


def test_reduce_scatter_halves_with_the_farthest_partner_first():
    # MPICH's recursive halving starts pof2/2 apart with half the vector
    n = 1024
    assert schedules.reduce_scatter(0, 8, n) == [_pair(4, 512), _pair(2, 256), _pair(1, 128)]


def test_bcast_recursive_doubling_grows_its_blocks_from_the_nearest_partner():
    n = schedules.BCAST_SHORT + 8 * 1000
    each = n // 8
    rounds = schedules.bcast(0, 8, n, 1)   # relative rank 7, a leaf: gets its block from rank 7
    assert rounds == [[("recv", 7, each)], _pair(7, each), _pair(6, 2 * each), _pair(4, 4 * each)]


@pytest.mark.parametrize("size, first, second", [(33, 31, 1), (40, 31, 8), (64, 31, 32)])
def test_alltoall_posts_32_peers_at_a_time(size, first, second):
    # MPICH's MPIR_CVAR_ALLTOALL_THROTTLE (32) requests each way a round, oneself among the first
    rounds = schedules.alltoall(0, size, schedules.ALLTOALL_MEDIUM * size)
    assert [sum(op == "send" for op, _, _ in rnd) for rnd in rounds] == [first, second]
