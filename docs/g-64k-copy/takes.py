"""Summarises one rank's event log from trace.patch: how long the reads that
returned a 64 KiB receive took (the copy shm does inside the read) and how far
apart the receives were handed over."""
import statistics as st
import sys

MASK = (1 << 40) - 1
recs = [tuple(map(int, line.split())) for line in open(sys.argv[1])]
seen = [r for r in recs if r[1] == 1 and r[2] == 65536]
if not seen:
    sys.exit(0)
takes = sorted(r[5] & MASK for r in seen)
handed = [r[0] for r in recs if r[1] in (2, 3) and r[2] == 65536]
gaps = [b - a for a, b in zip(handed, handed[1:])]
print(f"receives {len(seen)}: read with the copy median {st.median(takes) / 1e3:.2f} us, "
      f"p10 {takes[len(takes) // 10] / 1e3:.2f}, min {takes[0] / 1e3:.2f} "
      f"({sum(t < 3000 for t in takes)} under 3 us: copied outside the read); "
      f"handed over every {st.median(gaps) / 1e3:.2f} us (median)")
