"""The one door every trace reader goes through: a folder of our traces
(`loggp run --trace DIR`, loggp.analysis.trace) or an OTF2 archive of an MPI run
(its folder or its anchor file, loggp.analysis.otf2_import), as one Trace per rank."""
from . import otf2_import, trace


def read(path, notes=None):
    """Traces in rank order, as trace.read_folder returns them; TraceError naming the
    file or folder when it is neither. notes (a list) gets a line per kind of OTF2
    event left out, or naming a folder's unfinished traces of a dead run."""
    if otf2_import.is_archive(path):
        return otf2_import.read(path, notes)
    traces = trace.read_folder(path)
    unfinished = trace.unfinished_note(path)
    if unfinished and notes is not None:
        notes.append(unfinished)  # a dead run's files beside these: said, not read
    return traces
