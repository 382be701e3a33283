"""`loggp predict --jobs N`: the replays a prediction needs (each setting, at the
machine's parameters and at the ends of their interval where the probe gives one,
and each tolerance's bisection) split across N processes, each with its own
replay of the trace (replays share nothing, so each process reads the files itself)."""
from concurrent.futures import ProcessPoolExecutor

from . import predict

TARGETS = (0.01, 0.05)  # the slowdowns whose tolerance (smallest delta reaching it) is searched

_worker = {}


def tasks(sweeps, highs, machines):
    """Each replay job: ("point", knob, delta, machine name) per setting and machine,
    ("tolerance", knob, target, high) at the machine itself ("mid")."""
    out = [("point", knob, d, m) for m in machines for knob, deltas in sweeps.items() for d in deltas]
    out += [("tolerance", knob, t, highs[knob]) for knob in sweeps for t in TARGETS]
    return out


def _run(programs, machines, task):
    if task[0] == "point":
        _, knob, delta, m = task
        return predict.slowdowns(programs, machines[m], knob, [delta])[0]
    _, knob, target, high = task
    return predict.tolerance(programs, machines["mid"], knob, target, high)


def _start(folder, machines):
    _worker["programs"], _worker["machines"] = predict.load(folder), machines


def _in_worker(task):
    return _run(_worker["programs"], _worker["machines"], task)


def evaluate(programs, folder, machines, sweeps, highs, jobs=1):
    """machines: {"mid": the machine, optionally "low" and "high": its interval's ends}.
    {knob: ({machine name: [(delta, slowdown fraction)]}, {target: tolerance or None})}, the
    replays run in this process (jobs 1) or in up to jobs processes."""
    work = tasks(sweeps, highs, machines)
    jobs = max(1, min(jobs, len(work)))
    if jobs == 1:
        results = [_run(programs, machines, t) for t in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_start, initargs=(str(folder), machines)) as pool:
            results = list(pool.map(_in_worker, work, chunksize=1))
    out = {knob: ({m: [] for m in machines}, {}) for knob in sweeps}
    for task, result in zip(work, results):
        if task[0] == "point":
            out[task[1]][0][task[3]].append(result)
        else:
            out[task[1]][1][task[2]] = result
    return out
