"""The count x delta models fed by the profile of a real kernel run: NPB CG
class S at np=2 under `loggp run --profile`, whose traffic is known from the
NPB specification (the kernel's own CTest traffic test checks the same)."""
import pytest

from loggp.analysis import models
from loggp.harness import runner
from tests.testkit import installed, run

# CG class S, np=2, as its CTest traffic test (npb_cg_S_np2_traffic) counts it
# with a PMPI tally: 832 sends of 5600 B, 832 of 8 B and 16 of 16 B per rank,
# each received by an Irecv + Wait; one Barrier, Bcast and Reduce (one message
# each at np=2).
CG_S_NP2_P2P = 1680
CG_S_NP2_COLLECTIVE_MESSAGES = 3
# at np = 2 the grid is 1 x 2 and each rank's transpose partner is itself: half
# the 5600 B messages never reach the network
CG_S_NP2_TO_SELF = 416


@pytest.fixture(scope="module")
def cg_profile(tmp_path_factory):
    out = tmp_path_factory.mktemp("cg") / "profile"
    proc = run([installed("loggp"), "run", "-n", "2", "--quiet", "--o", "1us", "--L", "1us", "--profile", out,
                "--", installed("loggp-npb-cg"), "S"], timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESSFUL" in proc.stdout
    profile = runner.merge_profiles(str(out))
    assert profile and profile["missing_ranks"] == 0
    return profile


def test_counts_from_a_real_cg_run(cg_profile):
    counts = models.busiest(cg_profile)
    assert counts["p2p_messages"] == CG_S_NP2_P2P
    assert counts["collective_messages_estimate"] == CG_S_NP2_COLLECTIVE_MESSAGES
    assert counts["sent_messages"] == counts["received_messages"] == CG_S_NP2_P2P + CG_S_NP2_COLLECTIVE_MESSAGES
    assert counts["overhead_messages"] == 2 * (CG_S_NP2_P2P + CG_S_NP2_COLLECTIVE_MESSAGES)
    # every receive is an Irecv completed by one MPI_Wait: one exposed latency each, but
    # for the messages a rank sends itself
    assert counts["dependent_messages"] == CG_S_NP2_P2P - CG_S_NP2_TO_SELF + CG_S_NP2_COLLECTIVE_MESSAGES
    assert cg_profile["ranks"][0]["sent_to_self"] == {"messages": CG_S_NP2_TO_SELF, "bytes": CG_S_NP2_TO_SELF * 5600}
    assert counts["network_messages"] == CG_S_NP2_P2P - CG_S_NP2_TO_SELF + CG_S_NP2_COLLECTIVE_MESSAGES
    assert counts["network_bytes"] == counts["sent_bytes"] - CG_S_NP2_TO_SELF * 5600
    sizes = {(b["min_bytes"], b["messages"]) for b in cg_profile["ranks"][0]["sent"]["by_size"]}
    assert sizes == {(8, 832), (16, 16), (4096, 832)}
    assert models.per_unit_cost(counts, "o") == pytest.approx(2 * 1683e-9)


def test_o_model_predicts_the_delay_the_shim_injected(cg_profile):
    counts = models.busiest(cg_profile)
    predicted = models.per_unit_cost(counts, "o") * 1000  # o = 1 us = 1000 ns
    assert models.injected_busiest(cg_profile, "o") == pytest.approx(predicted, rel=0.02)
