"""Runs grouped the way every sweep's curve needs them: the successful runs
of one application (benchmark, np, class), and that application's baseline."""


def by_application(runs):
    """[((benchmark, np, class), rows, baseline runtimes)] of the successful
    runs with a runtime, sorted; applications without a usable baseline left out."""
    ok = [r for r in runs if r["status"] == "ok" and r["runtime_seconds"] is not None]
    groups = {}
    for r in ok:
        groups.setdefault((r["benchmark"], r["np"], r["class"]), []).append(r)
    out = []
    for key, rows in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")):
        base = [r["runtime_seconds"] for r in rows if r["sweep"] == "baseline"]
        if base and min(base) > 0:
            out.append((key, rows, base))
    return out
