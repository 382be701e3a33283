"""The C replay core (loggp.analysis.native) against the Python replay it replaced
(loggops.simulate_reference), on random programs, and its collective schedules
against schedules.py."""
import random

import numpy as np

import pytest

from loggp.analysis import loggops, native, schedules
from loggp.analysis.loggops import Params


def random_programs(rng, ranks, messages):
    """Random sends and receives between ranks, with computation and waits at random
    places (some programs deadlock: both replays must then stop at the same place)."""
    programs = [[] for _ in range(ranks)]
    open_reqs = [[] for _ in range(ranks)]
    for m in range(messages):
        src, dst = rng.sample(range(ranks), 2)
        if rng.random() < 0.1:
            dst = src  # a message to oneself
        key = ("c", rng.choice([0, 1, 2]))
        nbytes = rng.choice([0, 1, 8, 4096, 5000, 70000])
        orphan = rng.random() < 0.03  # a receive nobody sends: a deadlock once waited for
        for me, kind, peer in ((src, "isend", dst), (dst, "irecv", src))[orphan:]:
            if rng.random() < 0.3:
                programs[me].append(("calc", rng.uniform(0, 5000)))
            mode = rng.choice(["standard", "sync", "buffered"]) if kind == "isend" else "standard"
            programs[me].append((kind, peer, key, nbytes, ("m", m, kind)) + ((mode,) if mode != "standard" else ()))
            open_reqs[me].append(("m", m, kind))
            if rng.random() < 0.4:
                k = rng.randint(1, len(open_reqs[me]))
                waited = rng.sample(open_reqs[me], k)
                open_reqs[me] = [r for r in open_reqs[me] if r not in waited]
                programs[me].append(("wait", tuple(waited)))
            if rng.random() < 0.05:
                programs[me].append(("done", ("d", m)))
                programs[me].append(("wait", (("d", m),)))
    for me in range(ranks):
        if open_reqs[me]:
            programs[me].append(("wait", tuple(open_reqs[me])))
    return programs


def outcome(simulate, programs, params):
    try:
        r = simulate(programs, params)
        return ("ok", r.end_ns, r.compute_ns, r.overhead_ns, r.waiting_ns)
    except loggops.DeadlockError as err:
        return ("deadlock", str(err), err.stuck, err.finished)


@pytest.mark.parametrize("seed", range(40))
def test_the_core_times_random_programs_as_the_python_replay(seed):
    rng = random.Random(seed)
    programs = random_programs(rng, rng.randint(2, 6), rng.randint(1, 60))
    params = Params(o_s=rng.uniform(0, 500), o_r=rng.uniform(0, 500), g=rng.choice([0.0, 300.0]),
                    G=rng.choice([0.0, 0.05, 1.0]), L=rng.uniform(0, 5000), S=rng.choice([4096, float("inf")]))
    native_result = outcome(loggops.simulate, programs, params)
    python_result = outcome(loggops.simulate_reference, programs, params)
    assert native_result[0] == python_result[0]
    if native_result[0] == "ok":
        for got, want in zip(native_result[1:], python_result[1:]):
            assert got == pytest.approx(want, rel=1e-12, abs=1e-6)
    else:
        assert native_result == python_result


def test_the_random_programs_both_finish_and_deadlock():
    kinds = {outcome(loggops.simulate, random_programs(random.Random(s), 3, 30), Params(L=1.0))[0]
             for s in range(40)}
    assert kinds == {"ok", "deadlock"}  # the comparison above covers both ways


# both sides of each switch: allreduce's 8/9 B and counts below and at the power of two (4, 8:
# 24/32 B, 56/64 B, 12/20 B of ints); reduce's 2048 B; alltoall's 256 and 32768 B a peer;
# bcast's 12288 and 524288 B; allgather's totals 81920 and 524288; reduce-scatter's 524288 B
SWITCHES = [0, 3, 8, 9, 12, 20, 24, 32, 56, 64, 256, 257, 1024, 2048, 2056, 12288, 12289, 20000,
            27306, 27307, 65536, 65544, 131072, 131080, 524280, 524288, 524296, 1 << 20]


@pytest.mark.parametrize("name", native.BASES)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 33])
def test_the_core_schedules_as_schedules_py(name, size):
    for nbytes in SWITCHES + [size * 256, size * 257, size * 32768, size * 32769]:
        for rank in range(size):
            for root in {0, 1 % size, size - 1}:
                assert native.schedule(name, rank, size, nbytes, root) == \
                    [list(rnd) for rnd in schedules.schedule(name, rank, size, nbytes, root) if rnd], \
                    (nbytes, rank, root)
    # (an empty round, a gather's at one rank, waits for nothing: the core leaves it out)


def test_every_schedule_is_known_to_the_core():
    assert set(native.BASES) == set(schedules.SCHEDULES)


@pytest.mark.parametrize("size", [5, 10])
def test_the_core_takes_allgathers_ring_from_exactly_81920_bytes_in_all(size):
    # MPICH, not a power of two: Bruck's while the total is below 81920 B, a ring from it on
    # (5 and 10 divide 81920, so the total can sit on the switch)
    at = 81920 // size
    for rank in range(size):
        ring = [[("send", (rank + 1) % size, at), ("recv", (rank - 1) % size, at)]] * (size - 1)
        assert native.schedule("Allgather", rank, size, at) == ring
        bruck = native.schedule("Allgather", rank, size, at - 1)
        assert len(bruck) == (size - 1).bit_length()   # ceil(log2 size) rounds, not size - 1
        assert sum(b for rnd in bruck for op, _, b in rnd if op == "send") == (size - 1) * (at - 1)


@pytest.mark.parametrize("size", [512, 600, 1024])
def test_the_core_reduces_by_halving_once_the_count_reaches_the_power_of_two(size):
    # MPICH: above 2048 B, reduce-scatter + gather only while count >= pof2 (of doubles here)
    pof2 = 1 << (size.bit_length() - 1)
    leaf = 2 * (size - pof2) + 1   # an odd rank the fold keeps: a leaf of the binomial tree from 0
    at, below = 8 * pof2, 8 * (pof2 - 1)
    assert native.schedule("Reduce", leaf, size, below) == [[("send", leaf - 1, below)]]
    # halving: first swap half the vector with the partner one apart
    assert native.schedule("Reduce", leaf, size, at)[0] == [("send", leaf - 1, at // 2), ("recv", leaf - 1, at // 2)]


@pytest.mark.parametrize("name, down", [("Bcast", True), ("Scatter", True), ("Scatterv", True),
                                        ("Reduce", False), ("Gather", False), ("Gatherv", False)])
def test_the_core_roots_a_collective_without_a_recorded_root_at_rank_zero(name, down):
    # a trace gives root -1 when it recorded none: rank 0 only sends down the tree, only receives up
    for size in (2, 5):
        zero = [op for rnd in native.schedule(name, 0, size, 40, -1) for op, _, _ in rnd]
        assert zero and set(zero) == {"send" if down else "recv"}
        for rank in range(1, size):
            assert native.schedule(name, rank, size, 40, -1) == native.schedule(name, rank, size, 40, 0)


# ---- traces: the core reading files against replay.build + the Python replay ----

NAMES = ("MPI_Isend", "MPI_Send", "MPI_Irecv", "MPI_Recv", "MPI_Sendrecv", "MPI_Waitall", "MPI_Wait",
         "MPI_Test", "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Iallreduce",
         "MPI_Request_free", "MPI_Iprobe", "MPI_Comm_rank", "MPI_Sendrecv_replace", "MPI_Waitany", "MPI_Waitsome",
         "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Ssend", "MPI_Bsend", "MPI_Issend", "MPI_Ibsend")
ANY_SOURCE, ANY_TAG, PROC_NULL, WORLD, OTHER_COMM = -2, -1, -1, 0x44000000, 0x84000001
DUP_WORLD = 0x84000002  # a communicator of every rank in world order: matched apart from WORLD


def random_trace(rng, folder, ranks, events):
    """Trace files of a random run that MPI could have made: messages (blocking or not, receives
    by name or by wildcard, resolved by their completion), exchanges, collectives (some nonblocking),
    freed requests, calls the replay does not model; request handles come back after completion."""
    from loggp.analysis import synth, trace
    call = {n: k for k, n in enumerate(NAMES)}
    recs = [[] for _ in range(ranks)]
    clock = [1000 + rng.randrange(100) for _ in range(ranks)]
    pending = [[] for _ in range(ranks)]   # (handle, status or None)
    free = [list(range(0x9c000000, 0x9c000000 + 6)) for _ in range(ranks)]

    def add(me, name, peer=-1, tag=-1, nbytes=0, request=0, comm=WORLD, size=ranks, completions=()):
        start = clock[me] + rng.choice([0, 0, rng.randrange(1, 20000)])
        end = start + rng.randrange(0, 3000)
        clock[me] = end
        recs[me].append((start, end, nbytes, request, peer, tag, comm, size, call[name], 0, -1))
        for k, (handle, status) in enumerate(completions):
            p, t, b = status if status else (-1, -1, 0)
            recs[me].append((start, end, b, handle, p, t, 0, 0, call[name], 1, k))

    def handle(me):
        if not free[me]:
            wait_some(me, everything=True)
        return free[me].pop(rng.randrange(len(free[me])))

    def wait_some(me, everything=False):
        if not pending[me]:
            return
        chosen = pending[me] if everything else rng.sample(pending[me], rng.randint(1, len(pending[me])))
        pending[me] = [p for p in pending[me] if p not in chosen]
        if len(chosen) == 1 and rng.random() < 0.5:
            add(me, rng.choice(["MPI_Wait", "MPI_Waitany", "MPI_Testany"]), completions=chosen)
        else:
            add(me, rng.choice(["MPI_Waitall", "MPI_Waitsome", "MPI_Testall", "MPI_Testsome"]), completions=chosen)
        free[me] += [h for h, _ in chosen]

    for _ in range(events):
        what = rng.random()
        if what < 0.55:
            src, dst = rng.sample(range(ranks), 2)
            if rng.random() < 0.1:
                dst = src  # a message to oneself
            tag, nbytes = rng.randrange(3), rng.choice([0, 8, 4096, 5000, 70000])
            comm, size = (OTHER_COMM, ranks - 1) if rng.random() < 0.05 else \
                (DUP_WORLD, ranks) if rng.random() < 0.1 else (WORLD, ranks)
            if rng.random() < 0.3:
                add(src, rng.choice(["MPI_Send", "MPI_Send", "MPI_Ssend", "MPI_Bsend"]), dst, tag, nbytes, comm=comm,
                    size=size)
            else:
                h = handle(src)
                add(src, rng.choice(["MPI_Isend", "MPI_Isend", "MPI_Issend", "MPI_Ibsend"]), dst, tag, nbytes, h, comm,
                    size)
                if rng.random() < 0.1:
                    add(src, "MPI_Request_free", request=h)
                    free[src].append(h)
                else:
                    pending[src].append((h, None))
            asked = (ANY_SOURCE if rng.random() < 0.3 else src, ANY_TAG if rng.random() < 0.3 else tag)
            if rng.random() < 0.3:
                add(dst, "MPI_Recv", *asked, nbytes, comm=comm, size=size, completions=[(0, (src, tag, nbytes))])
            else:
                h = handle(dst)
                add(dst, "MPI_Irecv", *asked, 70000, h, comm, size)
                pending[dst].append((h, (src, tag, nbytes)))
        elif what < 0.62:
            a, b = rng.sample(range(ranks), 2)
            nbytes = rng.choice([8, 9000])
            name = rng.choice(["MPI_Sendrecv", "MPI_Sendrecv_replace"])
            if rng.random() < 0.2:  # a shift's end: a sends to b, b receives from a, MPI_PROC_NULL at the ends
                add(a, name, b, 5, nbytes, completions=[(0, (PROC_NULL, ANY_TAG, 0))])
                add(b, name, PROC_NULL, 5, nbytes, completions=[(0, (a, 5, nbytes))])
            else:
                for me, peer in ((a, b), (b, a)):
                    add(me, name, peer, 5, nbytes, completions=[(0, (peer, 5, nbytes))])
        elif what < 0.7:
            name = rng.choice(["MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Iallreduce"])
            root = rng.randrange(ranks)
            for me in range(ranks):
                nbytes = 0 if name == "MPI_Barrier" else rng.choice([8, 300, 20000])
                if name == "MPI_Iallreduce":
                    h = handle(me)
                    add(me, name, -1, -1, nbytes, h)
                    pending[me].append((h, None))
                else:
                    add(me, name, root if name == "MPI_Bcast" else -1, -1, nbytes)
        elif what < 0.8:
            me = rng.randrange(ranks)
            add(me, rng.choice(["MPI_Iprobe", "MPI_Comm_rank", "MPI_Test"]), ANY_SOURCE, ANY_TAG)
        else:
            wait_some(rng.randrange(ranks))
    for me in range(ranks):
        wait_some(me, everything=True)
        out = np.array(recs[me], dtype=trace.RECORD)
        synth.write_rank(folder / f"trace.{me}.bin", me, ranks, out, 1000, clock[me] + 500, names=NAMES)


@pytest.mark.parametrize("seed", range(25))
def test_the_core_replays_random_traces_as_the_python_replay(tmp_path, seed):
    from loggp.analysis import predict, replay, trace
    rng = random.Random(seed)
    random_trace(rng, tmp_path, rng.randint(2, 5), rng.randint(5, 150))
    params = Params(o_s=rng.uniform(0, 500), o_r=rng.uniform(0, 500), g=rng.choice([0.0, 300.0]),
                    G=rng.choice([0.0, 0.05, 1.0]), L=rng.uniform(0, 5000), S=4096)
    programs = replay.build(trace.read_folder(tmp_path))
    want = loggops.simulate_reference(programs.programs, params)
    streamed = predict.load(tmp_path, chunk=rng.choice([1, 7, 4096]))
    got = streamed.simulate(params)
    for part in ("end_ns", "compute_ns", "overhead_ns", "waiting_ns"):
        assert getattr(got, part) == pytest.approx(getattr(want, part), rel=1e-12, abs=1e-6), part
    assert (streamed.messages, streamed.collectives, streamed.unmodelled) == \
        (programs.messages, programs.collectives, programs.unmodelled)
    assert streamed.traced_ns == programs.traced_ns


def test_random_traces_use_wildcards_and_every_kind_of_call(tmp_path):
    from loggp.analysis import predict, trace
    random_trace(random.Random(1), tmp_path, 4, 300)
    t = trace.read_folder(tmp_path)
    calls = {n for x in t for n in x.call_names()}
    assert set(NAMES) <= calls
    assert any(((x.records["peer"] == ANY_SOURCE) & (x.records["kind"] == 0)).any() for x in t)
    assert any(((x.records["tag"] == ANY_TAG) & (x.records["kind"] == 0)).any() for x in t)
    assert any((x.records["comm_id"] == DUP_WORLD).any() for x in t)
    assert any(((x.records["peer"] == PROC_NULL) & (x.records["kind"] == 1)).any() for x in t)
    loaded = predict.load(tmp_path)
    assert loaded.unmodelled and loaded.collectives and loaded.messages


@pytest.mark.parametrize("nbytes", [8, 70000])
def test_freed_requests_leave_the_replay(tmp_path, nbytes):
    """Isend + MPI_Request_free in a loop: nothing waits for those requests, and the replay
    forgets each, and takes turns between ranks, so its state stays the same however long the loop."""
    from loggp.analysis import predict, synth, trace
    call = {n: k for k, n in enumerate(NAMES)}
    peaks = []
    for n in (1000, 10000):
        sends, recvs = [], []
        for k in range(n):
            t = 1000 + 10 * k
            sends += [(t, t + 1, nbytes, 0x9c000001, 1, 0, WORLD, 2, call["MPI_Isend"], 0, -1),
                      (t + 2, t + 3, 0, 0x9c000001, -1, -1, 0, 0, call["MPI_Request_free"], 0, -1)]
            recvs += [(t, t + 5, nbytes, 0, 0, 0, WORLD, 2, call["MPI_Recv"], 0, -1),
                      (t, t + 5, nbytes, 0, 0, 0, 0, 0, call["MPI_Recv"], 1, -1)]
        folder = tmp_path / str(n)
        folder.mkdir()
        for rank, recs in enumerate((sends, recvs)):
            synth.write_rank(folder / f"trace.{rank}.bin", rank, 2, np.array(recs, dtype=trace.RECORD), 1000,
                             1000 + 10 * n + 10, names=NAMES)
        replayed = predict.load(folder)
        replayed.simulate(Params(o_s=100.0, L=1000.0, S=4096))
        peaks.append(replayed.state_peak())
    assert peaks[0] == peaks[1] and peaks[0]["requests"] <= 100 and peaks[0]["unmatched"] <= 100
