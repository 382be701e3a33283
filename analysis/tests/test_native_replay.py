"""The C replay core (loggp.analysis.native) against the Python replay it replaced
(loggops.simulate_reference), on random programs, and its collective schedules
against schedules.py."""
import random

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
        key = ("c", rng.choice([0, 1, 2]))
        nbytes = rng.choice([0, 1, 8, 4096, 5000, 70000])
        orphan = rng.random() < 0.03  # a receive nobody sends: a deadlock once waited for
        for me, kind, peer in ((src, "isend", dst), (dst, "irecv", src))[orphan:]:
            if rng.random() < 0.3:
                programs[me].append(("calc", rng.uniform(0, 5000)))
            programs[me].append((kind, peer, key, nbytes, ("m", m, kind)))
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


@pytest.mark.parametrize("name", native.BASES)
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 12])
@pytest.mark.parametrize("nbytes", [0, 8, 256, 1024, 20000, 1 << 20])
def test_the_core_schedules_as_schedules_py(name, size, nbytes):
    for rank in range(size):
        root = size - 1
        assert native.schedule(name, rank, size, nbytes, root) == \
            [list(rnd) for rnd in schedules.schedule(name, rank, size, nbytes, root) if rnd], (rank, root)
    # (an empty round, a gather's at one rank, waits for nothing: the core leaves it out)


def test_every_schedule_is_known_to_the_core():
    assert set(native.BASES) == set(schedules.SCHEDULES)
