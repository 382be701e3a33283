"""Rounds past a study's `repetitions`: while a knob's slope interval is wider than the
study's precision, another round of that benchmark's settings of the knob (with the
round's armed and zero-knob baselines, to pair them with) is planned, as long as its
estimated time fits the budget left. The plan lives in the store, so a killed study
resumes the round it was in; the time spent is the recorded runs' own, so the budget
survives a kill too."""
import json
import statistics
from dataclasses import dataclass

from . import paired
from .studyfile import ARMED_SWEEP, ZERO_SWEEP


@dataclass
class Need:
    """A benchmark whose slopes are not yet precise: which knobs, and how far off."""
    group: tuple            # (benchmark, np, class)
    knobs: list
    shortfall: float        # the widest interval over what the precision allows (inf: none yet)


def spent_s(runs, repetitions):
    """Seconds the added rounds took so far."""
    return sum(r["wall_seconds"] for r in runs if r["round"] >= repetitions)


def reference_s(group_runs):
    """The unperturbed runtime a slope is relative to: the zero-knob runs' median."""
    zero = [r["runtime_seconds"] for r in paired.ok(group_runs) if r["sweep"] == ZERO_SWEEP]
    return statistics.median(zero) if zero else None


def slopes(group_runs, knobs):
    """{knob: interval or None} of one benchmark's runs."""
    t0 = reference_s(group_runs)
    return {k: (paired.slope(group_runs, k, t0) if t0 else None) for k in knobs}


def needs(study, runs):
    """[Need] of every benchmark (at each np) with a swept knob whose slope is not yet
    within the study's precision, the furthest off first (those with no interval or no
    effect resolved last: they may never settle)."""
    if study.grid or not study.sweep:
        return []
    goal = study.precision_goal()
    groups = {}
    for r in runs:
        groups.setdefault(paired.group_of(r), []).append(r)
    out = []
    for s in study.settings():
        key = (s.benchmark, s.np, s.klass)
        if s.sweep != ZERO_SWEEP or any(n.group == key for n in out):
            continue
        found = slopes(groups.get(key, []), list(study.sweep))
        # a knob with no pair at all (every run of it, or of its baselines, failed) gets no more
        # rounds: they narrow an interval, they do not retry failures
        open_knobs = [k for k, interval in found.items() if interval is not None and not paired.settled(interval, goal)]
        if open_knobs:
            out.append(Need(key, open_knobs, max(paired.shortfall(found[k], goal) for k in open_knobs)))
    out.sort(key=lambda n: (n.shortfall == float("inf"), -n.shortfall if n.shortfall != float("inf") else 0))
    return out


def next_round(study, runs, budget_left_s, mean_wall):
    """[Setting] for one more round, in the study's round order (the benchmarks whose slopes
    fit the budget left by their estimated time, the furthest off first); [] when every
    slope is precise or nothing fits. mean_wall: {benchmark: seconds per run so far}."""
    chosen, estimate = [], 0.0
    if budget_left_s <= 0:
        return []
    fallback = statistics.mean(mean_wall.values()) if mean_wall else None
    for need in needs(study, runs):
        settings = [s for s in study.settings() if (s.benchmark, s.np, s.klass) == need.group
                    and (s.sweep in (ZERO_SWEEP, ARMED_SWEEP) or s.sweep in need.knobs)]
        per_run = mean_wall.get(need.group[0], fallback)
        if per_run is None:
            continue
        cost = per_run * len(settings)
        if estimate + cost > budget_left_s:
            continue
        chosen += settings
        estimate += cost
    return chosen


def describe(settings):
    """'cg np=2: L, G; mg np=2: L' for a progress line."""
    parts = {}
    for s in settings:
        if s.sweep not in (ZERO_SWEEP, ARMED_SWEEP):
            knobs = parts.setdefault(f"{s.benchmark} np={s.np}", [])
            if s.sweep not in knobs:
                knobs.append(s.sweep)
    return "; ".join(f"{name}: {', '.join(knobs)}" for name, knobs in parts.items())


def plan_rows(study, round_number, settings):
    """The store's plan rows of an added round, in the study's order for that round."""
    return [(round_number, i, s.key(), s.benchmark, s.np, s.klass, s.sweep, json.dumps(dict(s.knobs)))
            for i, s in enumerate(study.round_order(round_number, settings))]
