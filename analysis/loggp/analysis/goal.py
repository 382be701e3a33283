"""A trace as a GOAL schedule, the text LogGOPSim's txt2bin reads (Hoefler, Schneider,
Lumsdaine, HPDC 2010; grammar from spcl/LogGOPSim's txt2bin, as facts).

The schedule is the replay's own program (loggp.analysis.replay): the same
computation gaps, the same matching, collectives expanded into the same MPICH
schedules. Each rank's operations form a chain, since GOAL runs every operation
whose dependencies are met at once:

    calc            next operation `requires` it (starts when it ends)
    isend / irecv   next operation `irequires` it (starts when it has started)
    wait            a `calc 0` that `requires` each request it waits for

Times are integer nanoseconds (LogGOPSim's time unit); GOAL matches on (peer, tag)
only, so each (communicator, tag) of the replay, and each collective instance,
gets a tag of its own. Docs: docs/trace-formats.md."""
from . import replay


def schedule_text(programs, source=""):
    """The GOAL text of replay.Programs."""
    tags = {}

    def tag_of(key):
        return tags.setdefault(key, len(tags))

    lines = [f"// loggp trace export{' of ' + source if source else ''}: {len(programs.programs)} ranks, "
             "calc in ns", f"num_ranks {len(programs.programs)}"]
    for rank, program in enumerate(programs.programs):
        lines.append(f"rank {rank} {{")
        lines += _rank_lines(program, tag_of)
        lines.append("}")
    return "\n".join(lines) + "\n"


def _rank_lines(program, tag_of):
    out = []
    label_of_request = {}
    prev = None          # (label, "requires" or "irequires") the next operation depends on
    count = 0

    def add(text):
        nonlocal count
        label = f"l{count}"
        count += 1
        out.append(f"{label}: {text}")
        if prev is not None:
            out.append(f"{label} {prev[1]} {prev[0]}")
        return label

    for op in program:
        kind = op[0]
        if kind == "calc":
            prev = (add(f"calc {int(round(op[1]))}"), "requires")
        elif kind in ("isend", "irecv"):
            _, peer, key, nbytes, req = op[:5]   # GOAL has no synchronous or buffered send: a plain one
            # LogGOPSim charges (size-1)G on unsigned sizes; 1 byte costs what 0 bytes costs in the replay
            size = max(int(nbytes), 1)
            text = f"send {size}b to {peer}" if kind == "isend" else f"recv {size}b from {peer}"
            label = add(f"{text} tag {tag_of(key)}")
            label_of_request[req] = label
            prev = (label, "irequires")
        elif kind == "wait":
            labels = [label_of_request.pop(req) for req in op[1] if req in label_of_request]
            if not labels:
                continue  # every request was complete at its post (modelled inline)
            label = add("calc 0")
            out += [f"{label} requires {other}" for other in labels]
            prev = (label, "requires")
        elif kind == "done":
            label_of_request.pop(op[1], None)
        else:
            raise ValueError(f"unknown operation {kind!r}")
    return out


def export(traces, source=""):
    """GOAL text of a list of loggp.analysis.trace.Trace (one run, rank order)."""
    return schedule_text(replay.build(traces), source)
