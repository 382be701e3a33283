"""The report's split by region (analysis/loggp/analysis/region_report.py) from
hand-made profiles: shares of messages, bytes and injected delay, summed over
ranks, median over runs; nothing for runs that marked no region."""
import json

from loggp.analysis import region_report


def rank(kernel_msgs, outside_msgs, kernel_inj=0, outside_inj=0, marked=True, scope="kernel"):
    def part(m, inj):
        return {"sent": {"messages": m, "bytes": 8 * m}, "received": {"messages": m, "bytes": 8 * m},
                "injected_ns": {"o_s": 0, "o_r": 0, "g": 0, "G": 0, "L": inj}}
    return {"regions": {"marked": marked, "scope": scope, "kernel": part(kernel_msgs, kernel_inj),
                        "outside": part(outside_msgs, outside_inj)}}


def run(ranks, setting="baseline", status="ok"):
    return {"benchmark": "cg", "np": 2, "class": "S", "status": status, "setting": setting,
            "profile": json.dumps({"ranks": ranks})}


def test_shares_sum_over_ranks_and_take_the_median_over_runs():
    runs = [run([rank(90, 10, 4_000_000), rank(60, 40, 2_000_000)], "L=50us"),
            run([rank(90, 10, 8_000_000), rank(60, 40, 2_000_000)], "L=50us"),
            run([rank(90, 10, 6_000_000), rank(60, 40, 2_000_000)], "L=50us"),
            run([rank(1, 1)], "L=50us", status="timeout")]
    (row,) = region_report.region_rows(runs, lambda r: r["setting"])
    got = dict(zip(region_report.HEADER, row))
    assert (got["runs"], got["kernel_messages"], got["outside_messages"]) == (3, 150, 50)
    assert got["kernel_share_messages"] == 0.75 and got["kernel_share_bytes"] == 0.75
    assert got["injected_kernel_ms"] == 8.0 and got["injected_outside_ms"] == 0.0  # median of 6, 8, 10 ms
    assert got["kernel_share_injected"] == 1.0 and got["scope"] == "kernel"


def test_runs_without_a_marked_region_or_a_profile_give_no_row():
    runs = [run([rank(0, 100, marked=False)]), {"benchmark": "cg", "np": 2, "class": "S", "status": "ok",
                                                 "setting": "baseline", "profile": None}]
    assert region_report.region_rows(runs, lambda r: r["setting"]) == []
