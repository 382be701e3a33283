"""Messages, bytes and injected delay by region: what share
of each benchmark's traffic its kernel region (loggp_hint IN_KERNEL or
MPI_Pcontrol; our kernels mark their timed section) holds, and where the
knobs' delay went, per setting. From the ranks' profiles (`regions` in
docs/profile.md), summed over ranks, median over a setting's runs."""
import json
import statistics

HEADER = ["benchmark", "np", "class", "setting", "scope", "runs", "kernel_messages", "outside_messages",
          "kernel_share_messages", "kernel_share_bytes", "injected_kernel_ms", "injected_outside_ms",
          "kernel_share_injected"]


def _sums(profile):
    """{region: (messages, bytes, injected ns)} summed over ranks, the scope, and
    whether any rank marked a region; None without regions in the profile."""
    ranks = profile.get("ranks") or []
    if not ranks or not all("regions" in r for r in ranks):
        return None
    sums, scope, marked = {}, "all", False
    for r in ranks:
        reg = r["regions"]
        marked |= bool(reg.get("marked"))
        scope = reg.get("scope", scope)
        for name in ("kernel", "outside"):
            part = reg.get(name) or {}
            sent = part.get("sent") or {}
            m, b, i = sums.get(name, (0, 0, 0))
            sums[name] = (m + sent.get("messages", 0), b + sent.get("bytes", 0),
                          i + sum((part.get("injected_ns") or {}).values()))
    return sums, scope, marked


def _share(part, whole):
    return part / whole if whole else None


def region_rows(runs, setting_of):
    """Rows of HEADER for each (benchmark, np, class, setting) whose runs marked
    a kernel region; setting_of(run) names a run's setting."""
    groups = {}
    for r in runs:
        if r.get("status") != "ok" or not r.get("profile"):
            continue
        got = _sums(json.loads(r["profile"]))
        if not got or not got[2]:
            continue
        key = (r["benchmark"], r["np"], r["class"] or "", setting_of(r))
        groups.setdefault(key, []).append(got)
    rows = []
    for key, got in sorted(groups.items()):
        def med(region, field):
            return statistics.median(g[0][region][field] for g in got)
        km, om = med("kernel", 0), med("outside", 0)
        kb, ob = med("kernel", 1), med("outside", 1)
        ki, oi = med("kernel", 2), med("outside", 2)
        rows.append(list(key) + [got[0][1], len(got), km, om, _share(km, km + om), _share(kb, kb + ob),
                                 ki / 1e6, oi / 1e6, _share(ki, ki + oi)])
    return rows
