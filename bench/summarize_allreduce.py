#!/usr/bin/env python3
"""Medians over runs of allreduce-bench CSVs: time and bus bandwidth per (ranks, size, algorithm),
and the median over runs of each run's busbw ratio to MPI_Allreduce measured in that same run."""
import csv
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)       # (ranks, bytes, algo) -> [(run, time_us, busbw)]
for path in sys.argv[1:]:
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(int(r["ranks"]), int(r["bytes"]), r["algo"])].append(
                (path, float(r["time_us"]), float(r["busbw_gbps"])))

print(f"{'ranks':>5} {'bytes':>10} {'algo':<17} {'time_us':>10} {'busbw':>8} {'vs_mpi':>7}  (medians over runs)")
for (ranks, nbytes, algo) in sorted(rows):
    samples = rows[(ranks, nbytes, algo)]
    mpi = {run: bw for run, _, bw in rows.get((ranks, nbytes, "mpi"), [])}
    ratios = [bw / mpi[run] for run, _, bw in samples if mpi.get(run, 0) > 0]
    ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
    print(f"{ranks:>5} {nbytes:>10} {algo:<17} {statistics.median(t for _, t, _ in samples):>10.2f} "
          f"{statistics.median(b for _, _, b in samples):>8.3f} {ratio:>7}")
