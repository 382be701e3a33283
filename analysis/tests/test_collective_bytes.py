"""A collective's size in our convention and Score-P's, both ways."""
import pytest

from loggp.analysis import collective_bytes as cb
from loggp.analysis import schedules


@pytest.mark.parametrize("name", sorted(schedules.SCHEDULES))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_sizes_come_back_as_the_replay_takes_them(name, n):
    # a barrier carries no bytes, nor an exclusive scan on one rank
    for b in (0,) if name == "Barrier" or (name, n) == ("Exscan", 1) else (0, 8, 4096, 12 * n):
        for root in {0, n - 1}:
            back = [cb.from_scorep(name, *cb.to_scorep(name, b, n, me, root), n, me, root) for me in range(n)]
            assert max(back) == b and min(back) >= 0, (name, n, b, root, back)


def test_scorep_counts_match_its_conventions():
    assert cb.to_scorep("Bcast", 8, 4, 0, 0) == (32, 8) and cb.to_scorep("Bcast", 8, 4, 1, 0) == (0, 8)
    assert cb.to_scorep("Reduce", 8, 4, 2, 2) == (8, 32) and cb.to_scorep("Reduce", 8, 4, 1, 2) == (8, 0)
    assert cb.to_scorep("Allreduce", 8, 4, 3, 0) == (32, 32)
    assert cb.to_scorep("Scan", 8, 4, 1, 0) == (24, 16) and cb.to_scorep("Exscan", 8, 4, 3, 0) == (0, 24)
    assert cb.to_scorep("Scatter", 32, 4, 0, 0) == (32, 8) and cb.to_scorep("Scatter", 32, 4, 1, 0) == (0, 8)


@pytest.mark.parametrize("name", ["Scan", "Exscan", "Allreduce", "Allgather", "Bcast"])
@pytest.mark.parametrize("n", [2, 3, 7])
def test_every_rank_gets_its_block_back(name, n):
    # each rank's own counts say b (an exclusive scan's last rank only receives: (n-1) b)
    b = 24
    for me in range(n):
        assert cb.from_scorep(name, *cb.to_scorep(name, b, n, me, 0), n, me, 0) == b, me
    assert cb.from_scorep("Exscan", 0, (n - 1) * b, n, n - 1, 0) == b
