"""Whether the machine parameters a prediction uses describe the path the traced
run's messages took: the transport each trace header records (or run.json's)
against the probe's (`loggp probe --json`: "preload" says whether it ran
through libloggp.so, i.e. over libfabric as `loggp run` runs, or over MPI's own
transport). docs/predict.md, "The machine"."""
from loggp.knobs.command import EXIT_USAGE, CommandError

MATCHING_PROBE = "`loggp probe --L 0us --json FILE` (any knob runs it under `loggp run`, as the trace ran)"


def trace_transport(files, recorded):
    """The traced run's transport, 'libfabric:<provider>' or 'pmpi', from its headers (else
    from run.json's engine and provider); None where neither says."""
    said = sorted({f.transport for f in files if getattr(f, "transport", None)})
    if said:
        return ", ".join(said)
    if recorded:
        if recorded.get("engine") == "pmpi":
            return "pmpi"
        if recorded.get("provider"):
            return f"libfabric:{recorded['provider']}"
    return None


def as_run_record(transport):
    """A run.json-like record of what a header's transport says (for trace_record.unlike_default)."""
    if not transport:
        return None
    if transport == "pmpi":
        return {"engine": "pmpi", "provider": None}
    return {"engine": "libfabric", "provider": transport.split(":", 1)[1].split(";")[0] or None}


PLAIN_PROBE = "`loggp probe --json FILE` (no knob: plain mpiexec, MPI's own transport)"


def mismatch(probe, transport):
    """(why probe, the probe's JSON, does not measure the transport the trace took, the probe
    that would), or None."""
    preload = probe.get("preload") if isinstance(probe, dict) else None
    if preload is None or transport is None:
        return None
    through_loggp = preload != "none"
    if transport.startswith("libfabric") and not through_loggp:
        return (f"the probe ran without libloggp.so (\"preload\": \"none\": MPI's own transport, e.g. MPICH's "
                f"shared memory) but the trace ran over {transport}", MATCHING_PROBE)
    if transport == "pmpi" and through_loggp:
        return ("the probe ran through libloggp.so (libfabric, under `loggp run`) but the trace ran with the "
                "PMPI engine (pmpi), over MPI's own transport", PLAIN_PROBE)
    return None


def check(path, probe, transport):
    """CommandError (exit 2) when the probe at path measured another transport than the trace's."""
    found = mismatch(probe, transport)
    if found:
        why, advice = found
        raise CommandError(f"--machine {path}: {why}: its o, g, G, L and eager limit are not the traced path's. "
                           f"Probe that path: {advice}", exit_code=EXIT_USAGE)


DEFAULTS_NOTE = ("no --machine: the replay uses loggp's default parameters (MPICH over libfabric's shm provider, "
                 "measured on loggp's development machine), not this machine's; measure them with "
                 f"{MATCHING_PROBE} and give --machine FILE")
