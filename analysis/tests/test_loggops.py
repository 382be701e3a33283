"""The LogGOPS replay engine and MPICH's collective schedules on hand-made
programs whose critical paths are known exactly."""
import pytest

from loggp.analysis import loggops, schedules
from loggp.analysis.loggops import Params

P = Params(o_s=100.0, o_r=200.0, g=0.0, G=0.0, L=1000.0, S=4096)
K = ("c", 0)  # communicator and tag of every message here


def send(peer, req, nbytes=8):
    return [("isend", peer, K, nbytes, req), ("wait", (req,))]


def recv(peer, req, nbytes=8):
    return [("irecv", peer, K, nbytes, req), ("wait", (req,))]


def run(programs, params=P):
    return loggops.simulate(programs, params)


def test_pingpong_takes_a_message_path_per_half_round_trip():
    n = 10
    a, b = [], []
    for i in range(n):
        a += send(1, ("s", i)) + recv(1, ("r", i))
        b += recv(0, ("r", i)) + send(0, ("s", i))
    result = run([a, b])
    assert result.runtime_ns == pytest.approx(2 * n * (100 + 1000 + 200))
    assert result.overhead_ns == [n * 300, n * 300]


def test_a_pipeline_adds_one_path_per_hop_and_its_computation():
    programs = [
        [("calc", 500.0)] + send(1, "s"),
        recv(0, "r") + [("calc", 50.0)] + send(2, "s"),
        recv(1, "r"),
    ]
    path = 100 + 1000 + 200
    assert run(programs).end_ns[2] == pytest.approx(500 + path + 50 + path)


def test_a_ring_exchange_costs_one_path_whatever_the_size():
    size = 5
    programs = [[("irecv", (r - 1) % size, K, 8, "r"), ("isend", (r + 1) % size, K, 8, "s"), ("wait", ("r", "s"))]
                for r in range(size)]
    assert run(programs).end_ns == pytest.approx([100 + 1000 + 200] * size)


def test_skew_in_an_exchange_is_paid_by_the_early_rank():
    programs = [[("calc", 10000.0), ("irecv", 1, K, 8, "r"), ("isend", 1, K, 8, "s"), ("wait", ("r", "s"))],
                [("irecv", 0, K, 8, "r"), ("isend", 0, K, 8, "s"), ("wait", ("r", "s"))]]
    result = run(programs)
    # rank 1's message was there long ago: rank 0 pays only its own o_s and o_r
    assert result.end_ns[0] == pytest.approx(10000 + 100 + 200)
    assert result.end_ns[1] == pytest.approx(10000 + 100 + 1000 + 200)
    assert result.waiting_ns[1] == pytest.approx(10000 + 100 + 1000 - 100)


def test_computation_after_an_isend_hides_the_flight():
    programs = [[("isend", 1, K, 8, "s"), ("calc", 5000.0), ("wait", ("s",))], recv(0, "r")]
    result = run(programs)
    assert result.end_ns[0] == pytest.approx(100 + 5000)   # not + L: an eager send is done when injected
    assert result.end_ns[1] == pytest.approx(100 + 1000 + 200)


def test_rendezvous_takes_three_flights_pre_posted_and_two_after_a_late_post():
    k = 65536
    p = Params(o_s=0.0, o_r=0.0, G=0.01, L=1000.0, S=4096)
    flight = (k - 1) * 0.01
    early = run([send(1, "s", k), recv(0, "r", k)], p)
    assert early.end_ns[1] == pytest.approx(3 * 1000 + flight)
    assert early.end_ns[0] == pytest.approx(2 * 1000 + flight)   # the sender waits for the go-ahead
    late = run([send(1, "s", k), [("calc", 20000.0)] + recv(0, "r", k)], p)
    assert late.end_ns[1] == pytest.approx(20000 + 2 * 1000 + flight)
    eager = run([send(1, "s", 4096), recv(0, "r", 4096)], p)
    assert eager.end_ns[1] == pytest.approx(1000 + 4095 * 0.01)


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
@pytest.mark.parametrize("S", [0, 1, 4096])
def test_the_rendezvous_threshold_is_the_largest_eager_size(simulate, S):
    # both sides of S: S bytes go eagerly (one flight, the send done at injection),
    # S + 1 bytes take the rendezvous (three flights, the sender waits for the go-ahead)
    p = Params(o_s=0.0, o_r=0.0, G=0.5, L=1000.0, S=S)
    at = simulate([send(1, "s", S), recv(0, "r", S)], p)
    flight = max(S - 1, 0) * 0.5
    assert at.end_ns == pytest.approx([0.0, 1000 + flight])
    above = simulate([send(1, "s", S + 1), recv(0, "r", S + 1)], p)
    flight = S * 0.5
    assert above.end_ns == pytest.approx([2 * 1000 + flight, 3 * 1000 + flight])


@pytest.mark.parametrize("nbytes", [8, 4096, 4097, 65536])
def test_a_message_to_oneself_costs_both_overheads_and_no_network(nbytes):
    # MPI copies it without the network: the apparatus charges o_s + o_r at the send, no L, G or g
    p = Params(o_s=100.0, o_r=200.0, g=5000.0, G=1.0, L=1000.0, S=4096)
    posted = run([[("irecv", 0, K, nbytes, "r"), ("isend", 0, K, nbytes, "s"), ("wait", ("r", "s"))]], p)
    assert posted.end_ns == pytest.approx([300])
    assert posted.overhead_ns == pytest.approx([300])
    late = run([[("isend", 0, K, nbytes, "s"), ("calc", 700.0), ("irecv", 0, K, nbytes, "r"),
                 ("wait", ("s", "r"))]], p)
    assert late.end_ns == pytest.approx([300 + 700])


def test_a_message_to_oneself_leaves_the_gap_to_the_network_messages():
    p = Params(o_s=100.0, o_r=200.0, g=5000.0, L=1000.0)
    programs = [[("isend", 1, K, 8, "a"), ("irecv", 0, K, 8, "r"), ("isend", 0, K, 8, "self"),
                 ("isend", 1, K, 8, "b"), ("wait", ("a", "r", "self", "b"))],
                [("irecv", 0, K, 8, "a"), ("irecv", 0, K, 8, "b"), ("wait", ("a", "b"))]]
    result = run(programs, p)
    assert result.end_ns[0] == pytest.approx(5000 + 100)        # b waits g after a, not after the copy
    assert result.end_ns[1] == pytest.approx(5000 + 100 + 1000 + 200 + 0)  # two receptions g apart
    assert result.overhead_ns[0] == pytest.approx(100 + 300 + 100)


def test_g_is_a_minimum_spacing_of_injections_that_computation_overlaps():
    p = Params(o_s=0.0, o_r=0.0, g=1000.0, L=0.0)
    sends = [("isend", 1, K, 1, i) for i in range(3)]
    assert run([sends, [("irecv", 0, K, 1, i) for i in range(3)]], p).end_ns[0] == pytest.approx(2000)
    overlapped = [("isend", 1, K, 1, 0), ("calc", 1500.0), ("isend", 1, K, 1, 1)]
    assert run([overlapped, [("irecv", 0, K, 1, i) for i in range(2)]], p).end_ns[0] == pytest.approx(1500)


def test_messages_match_in_order_per_sender_and_tag():
    other = ("c", 7)
    programs = [[("isend", 1, K, 8, 0), ("calc", 3000.0), ("isend", 1, other, 8, 1), ("wait", (0, 1))],
                [("irecv", 0, other, 8, "late"), ("irecv", 0, K, 8, "early"), ("wait", ("early",)),
                 ("calc", 1.0), ("wait", ("late",))]]
    result = run(programs, Params(L=1000.0))
    assert result.end_ns[1] == pytest.approx(3000 + 1000)


def test_a_receive_nobody_sends_is_a_deadlock_not_a_hang():
    with pytest.raises(loggops.DeadlockError) as info:
        run([[("calc", 1.0)], recv(0, "r")])
    assert str(info.value) == "the programs cannot finish: rank 1 at operation 1 waits on its irecv with rank 0"
    assert info.value.stuck == [(1, 1, ("irecv", 0))] and info.value.finished == [0]


def test_plus_adds_o_to_both_overheads():
    p = P.plus(o=50.0, L=10.0)
    assert (p.o_s, p.o_r, p.L, p.g) == (150.0, 250.0, 1010.0, 0.0)


# ---- MPICH's schedules --------------------------------------------------------------

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


def test_allreduce_switches_between_eight_and_nine_bytes():
    assert [len(schedules.allreduce(0, 2, n)) for n in (1, 8, 9, 16)] == [1, 1, 2, 2]
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


def test_bcast_switches_to_scatter_allgather_just_above_its_short_size():
    short = schedules.BCAST_SHORT
    assert sorted(messages("Bcast", 4, short, root=1)) == [(1, 2, short), (1, 3, short), (3, 0, short)]
    n = short + 1
    each = n // 4
    got = sorted(messages("Bcast", 4, n, root=1))
    scatter = [(1, r, each) for r in (0, 2, 3)]
    allgather = [(r, r ^ m, each << k) for r in range(4) for k, m in enumerate((1, 2))]
    assert got == sorted(scatter + allgather)


@pytest.mark.parametrize("size, binomial", [(2, True), (3, False), (4, False)])
def test_bcast_of_a_large_message_is_binomial_below_three_ranks(size, binomial):
    big = 1 << 20
    got = messages("Bcast", size, big)
    assert ({n for _, _, n in got} == {big}) == binomial
    assert (len(got) == size - 1) == binomial


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 8])
def test_allgather_doubles_on_a_power_of_two_and_rings_otherwise(size):
    got = sorted(messages("Allgather", size, 8))
    if size & (size - 1) == 0:
        want = [(r, r ^ (1 << k), 8 << k) for r in range(size) for k in range(size.bit_length() - 1)]
    else:
        want = [(r, (r + 1) % size, 8) for r in range(size)] * (size - 1)
    assert got == sorted(want)


@pytest.mark.parametrize("size", [3, 4, 5, 8])
def test_reduce_scatter_halves_on_a_power_of_two_and_is_an_allreduce_otherwise(size):
    big = 1 << 16
    got = sorted(messages("Reduce_scatter", size, big))
    if size & (size - 1) == 0:
        want = [(r, r ^ (size >> (k + 1)), big >> (k + 1)) for r in range(size)
                for k in range(size.bit_length() - 1)]
    else:
        want = sorted(messages("Allreduce", size, big))
    assert got == sorted(want)


def test_barrier_rounds_grow_past_each_power_of_two():
    assert [len(schedules.barrier(0, n)) for n in (1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 2, 3, 3, 4]
