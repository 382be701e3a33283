"""The LogGOPS replay engine on hand-made programs whose critical paths are known exactly
(MPICH's collective schedules: test_schedules.py)."""
import pytest

from loggp.analysis import loggops
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


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_an_eager_synchronous_send_is_done_L_after_the_receiver_takes_it(simulate):
    # no overheads: the answer leaves when the message is taken, max(arrival, post), and takes L
    p = Params(o_s=0.0, o_r=0.0, G=0.5, L=1000.0, S=4096)
    arrival = 4095 * 0.5 + 1000
    ssend = [("isend", 1, K, 4096, "s", "sync"), ("wait", ("s",))]
    early = simulate([ssend, recv(0, "r", 4096)], p)
    assert early.end_ns == pytest.approx([arrival + 1000, arrival])
    late = simulate([ssend, [("calc", 9000.0)] + recv(0, "r", 4096)], p)
    assert late.end_ns == pytest.approx([9000 + 1000, 9000])


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_the_answer_to_a_synchronous_send_costs_o_s_at_the_receiver_and_o_r_at_the_sender(simulate):
    p = Params(o_s=100.0, o_r=200.0, g=0.0, G=0.0, L=1000.0, S=4096)
    result = simulate([[("isend", 1, K, 8, "s", "sync"), ("wait", ("s",))], recv(0, "r")], p)
    # 100 injected, 1100 arrived, 1300 taken, 1400 answered, 2400 there, 2600 taken
    assert result.end_ns == pytest.approx([2600, 1400])
    assert result.overhead_ns == pytest.approx([300, 300])


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_a_buffered_send_is_done_at_its_injection_above_S(simulate):
    p = Params(o_s=100.0, o_r=200.0, G=0.0, L=1000.0, S=4096)
    result = simulate([[("isend", 1, K, 65536, "s", "buffered"), ("wait", ("s",))],
                       [("calc", 3000.0)] + recv(0, "r", 65536)], p)
    assert result.end_ns == pytest.approx([100, 3000 + 1000 + 1000 + 200])


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


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_a_ranks_time_splits_into_computation_overhead_and_waiting(simulate):
    p = Params(o_s=100.0, o_r=200.0, g=1000.0, L=1000.0, S=4096)
    # a stream after 500 ns of computation: each send after the first stands 900 ns for the NIC;
    # the receiver waits for the first arrival (1600), then for each next one, g after the last
    stream = simulate([[("calc", 500.0)] + [("isend", 1, K, 8, i) for i in range(3)] + [("wait", (0, 1, 2))],
                       [("irecv", 0, K, 8, i) for i in range(3)] + [("wait", (0, 1, 2))]], p)
    assert stream.end_ns == pytest.approx([2600, 3800])
    assert stream.compute_ns == pytest.approx([500, 0])
    assert stream.overhead_ns == pytest.approx([300, 600])
    assert stream.waiting_ns == pytest.approx([1800, 1600 + 800 + 800])
    # rendezvous, receive posted first: the sender waits for the go-ahead (2 L after its o_s),
    # the receiver for the data (3 L)
    big = simulate([send(1, "s", 8192), recv(0, "r", 8192)], p)
    assert big.end_ns == pytest.approx([2100, 3300])
    assert big.overhead_ns == pytest.approx([100, 200])
    assert big.waiting_ns == pytest.approx([2000, 3100])


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_receptions_of_messages_that_arrive_together_are_g_apart(simulate):
    # LogP's g spaces receptions as it spaces injections: two senders' messages land at once
    # (o_s + L = 1100), the receiver takes the first then (o_r: 1300) and the second g after the
    # first (2100, o_r: 2300), not as soon as its o_r is paid (1300, 1500)
    p = Params(o_s=100.0, o_r=200.0, g=1000.0, L=1000.0)
    got = simulate([send(2, "a"), send(2, "b"),
                    [("irecv", 0, K, 8, "a"), ("irecv", 1, K, 8, "b"), ("wait", ("a", "b"))]], p)
    assert got.end_ns == pytest.approx([100, 100, 2300])
    assert got.waiting_ns[2] == pytest.approx(1100 + 800)   # until the first arrives, then the gap


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
@pytest.mark.parametrize("nbytes, spacing", [(0, 100), (1, 100), (2, 101), (1001, 1100)])
def test_back_to_back_injections_are_g_plus_k_minus_one_G_apart(simulate, nbytes, spacing):
    # the NIC is busy g + (k - 1) G after injecting k bytes: k G (or (k - 1) G without the
    # floor at 0) would move every second send of a stream
    p = Params(o_s=0.0, o_r=0.0, g=100.0, G=1.0, L=0.0, S=1 << 20)
    sends = [("isend", 1, K, nbytes, i) for i in range(3)] + [("wait", (0, 1, 2))]
    got = simulate([sends, [("irecv", 0, K, nbytes, i) for i in range(3)] + [("wait", (0, 1, 2))]], p)
    assert got.end_ns[0] == pytest.approx(2 * spacing)


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
@pytest.mark.parametrize("queued", ["receives", "sends"])
def test_the_oldest_waiting_partner_is_matched_first(simulate, queued):
    # two messages of one key, 5 us apart; whichever side waits on the channel (receives posted
    # before any send, or sends before any receive), the first receive takes the first message:
    # the receiver's 3 us of computation between its waits then overlap the second's flight
    go = ("c", 9)
    if queued == "receives":   # rank 0 sends only after rank 1 has posted both receives
        first_send_at = 1000
        sender = [("irecv", 1, go, 8, "go"), ("wait", ("go",))]
        receiver_start = [("irecv", 0, K, 8, "first"), ("irecv", 0, K, 8, "second"), ("isend", 0, go, 8, "go")]
    else:                      # both sends are queued before rank 1 posts at 10 us
        first_send_at = 0
        sender = []
        receiver_start = [("calc", 10000.0), ("irecv", 0, K, 8, "first"), ("irecv", 0, K, 8, "second")]
    sender += [("isend", 1, K, 8, "a"), ("calc", 20000.0), ("isend", 1, K, 8, "b"), ("wait", ("a", "b"))]
    receiver = receiver_start + [("wait", ("first",)), ("calc", 3000.0), ("wait", ("second",))]
    got = simulate([sender, receiver], Params(L=1000.0))
    second_arrives = first_send_at + 20000 + 1000
    assert got.end_ns[1] == pytest.approx(second_arrives)


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


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
@pytest.mark.parametrize("g", [0.0, 1000.0])
def test_a_wait_takes_its_receives_as_they_arrived_whatever_their_order(simulate, g):
    # rank 0 computes 4000 before sending, rank 1 sends at once: b lands at o_s + L = 1100 and
    # a at 4000 + 1100 = 5100. The receiver takes b (o_r: 1300), then a on arrival (5300),
    # whichever order its wait lists them in; taking them in list order would pay b's o_r
    # (and the gap) after a's arrival: 5500, or 6300 with g = 1000
    p = Params(o_s=100.0, o_r=200.0, g=g, L=1000.0)
    late = [("calc", 4000.0)] + send(2, "a")
    for order in (("a", "b"), ("b", "a")):
        got = simulate([late, send(2, "b"),
                        [("irecv", 0, K, 8, "a"), ("irecv", 1, K, 8, "b"), ("wait", order)]], p)
        assert got.end_ns[2] == pytest.approx(5300), order
        assert got.waiting_ns[2] == pytest.approx(5100 - 200), order


@pytest.mark.parametrize("simulate", [loggops.simulate, loggops.simulate_reference], ids=["core", "python"])
def test_a_long_wait_listed_backwards_still_takes_each_receive_as_it_arrives(simulate):
    # 40 messages 1100 apart (1000 of computation and o_s each), the last landing at
    # 40 * 1100 + L = 45000: the receiver, waiting on all 40 listed last first, takes each on
    # arrival and ends o_r after the last (45200), not 39 o_r later as in list order (53000)
    p = Params(o_s=100.0, o_r=200.0, L=1000.0)
    sender = [op for i in range(40) for op in [("calc", 1000.0)] + send(1, i)]
    receiver = [("irecv", 0, K, 8, i) for i in range(40)] + [("wait", tuple(reversed(range(40))))]
    assert simulate([sender, receiver], p).end_ns[1] == pytest.approx(45200)
