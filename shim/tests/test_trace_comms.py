"""Communicator ids in a trace (shim/src/pmpi/comms.c): a traced np=4 run of
loggp-test-comms makes a duplicate of the world, a duplicate of it, a second
duplicate, a split by parity, a duplicate after a freed one, an Idup, a
Cartesian grid and its rows, an intercommunicator between the rows and its
merge; each is used by
one exchange with a tag of its own. Every rank must record one id per
communicator, the same on all its members, and different communicators
(colours, duplicates of duplicates, later duplicates) different ids; the
replay then matches every message and collective on the world-sized ones."""
import pytest

from loggp.analysis import loggops, predict, replay, trace as tr
from tests.testkit import built, installed, run

RANKS = 4
WORLD, DUP, DUP_OF_DUP, SECOND_DUP, PARITY, AFTER_FREE, IDUP, GRID, ROW, INTER, MERGED = range(11)
WORLD_SIZED = [WORLD, DUP, DUP_OF_DUP, SECOND_DUP, AFTER_FREE, IDUP, MERGED, GRID]
MPICH_WORLD = 0x44000000
DERIVED = range(0x20000000, 0x40000000)  # where an id made from a parent's lies (docs/trace-format.md)


def exchanges(out):
    """{tag: [comm_id of each rank's Sendrecv with that tag]} and the traces, of one traced run."""
    traces = tr.read_folder(out)
    ids = {}
    for t in traces:
        r = t.records
        sends = r[(t.call_names() == "MPI_Sendrecv") & (r["kind"] == tr.CALL)]
        assert sorted(sends["tag"]) == list(range(11)), t.rank
        for rec in sends:
            ids.setdefault(int(rec["tag"]), []).append((int(rec["comm_id"]), int(rec["comm_size"])))
    return ids, traces


@pytest.fixture(scope="module", params=["libfabric", "pmpi"])
def traced(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"comms-{request.param}")
    proc = run([installed("loggp"), "run", "-n", RANKS, "--quiet", "--engine", request.param, "--trace", out,
                "--", built("shim/tests/loggp-test-comms")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("comms OK 11") == RANKS, proc.stdout
    return out


def test_each_world_sized_communicator_has_one_id_on_every_rank_and_its_own(traced):
    ids, _ = exchanges(traced)
    one = {}
    for tag in WORLD_SIZED:
        assert len(set(ids[tag])) == 1, (tag, ids[tag])
        one[tag], size = ids[tag][0]
        assert size == RANKS
    assert one[WORLD] == MPICH_WORLD
    assert all(one[tag] in DERIVED for tag in WORLD_SIZED if tag != WORLD)
    # dup, dup of dup, a second dup, one after a free (MPICH hands the freed handle back), ...: all apart
    assert len(set(one.values())) == len(WORLD_SIZED), one


def test_a_split_gives_each_colour_its_own_id_shared_by_its_members(traced):
    ids, _ = exchanges(traced)
    for tag, groups in ((PARITY, [[0, 2], [1, 3]]), (ROW, [[0, 1], [2, 3]]), (INTER, [[0, 1, 2, 3]])):
        per_rank = ids[tag]
        assert {size for _, size in per_rank} == {2}
        for members in groups:
            assert len({per_rank[r][0] for r in members}) == 1, (tag, members, per_rank)
        if len(groups) > 1:
            assert per_rank[groups[0][0]][0] != per_rank[groups[1][0]][0], (tag, per_rank)
    world_sized = {ids[tag][0][0] for tag in WORLD_SIZED}
    smaller = {i for tag in (PARITY, ROW, INTER) for i, _ in ids[tag]}
    assert len(smaller) == 5 and not smaller & world_sized


def test_the_replay_matches_every_exchange_and_collective(traced):
    _, traces = exchanges(traced)
    programs = replay.build(traces)
    # a Sendrecv on each world-sized communicator: a send and a receive per rank
    p2p = [op for prog in programs.programs for op in prog
           if op[0] in ("isend", "irecv") and not isinstance(op[2][1], tuple)]
    assert sum(op[0] == "isend" for op in p2p) == sum(op[0] == "irecv" for op in p2p) == RANKS * len(WORLD_SIZED)
    assert programs.collectives["Barrier"] == RANKS * len(WORLD_SIZED)
    # the smaller communicators' calls (no membership to map their ranks) and the Idup keep their time
    smaller = len(range(11)) - len(WORLD_SIZED)
    assert programs.unmodelled == {"MPI_Sendrecv": RANKS * smaller, "MPI_Barrier": RANKS * smaller,
                                   "MPI_Comm_idup": RANKS}
    params = loggops.Params(o_s=100.0, o_r=200.0, L=1000.0, G=0.01, S=4096)
    want = loggops.simulate_reference(programs.programs, params)
    got = predict.load(traced).simulate(params)
    assert got.end_ns == pytest.approx(want.end_ns, rel=1e-12)
