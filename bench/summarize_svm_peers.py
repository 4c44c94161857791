#!/usr/bin/env python3
"""Tables and a picture of bench/svm_peers_bench.sh's runs: per case and system, the median solver
and whole-command seconds (with their range), the dual objective, support vectors and test
accuracy, and parasol's ratio to LIBSVM on the same cores.

Usage: summarize_svm_peers.py RUNS_CSV PNG"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
cases = list(dict.fromkeys(r["case"] for r in rows))
label = {("libsvm", "1"): "LIBSVM, 1 thread", ("libsvm", "2"): "LIBSVM, 2 threads",
         ("parasol", "1"): "parasol, 1 process", ("parasol", "2"): "parasol, 2 processes",
         ("thundersvm", "1"): "ThunderSVM, 1 thread"}


def med(values):
    return statistics.median(values) if values else None


summary = {}
for case in cases:
    print(f"\n{case}\n")
    print("| system | solver s (median, range) | whole s (median, range) | dual objective | SVs | test accuracy |")
    print("|---|---|---|---|---|---|")
    for key, name in label.items():
        mine = [r for r in rows if r["case"] == case and (r["system"], r["threads"]) == key]
        if not mine:
            continue
        ok = [r for r in mine if r["status"] == "ok"]
        if not ok:
            print(f"| {name} | {mine[0]['status']} | | | | |")
            continue
        solver = [float(r["solver_seconds"]) for r in ok]
        whole = [float(r["whole_seconds"]) for r in ok]
        summary[(case, key)] = (med(solver), med(whole))
        obj = ok[0]["objective"] or "-"
        print(f"| {name} | {med(solver):.2f} ({min(solver):.2f}-{max(solver):.2f}) | {med(whole):.2f} "
              f"({min(whole):.2f}-{max(whole):.2f}) | {obj} | {ok[0]['support_vectors']} | "
              f"{100 * float(ok[0]['test_accuracy']):.2f}% |")
    for threads in ("1", "2"):
        ours, theirs = summary.get((case, ("parasol", threads))), summary.get((case, ("libsvm", threads)))
        if ours and theirs:
            print(f"\nparasol on {threads} against LIBSVM on {threads}: solver {theirs[0] / ours[0]:.2f}x, "
                  f"whole command {theirs[1] / ours[1]:.2f}x")

fig, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 4))
for ax, case in zip(axes if len(cases) > 1 else [axes], cases):
    keys = [k for k in label if (case, k) in summary]
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [summary[(case, k)][0] for k in keys], 0.4, label="solver")
    ax.bar([x + 0.2 for x in xs], [summary[(case, k)][1] for k in keys], 0.4, label="whole command")
    ax.set_xticks(list(xs), [label[k].replace(", ", "\n") for k in keys], fontsize=7)
    ax.set_title(case)
    ax.set_ylabel("seconds")
axes[0].legend(fontsize=8) if len(cases) > 1 else axes.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
