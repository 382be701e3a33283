"""What `loggp tune packet` writes: packet.json, packet.csv, packet.txt and
packet.png (time against packet size per setting, measured and predicted),
each file written atomically."""
import csv
import io
import json
from pathlib import Path

from loggp.knobs.files import atomic_write, write_text_atomic

CSV_FIELDS = ("setting", "packet_size", "records_per_packet", "packets", "bytes", "reps", "median_us",
              "ci_low_us", "ci_high_us", "predicted_us")


def csv_text(results):
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for res in results:
        for row in res["rows"]:
            w.writerow({"setting": res["setting"], **row})
    return buf.getvalue()


def size_text(n):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def interval_text(row):
    """A row's 95 % interval, or why it has none (too few reps)."""
    if row["ci_low_us"] is None or row["ci_high_us"] is None:
        return f"(no interval: {row['reps']} reps, too few)"
    return f"[{row['ci_low_us']:.1f}, {row['ci_high_us']:.1f}]"


def error_bars(rows):
    """Matplotlib's (below, above) error lengths; none drawn for a row with no interval."""
    below = [0.0 if r["ci_low_us"] is None else r["median_us"] - r["ci_low_us"] for r in rows]
    above = [0.0 if r["ci_high_us"] is None else r["ci_high_us"] - r["median_us"] for r in rows]
    return [below, above]


def report_text(summary):
    lines = [f"loggp tune packet: {summary['records']} records of {summary['record_size']} B, "
             f"{summary['reps']} reps per size, np=2",
             f"machine parameters from {summary['machine_source']}: "
             + ", ".join(f"{k}={v:.3g}{' ns/B' if k == 'G' else ' us'}" for k, v in summary["machine"].items()
                         if k != "regimes"),
             "later protocol regimes (from m bytes: T0 rise us, G rise ns/B): "
             + ("; ".join(f"{m}: {t:+.3g}, {g:+.3g}" for m, t, g in summary["machine"].get("regimes", [])) or "none"),
             "",
             f"{'setting':24s} {'measured best':>14s} {'predicted best':>15s} {'within 2x':>10s} "
             f"{'time there':>10s} {'pack ns/rec':>11s} {'unpack ns/rec':>13s}"]
    for res in summary["settings"]:
        cost = res.get("cost_of_predicted_size")
        lines.append(f"{res['setting']:24s} {size_text(res['measured_best']):>14s} "
                     f"{size_text(res['predicted_best']):>15s} {res['verdict']:>10s} "
                     f"{'' if cost is None else f'x{cost:.2f}':>10s} "
                     f"{res['pack_ns_per_record']:11.1f} {res['unpack_ns_per_record']:13.1f}")
    lines.append("(time there: the measured time at the size nearest the predicted best, over the best measured)")
    lines.append("(within 2x: met, the predicted best is within a factor of two of every size whose 95 % interval "
                 "overlaps the best one's; missed, of none; unresolved, of some only, or too few reps for intervals)")
    for res in summary["settings"]:
        if len(res["tied_with_best"]) > 1:
            lines.append(f"  {res['setting']}: tied with the best within their intervals: "
                         + ", ".join(size_text(s) for s in res["tied_with_best"]))
    lines.append("")
    for res in summary["settings"]:
        lines.append(f"[{res['setting']}] size, median us [95 % interval], predicted us")
        for r in res["rows"]:
            lines.append(f"  {size_text(r['packet_size']):>9s} {r['median_us']:12.1f} "
                         f"{interval_text(r)} {r['predicted_us']:12.1f}")
    return "\n".join(lines) + "\n"


def plot(summary, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for i, res in enumerate(summary["settings"]):
        color = f"C{i}"
        xs = [r["packet_size"] for r in res["rows"]]
        med = [r["median_us"] for r in res["rows"]]
        err = error_bars(res["rows"])
        ax.errorbar(xs, med, yerr=err, color=color, marker="o", ms=3, lw=1.2, capsize=2,
                    label=f"{res['setting']}: measured (best {size_text(res['measured_best'])})")
        ax.plot(xs, [r["predicted_us"] for r in res["rows"]], color=color, ls="--", lw=1,
                label=f"{res['setting']}: LogGP (best {size_text(res['predicted_best'])})")
        ax.axvline(res["predicted_best"], color=color, ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("PacketSize (bytes)")
    ax.set_ylabel("time to send the structure (us)")
    ax.set_title(f"packet-size tuning: {summary['records']} records x {summary['record_size']} B "
                 f"(median, 95 % interval, no bar: too few reps; dashed: LogGP)", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    atomic_write(out_png, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)


def write_outputs(out_dir, summary, with_plot=True):
    """Writes every output file atomically; returns the report text."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    text = report_text(summary)
    write_text_atomic(out_dir / "packet.csv", csv_text(summary["settings"]))
    if with_plot:
        plot(summary, out_dir / "packet.png")
    write_text_atomic(out_dir / "packet.txt", text)
    # last: its presence says the run finished
    write_text_atomic(out_dir / "packet.json", json.dumps(summary, indent=1, allow_nan=False) + "\n")
    return text
