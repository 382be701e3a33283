"""The count x delta models' counts (loggp.analysis.models) on both sides of each
switch: trees on and off a power of two ranks, pairwise against tree collectives,
one rank against two, blocking calls against the rest."""
import pytest

from loggp.analysis import models


@pytest.mark.parametrize("size, rounds", [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (7, 3), (8, 3), (9, 4)])
def test_a_tree_collective_takes_ceil_log2_rounds(size, rounds):
    assert models.collective_messages("MPI_Allreduce", 10, size) == 10 * rounds
    assert models.collective_bytes("MPI_Bcast", 100, size) == 100 * rounds


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_a_pairwise_collective_sends_to_every_other_rank(size):
    assert models.collective_messages("MPI_Alltoall", 10, size) == 10 * (size - 1)
    assert models.collective_bytes("MPI_Alltoall", 120, size) == pytest.approx(120 * (size - 1) / size)


def test_dependent_messages_count_only_the_calls_that_wait_for_one():
    profile = {"size": 3, "sent": {"messages": 7}, "received": {"messages": 4},
               "calls": {"MPI_Recv": 1, "MPI_Send": 5, "MPI_Ssend": 2, "MPI_Isend": 3, "MPI_Waitsome": 1,
                         "MPI_Testsome": 4, "MPI_Sendrecv_replace": 1, "MPI_Iprobe": 6},
               "collectives": {"MPI_MPI_Allreduce": {"calls": 2, "bytes": 16}}}
    counts = models.rank_counts(profile)
    # Recv, Ssend x2, Waitsome, Sendrecv_replace; Allreduce at 3 ranks: 2 rounds a call
    assert counts["dependent_messages"] == 5 + 2 * 2
    assert counts["sent_messages"] == 7 + 4 and counts["received_messages"] == 4 + 4
    assert counts["sent_bytes"] == 16 * 2


def test_messages_to_oneself_count_for_o_and_not_for_L_g_or_G():
    profile = {"size": 2, "sent": {"messages": 10, "bytes": 10000}, "received": {"messages": 10},
               "sent_to_self": {"messages": 4, "bytes": 8000}, "calls": {"MPI_Wait": 10}, "collectives": {}}
    counts = models.rank_counts(profile)
    assert counts["sent_messages"] == 10 and counts["received_messages"] == 10   # o_s + o_r: all ten
    assert counts["network_messages"] == 6 and counts["network_bytes"] == 2000
    assert counts["dependent_messages"] == 6
    merged = {"size": 2, "ranks": [profile, dict(profile, sent_to_self={})]}
    busiest = models.busiest(merged)
    assert busiest["network_bytes"] == 10000 and busiest["network_messages"] == 10
    assert models.per_unit_cost(busiest, "G") == pytest.approx(10000e-9)
    assert models.per_unit_cost(models.busiest({"size": 2, "ranks": [profile]}), "G") == pytest.approx(2000e-9)
    assert models.gap_upper_bound(counts) == pytest.approx(6e-9)


@pytest.mark.parametrize("name", ["MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Allgather", "MPI_Allgatherv",
                                  "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Iallgather", "MPI_Iallgatherv"])
def test_every_all_to_all_and_allgather_is_pairwise(name):
    # each rank sends a block to every other rank: 4 at 5 ranks, where a tree takes 3 rounds
    assert models.collective_messages(name, 2, 5) == 2 * 4


def test_o_s_counts_sends_and_o_r_receives():
    # a rank that sends 3 and receives 7: o_s is paid 3 times, o_r 7, o 10
    counts = models.rank_counts({"size": 2, "sent": {"messages": 3}, "received": {"messages": 7}})
    assert models.per_unit_cost(counts, "o_s") == pytest.approx(3e-9)
    assert models.per_unit_cost(counts, "o_r") == pytest.approx(7e-9)
    merged = models.busiest({"ranks": [{"size": 2, "sent": {"messages": 3}, "received": {"messages": 7}},
                                       {"size": 2, "sent": {"messages": 6}, "received": {"messages": 1}}]})
    assert models.per_unit_cost(merged, "o") == pytest.approx(10e-9)
    assert models.per_unit_cost(merged, "o_s") == pytest.approx(6e-9)
    assert models.per_unit_cost(merged, "o_r") == pytest.approx(7e-9)


@pytest.mark.parametrize("call", ["MPI_Probe", "MPI_Mprobe"])
def test_a_blocking_probe_waits_for_a_message(call):
    # a probe returns only once the message is there: one exposed latency, as a receive
    assert models.rank_counts({"size": 2, "calls": {call: 3}})["dependent_messages"] == 3
    assert models.rank_counts({"size": 2, "calls": {"MPI_Iprobe": 3}})["dependent_messages"] == 0


def test_messages_to_oneself_take_no_latency_from_the_collectives():
    # ten sends to oneself completed by one Waitall: that wait exposes no L, and the
    # collective's round (Bcast at 2 ranks) still does
    profile = {"size": 2, "sent": {"messages": 10}, "received": {"messages": 10},
               "sent_to_self": {"messages": 10}, "calls": {"MPI_Waitall": 1},
               "collectives": {"MPI_Bcast": {"calls": 1, "bytes": 8}}}
    assert models.rank_counts(profile)["dependent_messages"] == 1


def test_the_size_is_the_number_of_ranks_when_the_profile_does_not_say():
    ranks = [{"size": 3, "sent": {"messages": 1}}] * 3
    assert models.busiest({"ranks": ranks})["size"] == 3
