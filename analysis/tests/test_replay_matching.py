"""Every matching path of a trace's replay, on hand-made traces whose times are
known exactly: wildcard receives (resolved by their completion), in-order
matching per (source, communicator, tag), Sendrecv(_replace), probes,
persistent requests, freed requests, each test and wait call, messages to
oneself and MPI_PROC_NULL. Each trace is replayed three ways: the core reading
the files (predict.load), and replay.build's programs in the core and in the
Python reference; all three must give the expected times."""
import numpy as np

import pytest

from loggp.analysis import loggops, predict, replay, synth, trace
from loggp.analysis.loggops import Params

NAMES = ("MPI_Bcast", "MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Wait",
         "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome",
         "MPI_Iprobe", "MPI_Probe", "MPI_Send_init", "MPI_Recv_init", "MPI_Start", "MPI_Startall",
         "MPI_Request_free", "MPI_Allreduce", "MPI_Bsend", "MPI_Rsend", "MPI_Ssend", "MPI_Ibsend", "MPI_Irsend",
         "MPI_Issend", "MPI_Bsend_init", "MPI_Rsend_init", "MPI_Ssend_init", "MPI_Iallreduce", "MPI_Comm_idup")
ANY_SOURCE, ANY_TAG, PROC_NULL = -2, -1, -1
WORLD, DUP = 0x44000000, 0x84000002   # MPI_COMM_WORLD and a duplicate of it (same ranks)
NULL_COMM = 0x04000000   # MPICH's MPI_COMM_NULL: what a Start records, with size 0
P = Params(o_s=100.0, o_r=200.0, L=1000.0, S=4096)
PATH = 100 + 1000 + 200   # o_s + L + o_r: one eager message, sent and taken
INIT = 1000


class Rank:
    """One rank's trace records; calls take no traced time unless told, and
    `after` is computation before the call."""

    def __init__(self, world):
        self.world, self.clock, self.recs = world, INIT, []

    def call(self, name, peer=-1, tag=-1, nbytes=0, request=0, comm=WORLD, after=0, took=0, done=(), size=None):
        """done: completions [(handle, (source, tag, bytes) or None)]; size: the communicator's
        (the world's unless told)."""
        start = self.clock + after
        end = start + took
        self.clock = end
        call = NAMES.index(name)
        size = self.world if size is None else size
        self.recs.append((start, end, nbytes, request, peer, tag, comm, size, call, 0, -1))
        for k, (handle, status) in enumerate(done):
            src, t, b = status if status else (-1, -1, 0)
            self.recs.append((start, end, b, handle, src, t, 0, 0, call, 1, k))
        return self


def write(tmp_path, ranks, comms=None):
    """The ranks' trace files; comms: {communicator id: its members' world ranks}, each written
    into its members' files (as the layer records it)."""
    for me, r in enumerate(ranks):
        mine = {c: members for c, members in (comms or {}).items() if me in members}
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, len(ranks), np.array(r.recs, dtype=trace.RECORD),
                         INIT, r.clock, names=NAMES, comms=mine)


def replays(tmp_path, ranks, params=P, comms=None):
    """End times of the three replays of the ranks' traces."""
    write(tmp_path, ranks, comms)
    programs = replay.build(trace.read_folder(tmp_path)).programs
    return {"files": predict.load(tmp_path).simulate(params).end_ns,
            "core": loggops.simulate(programs, params).end_ns,
            "python": loggops.simulate_reference(programs, params).end_ns}


def assert_times(got, want):
    for how, ends in got.items():
        assert ends == pytest.approx(want, abs=1e-6), how


def test_a_wildcard_receive_takes_the_message_its_completion_names(tmp_path):
    # rank 1's message is sent 5 us after rank 0's: a receive by ANY_SOURCE, ANY_TAG or both
    # that the trace says got rank 1's message must wait for it, not take the one already there
    for asked in ((ANY_SOURCE, 6), (1, ANY_TAG), (ANY_SOURCE, ANY_TAG)):
        folder = tmp_path / f"{asked[0]}_{asked[1]}"
        folder.mkdir()
        r0, r1, r2 = Rank(3), Rank(3), Rank(3)
        r0.call("MPI_Send", 2, 5, 8)
        r1.call("MPI_Send", 2, 6, 8, after=5000)
        r2.call("MPI_Recv", *asked, 8, done=[(0, (1, 6, 8))])
        r2.call("MPI_Recv", ANY_SOURCE, ANY_TAG, 8, done=[(0, (0, 5, 8))])
        late = 5000 + PATH
        assert_times(replays(folder, [r0, r1, r2]), [100, 5100, late + 200])


def test_nonblocking_wildcard_receives_take_their_completions_sources(tmp_path):
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r0.call("MPI_Send", 2, 0, 8, after=5000)
    r1.call("MPI_Send", 2, 0, 8)
    r2.call("MPI_Irecv", ANY_SOURCE, ANY_TAG, 8, request=0xa1)
    r2.call("MPI_Irecv", ANY_SOURCE, 0, 8, request=0xa2)
    # the first posted receive got rank 0's (late) message, the second rank 1's
    r2.call("MPI_Wait", done=[(0xa2, (1, 0, 8))])
    r2.call("MPI_Wait", done=[(0xa1, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1, r2]), [5100, 100, 5000 + PATH])


def test_messages_of_one_key_match_in_the_order_sent(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send", 1, 3, 8)
    r0.call("MPI_Send", 1, 3, 8, after=5000)
    r1.call("MPI_Irecv", 0, 3, 8, request=0xb1)
    r1.call("MPI_Irecv", 0, 3, 8, request=0xb2)
    r1.call("MPI_Wait", done=[(0xb2, (0, 3, 8))])    # the second receive: the late message
    r1.call("MPI_Wait", done=[(0xb1, (0, 3, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [5200, 5200 + 1000 + 200 + 200])


def test_a_tag_or_a_communicator_keeps_messages_apart(tmp_path):
    # the early message is on another tag, or on another communicator with the same tag:
    # the first receive must wait for the late one
    for comm, tag in ((WORLD, 4), (DUP, 3)):
        folder = tmp_path / f"{comm:x}_{tag}"
        folder.mkdir()
        r0, r1 = Rank(2), Rank(2)
        r0.call("MPI_Send", 1, tag, 8, comm=comm)
        r0.call("MPI_Send", 1, 3, 8, after=5000)
        r1.call("MPI_Recv", 0, 3, 8, done=[(0, (0, 3, 8))])
        r1.call("MPI_Recv", 0, tag, 8, comm=comm, done=[(0, (0, tag, 8))])
        assert_times(replays(folder, [r0, r1]), [5200, 5200 + 1000 + 200 + 200])


@pytest.mark.parametrize("name", ["MPI_Sendrecv", "MPI_Sendrecv_replace"])
def test_sendrecv_sends_and_receives_at_once(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 7, 8, after=3000, done=[(0, (1, 7, 8))])
    r1.call(name, 0, 7, 8, done=[(0, (0, 7, 8))])
    # rank 1's message waits for rank 0, who pays only its o_s and o_r; rank 1 waits a path
    assert_times(replays(tmp_path, [r0, r1]), [3000 + 100 + 200, 3000 + PATH])


@pytest.mark.parametrize("name", ["MPI_Sendrecv", "MPI_Sendrecv_replace"])
def test_a_shift_with_proc_null_at_its_ends(tmp_path, name):
    # a non-periodic shift: rank 0 receives from MPI_PROC_NULL, rank 1 sends to it
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 0, 8, done=[(0, (PROC_NULL, ANY_TAG, 0))])
    r1.call(name, PROC_NULL, 0, 8, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [100, PATH])


def test_messages_to_and_from_proc_null_cost_nothing(tmp_path):
    r0 = Rank(1)
    r0.call("MPI_Send", PROC_NULL, 0, 8)
    r0.call("MPI_Isend", PROC_NULL, 0, 8, request=0xc1)
    r0.call("MPI_Irecv", PROC_NULL, 0, 8, request=0xc2)
    r0.call("MPI_Waitall", done=[(0xc1, None), (0xc2, (PROC_NULL, ANY_TAG, 0))])
    r0.call("MPI_Recv", PROC_NULL, 0, 8, done=[(0, (PROC_NULL, ANY_TAG, 0))])
    assert_times(replays(tmp_path, [r0]), [0])


def test_a_message_to_oneself_costs_both_overheads_at_the_send(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Irecv", 0, 0, 70000, request=0xd1)
    r0.call("MPI_Send", 0, 0, 70000)
    r0.call("MPI_Wait", done=[(0xd1, (0, 0, 70000))])
    r1.call("MPI_Isend", 1, 2, 8, request=0xd2)
    r1.call("MPI_Recv", ANY_SOURCE, ANY_TAG, 8, done=[(0, (1, 2, 8))])
    r1.call("MPI_Wait", done=[(0xd2, None)])
    # no L, no G, no rendezvous for 70000 B to oneself
    assert_times(replays(tmp_path, [r0, r1], Params(o_s=100.0, o_r=200.0, L=1000.0, G=1.0, S=4096)),
                 [300, 300])


def test_probes_keep_their_traced_time_and_match_nothing(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send", 1, 0, 8)
    r1.call("MPI_Probe", 0, 0, took=1500)
    r1.call("MPI_Iprobe", ANY_SOURCE, ANY_TAG, took=500)
    r1.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    # the probes' 2000 ns stand (the message was there at 1100); the receive still gets it
    assert_times(replays(tmp_path, [r0, r1]), [100, 2000 + 200])
    # and each is said as not modelled
    assert predict.load(tmp_path).unmodelled == {"MPI_Probe": 1, "MPI_Iprobe": 1}
    assert replay.build(trace.read_folder(tmp_path)).unmodelled == {"MPI_Probe": 1, "MPI_Iprobe": 1}


def test_persistent_requests_send_and_receive_at_each_start(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send_init", 1, 9, 8, request=0xe1)
    r1.call("MPI_Recv_init", 0, 9, 8, request=0xe2)
    for k, start in enumerate(("MPI_Start", "MPI_Startall")):
        after = 5000 if k else 0
        r0.call(start, nbytes=8, request=0xe1, after=after)
        r0.call("MPI_Wait", done=[(0xe1, None)])
        r1.call(start, request=0xe2)
        r1.call("MPI_Wait", done=[(0xe2, (0, 9, 8))])
    r0.call("MPI_Request_free", request=0xe1)
    r1.call("MPI_Request_free", request=0xe2)
    # the second start is late by 5 us: its receive waits for it
    assert_times(replays(tmp_path, [r0, r1]), [5200, 5000 + 100 + 100 + 1000 + 200])


def test_a_persistent_receive_by_wildcard_takes_its_completions_source(tmp_path):
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r0.call("MPI_Send", 2, 0, 8)
    r1.call("MPI_Send", 2, 0, 8, after=5000)
    r2.call("MPI_Recv_init", ANY_SOURCE, ANY_TAG, 8, request=0xe3)
    r2.call("MPI_Start", request=0xe3)
    r2.call("MPI_Wait", done=[(0xe3, (1, 0, 8))])
    r2.call("MPI_Start", request=0xe3)
    r2.call("MPI_Wait", done=[(0xe3, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1, r2]), [100, 5100, 5000 + PATH + 200])


def _start(rank, request, **kw):
    """A Start as the layer records it: no communicator (MPI_COMM_NULL, size 0)."""
    return rank.call("MPI_Start", request=request, comm=NULL_COMM, size=0, **kw)


@pytest.mark.parametrize("name", ["MPI_Send_init", "MPI_Bsend_init", "MPI_Rsend_init"])
def test_every_persistent_send_starts_a_message_on_its_inits_communicator(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 9, 8, request=0x51)
    r1.call("MPI_Recv_init", 0, 9, 8, request=0x52)
    _start(r0, 0x51, nbytes=8)
    r0.call("MPI_Wait", after=2000, done=[(0x51, None)])
    _start(r1, 0x52)
    r1.call("MPI_Wait", done=[(0x52, (0, 9, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [2100, PATH])


def test_persistent_requests_on_a_smaller_communicator_keep_their_traced_time(tmp_path):
    sub = 0x84000003   # ranks 0 and 1 of three: its ranks cannot be mapped to world ranks
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r0.call("MPI_Send_init", 1, 9, 8, request=0x61, comm=sub, size=2)
    r1.call("MPI_Recv_init", 0, 9, 8, request=0x62, comm=sub, size=2)
    _start(r0, 0x61, nbytes=8, took=300)
    r0.call("MPI_Wait", done=[(0x61, None)])
    _start(r1, 0x62, took=50)
    r1.call("MPI_Wait", done=[(0x62, (0, 9, 8))])
    assert_times(replays(tmp_path, [r0, r1, r2]), [300, 50, 0])
    assert predict.load(tmp_path).unmodelled == {"MPI_Start": 2}
    assert replay.build(trace.read_folder(tmp_path)).unmodelled == {"MPI_Start": 2}


def test_a_persistent_handle_made_again_sends_as_its_new_init_says(tmp_path):
    # MPI hands a freed persistent request's handle to the next init: here one to another rank
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    for dest in (1, 2):
        r0.call("MPI_Send_init", dest, 9, 8, request=0x63)
        _start(r0, 0x63, nbytes=8)
        r0.call("MPI_Wait", done=[(0x63, None)])
        r0.call("MPI_Request_free", request=0x63)
    r1.call("MPI_Recv", 0, 9, 8, done=[(0, (0, 9, 8))])
    r2.call("MPI_Recv", 0, 9, 8, done=[(0, (0, 9, 8))])
    # two eager sends o_s apart
    assert_times(replays(tmp_path, [r0, r1, r2]), [200, PATH, 100 + PATH])


@pytest.mark.parametrize("name", ["MPI_Send", "MPI_Bsend", "MPI_Rsend"])
def test_every_blocking_send_is_a_message(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 0, 8)
    r1.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [100, PATH])


# (MPI_Bsend left out: MPI completes it once its buffer is copied, whatever its size; MPI_Ssend waits
# for the answer: test_a_synchronous_send_above_the_eager_limit_waits_for_its_answer)
@pytest.mark.parametrize("name", ["MPI_Send", "MPI_Rsend"])
def test_a_blocking_send_above_the_eager_limit_waits_for_the_go_ahead(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 0, 70000)
    r1.call("MPI_Recv", 0, 0, 70000, after=3000, done=[(0, (0, 0, 70000))])
    # the go-ahead leaves at the late post and takes L; the data takes L more (G = 0)
    assert_times(replays(tmp_path, [r0, r1]), [3000 + 1000, 3000 + 1000 + 1000 + 200])


@pytest.mark.parametrize("name", ["MPI_Isend", "MPI_Ibsend", "MPI_Irsend"])
def test_every_nonblocking_send_is_a_message(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call(name, 1, 0, 8, request=0x41)
    r0.call("MPI_Wait", after=2000, done=[(0x41, None)])
    r1.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [2100, PATH])


# A synchronous send completes when the receiver's answer arrives: MPICH answers it with a zero-byte
# message once the receive takes it, which the apparatus charges as any message (the receiver's o_s,
# L, the sender's o_r). With P: o_s 100, o_r 200, L 1000, g = G = 0, S 4096.

@pytest.mark.parametrize("send_after, receive_after, times", [
    # late receiver: arrives 1100; taken at the post (3000) + o_r = 3200; the answer's o_s: 3300,
    # + L: 4300; the sender's o_r: 4500
    (0, 3000, [4500, 3300]),
    # early receiver: injected 3100, arrives 4100, taken 4300, answered 4400; the answer arrives
    # 5400, taken 5600
    (3000, 0, [5600, 4400])])
def test_an_eager_synchronous_send_waits_for_its_answer(tmp_path, send_after, receive_after, times):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Ssend", 1, 0, 8, after=send_after)
    r1.call("MPI_Recv", 0, 0, 8, after=receive_after, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1]), times)


def test_a_synchronous_send_above_the_eager_limit_waits_for_its_answer(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Ssend", 1, 0, 70000)
    r1.call("MPI_Recv", 0, 0, 70000, after=3000, done=[(0, (0, 0, 70000))])
    # the rendezvous as MPI_Send's (its data ends at 4000, the receive at 5000: 5200 with o_r), and
    # MPICH answers at every size: o_s at 5300, + L: 6300, the sender's o_r: 6500
    assert_times(replays(tmp_path, [r0, r1]), [6500, 5300])


def test_a_nonblocking_synchronous_send_is_done_when_its_answer_is_taken(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Issend", 1, 0, 8, request=0x42)
    r0.call("MPI_Wait", after=2000, done=[(0x42, None)])
    r1.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    # arrives 1100, taken 1300, answered 1400; the answer arrives 2400 (the wait began at 2100), o_r: 2600
    assert_times(replays(tmp_path, [r0, r1]), [2600, 1400])


def test_a_persistent_send_made_by_ssend_init_waits_for_its_answer(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Ssend_init", 1, 9, 8, request=0x53)
    r1.call("MPI_Recv_init", 0, 9, 8, request=0x54)
    _start(r0, 0x53, nbytes=8)
    r0.call("MPI_Wait", after=2000, done=[(0x53, None)])
    _start(r1, 0x54)
    r1.call("MPI_Wait", done=[(0x54, (0, 9, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [2600, 1400])


@pytest.mark.parametrize("name", ["MPI_Ssend", "MPI_Issend"])
@pytest.mark.parametrize("nbytes", [8, 70000])
def test_a_synchronous_send_to_oneself_is_copied_as_any(tmp_path, name, nbytes):
    r0 = Rank(1)
    r0.call("MPI_Irecv", 0, 0, nbytes, request=0xd3)
    r0.call(name, 0, 0, nbytes, request=0xd4 if name == "MPI_Issend" else 0)
    r0.call("MPI_Waitall", done=[(0xd3, (0, 0, nbytes))] + ([(0xd4, None)] if name == "MPI_Issend" else []))
    assert_times(replays(tmp_path, [r0], Params(o_s=100.0, o_r=200.0, L=1000.0, G=1.0, S=4096)), [300])


# A buffered send is done once MPI copied it into the attached buffer: at its injection, at every
# size; above S its data still takes the rendezvous, which only the receiver waits for.

@pytest.mark.parametrize("how", ["MPI_Bsend", "MPI_Ibsend", "MPI_Bsend_init"])
def test_a_buffered_send_above_the_eager_limit_returns_at_its_injection(tmp_path, how):
    r0, r1 = Rank(2), Rank(2)
    if how == "MPI_Bsend":
        r0.call(how, 1, 0, 70000)
    else:
        if how == "MPI_Ibsend":
            r0.call(how, 1, 0, 70000, request=0x55)
        else:
            r0.call(how, 1, 0, 70000, request=0x55)
            _start(r0, 0x55, nbytes=70000)
        r0.call("MPI_Wait", done=[(0x55, None)])
    r1.call("MPI_Recv", 0, 0, 70000, after=3000, done=[(0, (0, 0, 70000))])
    # the sender: o_s; the receiver: the go-ahead leaves at its post (3000), the data ends at 4000,
    # arrives at 5000, o_r: 5200
    assert_times(replays(tmp_path, [r0, r1]), [100, 5200])


def test_a_request_free_costs_nothing_and_is_modelled(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Isend", 1, 0, 8, request=0x71)
    r0.call("MPI_Request_free", request=0x71, took=700)
    r1.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1]), [100, PATH])
    assert predict.load(tmp_path).unmodelled == {}
    assert replay.build(trace.read_folder(tmp_path)).unmodelled == {}


def test_a_freed_receive_takes_no_later_completion_of_its_handle(tmp_path):
    # MPI may hand the freed receive's handle to the next receive, whose completion says what
    # that one got: the freed one takes rank 0's first message, the next rank 1's, and the last
    # receive rank 0's second, late one
    r0, r1, r2 = Rank(3), Rank(3), Rank(3)
    r0.call("MPI_Send", 2, 0, 8)
    r0.call("MPI_Send", 2, 0, 8, after=8000)
    r1.call("MPI_Send", 2, 0, 8, after=5000)
    r2.call("MPI_Irecv", 0, 0, 8, request=0x81)
    r2.call("MPI_Request_free", request=0x81)
    r2.call("MPI_Irecv", ANY_SOURCE, 0, 8, request=0x81)
    r2.call("MPI_Wait", done=[(0x81, (1, 0, 8))])
    r2.call("MPI_Recv", 0, 0, 8, done=[(0, (0, 0, 8))])
    assert_times(replays(tmp_path, [r0, r1, r2]), [8200, 5100, 8100 + PATH])


def test_a_freed_send_is_sent_and_nothing_waits_for_it(tmp_path):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Isend", 1, 0, 70000, request=0xf1)
    r0.call("MPI_Request_free", request=0xf1)
    r1.call("MPI_Recv", 0, 0, 70000, after=3000, done=[(0, (0, 0, 70000))])
    # a rendezvous send: rank 0 would wait for the go-ahead had it waited
    assert_times(replays(tmp_path, [r0, r1], Params(o_s=100.0, o_r=200.0, L=1000.0, S=4096)),
                 [100, 3000 + 1000 + 1000 + 200])


@pytest.mark.parametrize("name", ["MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test",
                                  "MPI_Testall", "MPI_Testany", "MPI_Testsome"])
def test_every_completion_call_waits_for_what_it_completes(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send", 1, 0, 8, after=5000)
    r0.call("MPI_Send", 1, 1, 8)
    r1.call("MPI_Irecv", 0, 0, 8, request=0x11)
    r1.call("MPI_Irecv", 0, 1, 8, request=0x12)
    # a test that finds nothing keeps its traced time only
    r1.call("MPI_Test", took=50) if name.startswith("MPI_Test") else None
    r1.call(name, done=[(0x12, (0, 1, 8))])
    r1.call("MPI_Wait", done=[(0x11, (0, 0, 8))])
    first = 5000 + 100 + 100 + 1000 + 200   # the second message, sent o_s after the first
    assert_times(replays(tmp_path, [r0, r1]), [5200, first + 200])


@pytest.mark.parametrize("name", ["MPI_Waitall", "MPI_Waitsome", "MPI_Testall", "MPI_Testsome"])
def test_a_completion_call_of_several_requests_waits_for_each(tmp_path, name):
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Isend", 1, 0, 8, request=0x21)
    r0.call("MPI_Isend", 1, 1, 8, request=0x22, after=5000)
    r0.call(name, done=[(0x21, None), (0x22, None)])
    r1.call("MPI_Irecv", 0, 1, 8, request=0x23)
    r1.call("MPI_Irecv", 0, 0, 8, request=0x24)
    r1.call(name, done=[(0x24, (0, 0, 8)), (0x23, (0, 1, 8))])
    # each is taken in the order completed: the early one at once, the late one at its arrival
    assert_times(replays(tmp_path, [r0, r1]), [5200, 5200 + 1000 + 200])


@pytest.mark.parametrize("name", ["MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome", "MPI_Iprobe"])
def test_a_call_that_finds_nothing_keeps_its_traced_time(tmp_path, name):
    r0 = Rank(1)
    r0.call(name, took=700)
    r0.call(name, took=300, after=50)
    assert_times(replays(tmp_path, [r0]), [1050])


# ---- a rank outside the run: a damaged trace, never a crash ----

def _outside(side, peer=5):
    r0, r1 = Rank(2), Rank(2)
    if side == "send":
        r0.call("MPI_Send", peer, 0, 8)
    elif side == "receive":
        r0.call("MPI_Recv", ANY_SOURCE, 0, 8, done=[(0, (5, 0, 8))])
    else:
        r0.call("MPI_Send_init", 5, 0, 8, request=0x31)
        r0.call("MPI_Start", nbytes=8, request=0x31)
    r1.call("MPI_Send", 0, 0, 8)
    return [r0, r1]


@pytest.mark.parametrize("side, peer, record", [("send", 2, 0), ("send", 5, 0), ("receive", 5, 0),
                                                ("persistent", 5, 1)])  # a start's record, not its init's
def test_a_message_with_a_rank_outside_the_run_is_a_damaged_trace(tmp_path, side, peer, record):
    ranks = _outside(side, peer)
    for me, r in enumerate(ranks):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 2, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    with pytest.raises(trace.TraceError, match=rf"trace\.0\.bin: .*record {record}: a message with rank {peer}, not "
                                               r"one of the run's 2 ranks"):
        predict.load(tmp_path)


@pytest.mark.parametrize("side, peer", [("send", 2), ("send", 5), ("receive", 2)])
def test_replay_build_refuses_a_rank_one_past_the_communicator_as_any_outside_it(tmp_path, side, peer):
    # a communicator of 2 ranks has ranks 0 and 1: rank 2 is as damaged as rank 5 (explain and the
    # GOAL export build their programs here, not in the core)
    ranks = _outside(side, peer)
    if side == "receive":
        ranks[0].recs[-1] = ranks[0].recs[-1][:4] + (peer,) + ranks[0].recs[-1][5:]
    for me, r in enumerate(ranks):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 2, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    with pytest.raises(trace.TraceError, match=rf"a message with rank {peer}, not one of its communicator's 2 ranks"):
        replay.build(trace.read_folder(tmp_path))


def test_the_core_refuses_a_program_that_names_a_rank_outside_the_run():
    programs = [[("isend", 1, ("c", 0), 8, "s"), ("isend", 2, ("c", 0), 8, "t")], [("irecv", 0, ("c", 0), 8, "r")]]
    with pytest.raises(ValueError, match="rank 0, operation 1: a message with rank 2, not one of the 2 ranks"):
        loggops.simulate(programs, P)
    with pytest.raises(ValueError, match="rank 1, operation 0: a message with rank -1"):
        loggops.simulate([[], [("irecv", -1, ("c", 0), 8, "r")]], P)


def test_predict_says_which_file_names_a_rank_outside_the_run(tmp_path):
    from tests.testkit import installed, run
    for me, r in enumerate(_outside("send")):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 2, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    proc = run([installed("loggp"), "predict", tmp_path, "--L", "1us"])
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("record 0: a message with rank 5, not one of the run's 2 ranks")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("root", [3, 5])
def test_a_collective_with_a_root_outside_the_run_is_a_damaged_trace(tmp_path, root):
    ranks = [Rank(3) for _ in range(3)]
    for r in ranks:
        r.call("MPI_Bcast", root, -1, 100000)
    for me, r in enumerate(ranks):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 3, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    with pytest.raises(trace.TraceError, match=rf"record 0: a message with rank {root}, not one of the run's 3"):
        predict.load(tmp_path)
    # replay.build (explain, the GOAL export) refuses it too, from the root one past the last rank
    with pytest.raises(trace.TraceError, match=rf"Bcast on communicator 0x[0-9a-f]+ of 3 ranks with root {root}"):
        replay.build(trace.read_folder(tmp_path))


def test_a_collective_is_as_large_as_its_largest_record(tmp_path):
    # the ranks' schedules of an instance take the largest size any rank recorded: the root's
    # 0 B, read alone, would send eager (o_s + L + o_r), rank 1's 100000 B go by rendezvous:
    # the go-ahead (2 L after the root's o_s), then the data (L) and rank 1's o_r
    ranks = [Rank(2), Rank(2)]
    ranks[0].call("MPI_Bcast", 0, -1, 0)
    ranks[1].call("MPI_Bcast", 0, -1, 100000)
    assert_times(replays(tmp_path, ranks), [100 + 2000, 100 + 3000 + 200])


def test_a_large_broadcast_at_many_ranks_keeps_every_message(tmp_path):
    # above 12288 B from 8 ranks on: a binomial scatter (16 edges at 17 ranks; the root sends
    # to 5 children) and a ring allgather (each rank 16 sends and 16 receives): 37 operations
    # at the root, more than twice the ranks
    ranks = [Rank(17) for _ in range(17)]
    for r in ranks:
        r.call("MPI_Bcast", 0, -1, 100000)
    got = replays(tmp_path, ranks)
    assert got["files"] == pytest.approx(got["python"], abs=1e-6)
    assert predict.load(tmp_path).messages == 16 + 17 * 16


def test_collectives_are_numbered_per_communicator(tmp_path):
    # the n-th collective on WORLD is sized over the ranks' n-th on WORLD, whatever came on a
    # duplicate before: the Bcast is 100000 B (rendezvous) after an exchange of 8 B on DUP
    ranks = [Rank(2), Rank(2)]
    for r, nbytes in zip(ranks, (0, 100000)):
        r.call("MPI_Allreduce", -1, -1, 8, comm=DUP)
        r.call("MPI_Bcast", 0, -1, nbytes)
    assert_times(replays(tmp_path, ranks), [PATH + 100 + 2000, PATH + 100 + 3000 + 200])


def test_ranks_that_recorded_different_collectives_are_not_of_one_run(tmp_path):
    ranks = [Rank(2), Rank(2)]
    ranks[0].call("MPI_Bcast", 0, -1, 8)
    ranks[1].call("MPI_Allreduce", -1, -1, 8)
    for me, r in enumerate(ranks):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 2, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    with pytest.raises(trace.TraceError, match=r"collective 1 on communicator 0x44000000 is Allreduce here but "
                                               r"Bcast on another rank: the traces are not of one run"):
        predict.load(tmp_path)
    with pytest.raises(ValueError, match="not of one run"):
        replay.build(trace.read_folder(tmp_path))


def test_a_nonblocking_collective_is_done_at_its_post_and_its_wait_costs_nothing(tmp_path):
    # modelled as its blocking twin where it is posted: 8 B at 2 ranks is one exchange
    ranks = [Rank(2), Rank(2)]
    for r in ranks:
        r.call("MPI_Iallreduce", -1, -1, 8, request=0x9c000001)
        r.call("MPI_Wait", after=50, took=700, done=[(0x9c000001, None)])   # not its traced time
    assert_times(replays(tmp_path, ranks), [PATH + 50, PATH + 50])


def test_a_nonblocking_comm_dup_keeps_its_traced_time_at_its_post_and_its_wait_costs_nothing(tmp_path):
    # MPI_Comm_idup is not modelled: its own traced time is kept where it was posted, and the
    # request is done there, so the wait that completes it adds nothing (as for a nonblocking
    # collective); a wait that kept its traced 700 ns would count the duplication twice
    ranks = [Rank(2), Rank(2)]
    for r in ranks:
        r.call("MPI_Comm_idup", request=0x9c000001, took=300)
        r.call("MPI_Wait", after=50, took=700, done=[(0x9c000001, None)])
    assert_times(replays(tmp_path, ranks), [350, 350])


def test_a_collective_whose_ranks_recorded_different_roots_runs_from_one_root(tmp_path):
    # every rank's schedule of an instance must agree, or the tree sticks: one root for all, the
    # last rank's record (as replay.build takes it). Rank 2 names root 1, so rank 1 broadcasts:
    # to rank 0 first (the farthest child of its tree at 3 ranks), then to rank 2, o_s later
    ranks = [Rank(3) for _ in range(3)]
    for r, root in zip(ranks, (0, 0, 1)):
        r.call("MPI_Bcast", root, -1, 8)
    assert_times(replays(tmp_path, ranks), [PATH, 200, 200 + 1000 + 200])


@pytest.mark.parametrize("name", ["MPI_Sendrecv", "MPI_Sendrecv_replace"])
def test_a_sendrecv_with_oneself_is_a_copy(tmp_path, name):
    r0 = Rank(1)
    r0.call(name, 0, 3, 70000, done=[(0, (0, 3, 70000))])
    r0.call(name, 0, 3, 8, done=[(0, (0, 3, 8))])
    # no L, no G, no rendezvous: each costs o_s + o_r at its send
    assert_times(replays(tmp_path, [r0], Params(o_s=100.0, o_r=200.0, L=1000.0, G=1.0, g=5000.0, S=4096)),
                 [600])


@pytest.mark.parametrize("size, nbytes, flights", [(2, 8, 1), (2, 16, 2), (3, 8, 2), (3, 16, 4), (4, 24, 2), (4, 32, 4)])
def test_an_allreduce_costs_the_flights_of_mpichs_algorithm(tmp_path, size, nbytes, flights):
    # recursive doubling up to 8 B and below pof2 elements (3 doubles at 4 ranks), else
    # reduce-scatter + allgather: 16 B at 2 ranks is two latencies (measured 2.03 L a call)
    ranks = [Rank(size) for _ in range(size)]
    for r in ranks:
        r.call("MPI_Allreduce", -1, -1, nbytes)
    for how, ends in replays(tmp_path, ranks, Params(L=1000.0)).items():
        assert max(ends) == pytest.approx(flights * 1000.0), how


def test_a_world_sized_communicator_in_another_order_is_named_when_the_replay_sticks(tmp_path):
    # a split with reversed keys: rank 0 is rank 1 of it. Its peers are taken in the world's order,
    # so rank 0's send to its rank 0 (world rank 1) and rank 1's receive from its rank 1 (world
    # rank 0) meet nobody
    reversed_comm = 0x84000004
    r0, r1 = Rank(2), Rank(2)
    r0.call("MPI_Send", 0, 0, 8, comm=reversed_comm)
    r1.call("MPI_Recv", 1, 0, 8, comm=reversed_comm, done=[(0, (1, 0, 8))])
    for me, r in enumerate([r0, r1]):
        synth.write_rank(tmp_path / f"trace.{me}.bin", me, 2, np.array(r.recs, dtype=trace.RECORD), INIT, r.clock,
                         names=NAMES)
    for load in (predict.load, lambda folder: replay.build(trace.read_folder(folder))):
        with pytest.raises(loggops.DeadlockError) as stuck:
            load(tmp_path).simulate(P)
        assert "probably from different runs" in str(stuck.value)
        assert "a communicator as large as MPI_COMM_WORLD in another rank order" in str(stuck.value)
