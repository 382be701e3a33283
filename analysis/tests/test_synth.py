"""Synthetic traces (loggp.analysis.synth) replay to the critical path their pattern
gives in closed form, and the replay reads them a chunk of records at a time."""
import numpy as np
import pytest

from loggp.analysis import loggops, predict, replay, synth, trace
from loggp.analysis.loggops import Params

MACHINES = [Params(o_s=150.0, o_r=150.0, g=100.0, G=0.05, L=300.0, S=4096),
            Params(o_s=1000.0, o_r=200.0, g=0.0, G=1.0, L=10000.0, S=1 << 20),
            Params(o_s=0.0, o_r=0.0, g=0.0, G=0.0, L=0.0)]


@pytest.mark.parametrize("name, size, nbytes", [("halo", 2, 2048), ("halo", 8, 2048), ("halo", 12, 2048),
                                                ("halo", 27, 2048), ("ring", 2, 2048), ("ring", 5, 2048),
                                                ("alltoall", 3, 2048), ("alltoall", 8, 2048),   # every peer at once
                                                ("alltoall", 8, 200), ("alltoall", 12, 64)])    # Bruck's
@pytest.mark.parametrize("machine", range(len(MACHINES)))
def test_a_generated_trace_replays_to_its_critical_path(tmp_path, name, size, nbytes, machine):
    check_critical_path(tmp_path, name, size, nbytes, machine)


@pytest.mark.parametrize("machine", [1, 2])   # the eager ones at 40000 B
def test_a_large_alltoall_replays_to_its_pairwise_critical_path(tmp_path, machine):
    check_critical_path(tmp_path, "alltoall", 3, 40000, machine)


def check_critical_path(tmp_path, name, size, nbytes, machine):
    pattern = synth.Pattern(name, size, phases=4, nbytes=nbytes, compute_ns=25000)
    pattern.write(tmp_path)
    params = machine if isinstance(machine, Params) else MACHINES[machine]
    replayed = predict.load(tmp_path).simulate(params).runtime_ns
    assert replayed == pytest.approx(pattern.critical_path_ns(params), rel=1e-12)
    # and the Python replay of the same trace agrees
    programs = replay.build(trace.read_folder(tmp_path))
    assert loggops.simulate_reference(programs.programs, params).runtime_ns == pytest.approx(replayed, rel=1e-12)


@pytest.mark.parametrize("size, each", [(8, 256), (8, 257), (3, 32768), (3, 32769)])
def test_an_alltoall_at_either_side_of_a_switch_replays_to_its_critical_path(tmp_path, size, each):
    # Bruck's up to 256 B a peer (8 ranks), every peer at once up to 32768 B, pairwise above
    check_critical_path(tmp_path, "alltoall", size, each, 1)


def test_receptions_are_g_apart_where_g_exceeds_o_r(tmp_path):
    # a halo's receives take the neighbours' messages out of their order of sending, so one
    # found already there waits for the gap after the reception before it, not only o_r
    check_critical_path(tmp_path, "halo", 8, 64, Params(o_s=50.0, o_r=50.0, g=400.0, G=0.0, L=1000.0))


def test_the_closed_form_holds_up_to_the_eager_limit_itself(tmp_path):
    params = Params(o_s=100.0, o_r=100.0, g=50.0, G=0.5, L=2000.0, S=2048)
    at = synth.Pattern("halo", 8, phases=2, nbytes=2048, compute_ns=1000)
    at.write(tmp_path)
    assert predict.load(tmp_path).simulate(params).runtime_ns == pytest.approx(at.critical_path_ns(params), rel=1e-12)
    with pytest.raises(ValueError, match="past the eager limit"):
        synth.Pattern("halo", 8, phases=2, nbytes=2049, compute_ns=1000).critical_path_ns(params)


def test_a_scattered_alltoall_is_in_closed_form_up_to_one_round_of_peers(tmp_path):
    throttle = synth.schedules.ALLTOALL_THROTTLE
    check_critical_path(tmp_path, "alltoall", throttle, 1024, 1)
    with pytest.raises(ValueError, match="more than one round"):
        synth.Pattern("alltoall", throttle + 1, phases=1, nbytes=1024, compute_ns=0).critical_path_ns(MACHINES[1])


@pytest.mark.parametrize("name, size", [("halo", 8), ("ring", 2), ("ring", 5), ("alltoall", 4)])
def test_each_rank_calls_one_call_after_another(tmp_path, name, size):
    # as a traced program does: every call starts no earlier than the one before it ended, and the
    # run's traced length is what the calls and their computation take (the ring's steps follow
    # one another, each its own length later)
    pattern = synth.Pattern(name, size, phases=3, nbytes=64, compute_ns=1000)
    pattern.write(tmp_path)
    for t in trace.read_folder(tmp_path):
        calls = t.records[t.records["kind"] == trace.CALL]
        starts, ends = calls["start_ns"].astype(np.int64), calls["end_ns"].astype(np.int64)
        assert np.all(starts[1:] >= ends[:-1]), t.path
        one_phase = pattern.phase_records(t.rank)
        one_calls = one_phase[one_phase["kind"] == trace.CALL]
        busy = int(np.sum(one_calls["end_ns"].astype(np.int64) - one_calls["start_ns"].astype(np.int64)))
        assert int(t.finalize_ns - t.init_ns) == 3 * (busy + 1000)


def test_a_pattern_needs_two_ranks(tmp_path):
    with pytest.raises(ValueError, match="at least 2"):
        synth.Pattern("ring", 1, 1, 8, 0).write(tmp_path)


def test_the_critical_path_grows_with_each_parameter():
    pattern = synth.Pattern("halo", 27, phases=2, nbytes=1024, compute_ns=1000)
    base = pattern.critical_path_ns(MACHINES[1])  # L long enough not to hide behind the overheads
    for knob in ("o_s", "o_r", "L", "G"):
        assert pattern.critical_path_ns(MACHINES[1].plus(**{knob: 10.0})) > base, knob


def test_the_grid_and_its_neighbours():
    assert synth.grid(4096) == (16, 16, 16) and synth.grid(12) == (3, 2, 2) and synth.grid(7) == (7, 1, 1)
    assert sorted(p for p, _ in synth.neighbours(0, (3, 3, 3))) == [1, 2, 3, 6, 9, 18]
    assert [d for _, d in synth.neighbours(0, (7, 1, 1))] == [0, 1]


def test_an_unknown_pattern_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown pattern 'mesh'"):
        synth.Pattern("mesh", 4, 1, 8, 0).write(tmp_path)


def test_the_reader_holds_one_chunk_per_rank_however_long_the_trace(tmp_path):
    pattern = synth.Pattern("halo", 8, phases=200, nbytes=64, compute_ns=1000)
    per_rank = pattern.write(tmp_path)
    chunk = 64
    assert per_rank > 20 * chunk
    replayed = predict.load(tmp_path, chunk=chunk)
    replayed.simulate(MACHINES[0])
    peak, reads = replayed.reader_stats()
    assert (peak == chunk).all()                        # never more than a chunk held
    assert (reads >= 3 * -(-per_rank // chunk)).all()   # the scan, the count and this replay each read it all
    whole = predict.load(tmp_path, chunk=per_rank)
    assert whole.simulate(MACHINES[0]).runtime_ns == replayed.simulate(MACHINES[0]).runtime_ns


@pytest.mark.parametrize("name", ["halo", "ring", "alltoall"])
def test_the_replay_state_does_not_grow_with_the_trace(tmp_path, name):
    peaks = []
    for phases in (5, 50):
        folder = tmp_path / str(phases)
        synth.Pattern(name, 8, phases=phases, nbytes=64, compute_ns=1000).write(folder)
        replayed = predict.load(folder)
        replayed.simulate(MACHINES[0])
        peaks.append(replayed.state_peak())
    short, long = peaks
    assert short == long and short["requests"] > 0  # collectives too: only those some rank has not reached


def test_the_python_reader_yields_chunks(tmp_path):
    synth.Pattern("ring", 3, phases=10, nbytes=64, compute_ns=10).write(tmp_path)
    f = trace.open_trace(tmp_path / "trace.1.bin")
    chunks = list(trace.iter_records(f, chunk=16))
    assert max(len(c) for c in chunks) == 16 and sum(len(c) for c in chunks) == f.count
    assert np.array_equal(np.concatenate(chunks), trace.read(f.path).records)


@pytest.mark.parametrize("field, value, said", [
    ("kind", 9, "is corrupt (call"),
    ("call", 999, "is corrupt (call 999"),
])
def test_a_corrupt_record_deep_in_a_streamed_trace_is_named_by_file_and_offset(tmp_path, field, value, said):
    synth.Pattern("ring", 3, phases=50, nbytes=64, compute_ns=10).write(tmp_path)
    f = trace.open_trace(tmp_path / "trace.2.bin")
    k = f.count - 5  # past the first chunks
    at = f.records_offset + k * trace.RECORD.itemsize
    data = bytearray(f.path.read_bytes())
    offset = at + trace.RECORD.fields[field][1]
    size = trace.RECORD.fields[field][0].itemsize
    data[offset:offset + size] = value.to_bytes(size, "little")
    f.path.write_bytes(bytes(data))
    with pytest.raises(trace.TraceError) as info:
        predict.load(tmp_path, chunk=16)
    assert info.value.path == str(f.path) and info.value.offset == at
    assert f"record {k} {said}" in str(info.value)
