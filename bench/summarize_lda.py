#!/usr/bin/env python3
"""Medians over runs of lda_bench.sh: tokens/s (each run's median iteration), per core, seconds per
iteration, log-likelihood per token at 50 and 200 iterations, peak memory."""
import csv
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for row in csv.DictReader(open(sys.argv[1])):
    runs[(row["corpus"], int(row["topics"]), int(row["threads"]))].append(row)

print(f"{'corpus':8} {'K':>5} {'thr':>3} {'tokens/s':>10} {'per core':>10} {'ll@50':>9} {'ll@200':>9} {'rss MB':>7}")
for (corpus, k, threads), rows in sorted(runs.items()):
    speeds, ll50, ll200, rss = [], [], [], []
    for r in rows:
        its = list(csv.DictReader(open(r["metrics"])))
        speeds.append(statistics.median(float(i["tokens_per_sec"]) for i in its))
        by_it = {int(i["iteration"]): float(i["loglik_per_token"]) for i in its if i["loglik_per_token"]}
        ll50.append(by_it.get(50, float("nan")))
        ll200.append(by_it.get(200, float("nan")))
        rss.append(int(r["max_rss_kb"]) / 1024)
    tps = statistics.median(speeds)
    print(f"{corpus:8} {k:>5} {threads:>3} {tps/1e6:>9.2f}M {tps/threads/1e6:>9.2f}M "
          f"{statistics.median(ll50):>9.4f} {statistics.median(ll200):>9.4f} {statistics.median(rss):>7.1f}")
