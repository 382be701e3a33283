"""Communicator ids in a trace (shim/src/pmpi/comms.c): a traced np=4 run of
loggp-test-comms makes a duplicate of the world, a duplicate of it, a second
duplicate, a split by parity, a duplicate after a freed one, an Idup, a
Cartesian grid and its rows, an intercommunicator between the rows and its
merge; each is used by
one exchange with a tag of its own. Every rank must record one id per
communicator, the same on all its members, and different communicators
(colours, duplicates of duplicates, later duplicates) different ids, and the
members of each intracommunicator it belongs to; the replay then matches
every message and collective on them.

loggp-test-reorder talks on communicators whose ranks are not the world's (a
split with reversed keys, halves by parity): both replays must map its ranks
through the recorded members, to the peers the program itself chose."""
import pytest

from loggp.analysis import loggops, native, predict, replay, trace as tr, trace_write
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


def test_each_rank_records_the_members_of_its_intracommunicators(traced):
    ids, traces = exchanges(traced)
    halves = {PARITY: [[0, 2], [1, 3]], ROW: [[0, 1], [2, 3]]}
    for t in traces:
        want = {ids[tag][t.rank][0]: tuple(range(RANKS)) for tag in WORLD_SIZED if tag != WORLD}
        for tag, groups in halves.items():
            want[ids[tag][t.rank][0]] = tuple(next(g for g in groups if t.rank in g))
        # an intercommunicator's ranks name the other group's: no membership, nor the freed duplicate's
        freed = set(t.comms) - set(want)
        assert len(freed) == 1 and t.comms[freed.pop()] == tuple(range(RANKS))
        assert {c: m for c, m in t.comms.items() if c in want} == want
        assert ids[INTER][t.rank][0] not in t.comms


def test_the_replay_matches_every_exchange_and_collective(traced):
    _, traces = exchanges(traced)
    programs = replay.build(traces)
    # a Sendrecv on each intracommunicator: a send and a receive per rank
    mapped = len(WORLD_SIZED) + 2
    p2p = [op for prog in programs.programs for op in prog
           if op[0] in ("isend", "irecv") and not isinstance(op[2][1], tuple)]
    assert sum(op[0] == "isend" for op in p2p) == sum(op[0] == "irecv" for op in p2p) == RANKS * mapped
    assert programs.collectives["Barrier"] == RANKS * mapped
    # the intercommunicator's calls (no membership to map their ranks) and the Idup keep their time
    assert programs.unmodelled == {"MPI_Sendrecv": RANKS, "MPI_Barrier": RANKS, "MPI_Comm_idup": RANKS}
    params = loggops.Params(o_s=100.0, o_r=200.0, L=1000.0, G=0.01, S=4096)
    want = loggops.simulate_reference(programs.programs, params)
    got = predict.load(traced).simulate(params)
    assert got.end_ns == pytest.approx(want.end_ns, rel=1e-12)


# ---- loggp-test-reorder: communicators whose ranks are not the world's ----

def reversed_members(np_):
    """The split with keys np-1-rank: its rank k is world rank np-1-k."""
    return [np_ - 1 - k for k in range(np_)]


def halves(np_):
    """The split by parity, keys the world rank: world ranks 0, 2, ... and 1, 3, ..."""
    return [[w for w in range(np_) if w % 2 == colour] for colour in (0, 1)]


def expected_messages(np_):
    """(sender, receiver, bytes, tag) of each point-to-point message the program sends, in world
    ranks, from its own logic: on the reversed split each of its ranks k to k+1 (4 (world rank + 1)
    bytes, tag 1); on each half its rank 0 to its rank 1 (16 bytes, tag 2)."""
    rev = reversed_members(np_)
    out = [(rev[k], rev[(k + 1) % np_], 4 * (rev[k] + 1), 1) for k in range(np_)]
    out += [(members[0], members[1], 16, 2) for members in halves(np_)]
    return sorted(out)


@pytest.fixture(scope="module")
def reordered(tmp_path_factory):
    out = tmp_path_factory.mktemp("reorder")
    proc = run([installed("loggp"), "run", "-n", RANKS, "--quiet", "--trace", out, "--",
                built("shim/tests/loggp-test-reorder")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("reorder OK") == RANKS, proc.stdout
    return out


def test_the_reordered_communicators_members_are_recorded(reordered):
    traces = tr.read_folder(reordered)
    for t in traces:
        assert t.version == tr.VERSION == 4
        half = next(h for h in halves(RANKS) if t.rank in h)
        assert sorted(t.comms.values()) == sorted([tuple(reversed_members(RANKS)), tuple(half)])


def test_the_replay_sends_each_message_to_the_rank_the_program_did(reordered):
    programs = replay.build(tr.read_folder(reordered))
    assert programs.unmodelled == {}
    sent, received = [], []
    for me, prog in enumerate(programs.programs):
        for op in prog:
            if op[0] in ("isend", "irecv") and not isinstance(op[2][1], tuple):
                (sent if op[0] == "isend" else received).append(
                    (me, op[1], op[3], op[2][1]) if op[0] == "isend" else (op[1], me, op[3], op[2][1]))
    assert sorted(sent) == sorted(received) == expected_messages(RANKS)


def test_the_reordered_collectives_run_among_their_members(reordered):
    programs = replay.build(tr.read_folder(reordered))
    assert programs.collectives == {"Bcast": RANKS, "Allreduce": RANKS, "Barrier": RANKS}
    bcasts = {int(rec["comm_id"]) for t in tr.read_folder(reordered) for rec in t.calls()
              if t.names[rec["call"]] == "MPI_Bcast"}
    (reversed_id,) = bcasts
    flights = {}  # (communicator, collective's number) -> {(sender, receiver)}
    for me, prog in enumerate(programs.programs):
        for op in prog:
            if op[0] == "isend" and isinstance(op[2][1], tuple):
                flights.setdefault((op[2][0], op[2][1][1]), set()).add((me, op[1]))
    # the Bcast from the split's rank 0, world rank np-1: it sends, and nobody sends to it
    bcast = flights[(reversed_id, 0)]
    root = reversed_members(RANKS)[0]
    assert root in {s for s, _ in bcast} and root not in {r for _, r in bcast}
    assert {r for _, r in bcast} == set(range(RANKS)) - {root}
    # each half's Barrier: its two members, each way, and no one else
    barriers = [pairs for (comm, _), pairs in flights.items() if comm != reversed_id]
    assert sorted(map(sorted, barriers)) == sorted(sorted([(a, b), (b, a)]) for a, b in halves(RANKS))


def test_both_replays_agree_on_the_reordered_run(reordered):
    programs = replay.build(tr.read_folder(reordered))
    params = loggops.Params(o_s=100.0, o_r=200.0, L=1000.0, G=0.01, S=4096)
    want = loggops.simulate_reference(programs.programs, params)
    with native.TraceReplay(tr.open_folder(reordered)) as files:
        assert files.messages == programs.messages == len(expected_messages(RANKS)) + \
            sum(op[0] == "isend" and isinstance(op[2][1], tuple) for prog in programs.programs for op in prog)
        assert files.collectives == programs.collectives and files.unmodelled == {}
        got = files.simulate(params)
    assert got.end_ns == pytest.approx(want.end_ns, rel=1e-12)


def test_without_the_members_the_reversed_split_cannot_be_replayed(reordered, tmp_path):
    # the same run as version 3 would have traced it: the reversed split taken in world order
    for t in tr.read_folder(reordered):
        t.comms = {}
        trace_write.write_folder(tmp_path, [t])
    with pytest.raises(loggops.DeadlockError):
        replay.build(tr.read_folder(tmp_path)).simulate(loggops.Params(L=1000.0))
    with pytest.raises(loggops.DeadlockError):
        predict.load(tmp_path).simulate(loggops.Params(L=1000.0))
