"""`loggp predict --jobs N`: the replays a prediction needs (each setting, each
tolerance's bisection) split across N processes, each with its own replay of the
trace (replays share nothing, so each process reads the files itself)."""
from concurrent.futures import ProcessPoolExecutor

TARGETS = (0.01, 0.05)  # the slowdowns whose tolerance (smallest delta reaching it) is searched

_worker = {}


def tasks(sweeps, highs):
    """Each replay job: ("point", knob, delta) per setting, ("tolerance", knob, target, high)."""
    out = [("point", knob, d) for knob, deltas in sweeps.items() for d in deltas]
    out += [("tolerance", knob, t, highs[knob]) for knob in sweeps for t in TARGETS]
    return out


def _run(programs, machine, task):
    from . import predict
    if task[0] == "point":
        _, knob, delta = task
        return predict.slowdowns(programs, machine, knob, [delta])[0]
    _, knob, target, high = task
    return predict.tolerance(programs, machine, knob, target, high)


def _start(folder, machine):
    from . import predict
    _worker["programs"], _worker["machine"] = predict.load(folder), machine


def _in_worker(task):
    return _run(_worker["programs"], _worker["machine"], task)


def evaluate(programs, folder, machine, sweeps, highs, jobs=1):
    """{knob: ([(delta, slowdown fraction)], {target: tolerance or None})}, the replays run in
    this process (jobs 1) or in up to jobs processes."""
    work = tasks(sweeps, highs)
    jobs = max(1, min(jobs, len(work)))
    if jobs == 1:
        results = [_run(programs, machine, t) for t in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_start, initargs=(str(folder), machine)) as pool:
            results = list(pool.map(_in_worker, work, chunksize=1))
    out = {knob: ([], {}) for knob in sweeps}
    for task, result in zip(work, results):
        if task[0] == "point":
            out[task[1]][0].append(result)
        else:
            out[task[1]][1][task[2]] = result
    return out
