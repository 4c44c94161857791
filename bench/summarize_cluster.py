#!/usr/bin/python3
"""Summary of bench/cluster_bench.sh's adaptive-batch part: a markdown table per policy (medians and
ranges of the average JCT and makespan over the runs, restarts, the jobs' final test accuracy), the
ratios the issue asks for (adaptive against fixed-batch goodput and against Tiresias), and
cluster_adaptive.png: average JCT by policy, and the GPU count and total batch of each job over
time in the median adaptive run.

Usage: summarize_cluster.py OUT_DIR
"""
import csv
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POLICIES = [("adaptive", "goodput, adaptive batch"), ("fixed", "goodput, fixed batch"),
            ("tiresias", "Tiresias (users' GPUs)")]
# "    15.6 s  m1: resumes on 2 GPUs at step 1000, batch 256", "... m1: starts on 1 GPUs, batch 64",
# "... m1: 2 -> 0 GPUs, stopped at step 3", "... m1: done after 2736 steps",
# "... m1: batch 64 -> 115 in place at step 93"
EVENT = re.compile(r"^\s*([0-9.]+) s  (\S+): (?:starts on (\d+) GPUs(?:, batch (\d+))?|"
                   r"resumes on (\d+) GPUs (?:at step \d+|from its last checkpoint)(?:, batch (\d+))?|"
                   r"\d+ -> (\d+) GPUs|(done)|batch \d+ -> (\d+) in place)")


def timeline(log):
    """Per job: [(time, gpus, batch)] from a cluster log."""
    jobs = {}
    for line in open(log):
        m = EVENT.match(line)
        if not m:
            continue
        t, name = float(m.group(1)), m.group(2)
        gpus = m.group(3) or m.group(5)
        batch = m.group(4) or m.group(6)
        last = jobs.setdefault(name, [])
        prev_batch = last[-1][2] if last else 0
        if m.group(7) or m.group(8):  # stopped (to resume on another count) or done
            last.append((t, 0, prev_batch))
        elif m.group(9):  # the same GPUs, another batch
            last.append((t, last[-1][1] if last else 0, int(m.group(9))))
        else:
            last.append((t, int(gpus), int(batch) if batch else prev_batch))
    return jobs


def fmt_range(xs):
    return f"{min(xs):.1f}-{max(xs):.1f}"


def main():
    out = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(out, "cluster_adaptive_runs.csv"))))
    by = {p: [r for r in rows if r["policy"] == p] for p, _ in POLICIES}
    med = {p: statistics.median(float(r["average_jct"]) for r in rs) for p, rs in by.items() if rs}
    lines = ["| policy | runs | average JCT (s), median | range | makespan (s), median | range | restarts "
             "(median) | test accuracy, mean of jobs (median) | lowest job |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p, label in POLICIES:
        rs = by[p]
        if not rs:
            continue
        jct = [float(r["average_jct"]) for r in rs]
        mk = [float(r["makespan"]) for r in rs]
        lines.append(f"| {label} | {len(rs)} | {statistics.median(jct):.1f} | {fmt_range(jct)} | "
                     f"{statistics.median(mk):.1f} | {fmt_range(mk)} | "
                     f"{statistics.median(int(r['restarts']) for r in rs):.0f} | "
                     f"{statistics.median(float(r['mean_test_accuracy']) for r in rs):.2f}% | "
                     f"{min(float(r['min_test_accuracy']) for r in rs):.2f}% |")
    if "adaptive" in med and "fixed" in med and "tiresias" in med:
        lines.append("")
        lines.append(f"adaptive / fixed-batch goodput: {med['adaptive'] / med['fixed']:.3f}; "
                     f"adaptive / Tiresias: {med['adaptive'] / med['tiresias']:.3f} (median average JCT)")
    text = "\n".join(lines)
    print(text)
    open(os.path.join(out, "cluster_adaptive_summary.md"), "w").write(text + "\n")
    plot(out, by)


def plot(out, by):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5))
    labels, meds, lo, hi = [], [], [], []
    for p, label in POLICIES:
        jct = [float(r["average_jct"]) for r in by[p]]
        if not jct:
            continue
        m = statistics.median(jct)
        labels.append(label)
        meds.append(m)
        lo.append(m - min(jct))
        hi.append(max(jct) - m)
    ax.bar(range(len(meds)), meds, yerr=[lo, hi], capsize=4, color=["tab:green", "tab:blue", "tab:gray"])
    ax.set_xticks(range(len(meds)), labels, fontsize=8)
    ax.set(ylabel="average JCT (s), median and range", title="Live cluster, 2 cores: MNIST jobs")
    rs = sorted(by["adaptive"], key=lambda r: float(r["average_jct"]))
    if rs:
        run = rs[len(rs) // 2]["run"]
        jobs = timeline(os.path.join(out, f"cluster_adaptive_adaptive_{run}.log"))
        for i, (name, events) in enumerate(sorted(jobs.items())):
            for (t0, gpus, batch), (t1, _, _) in zip(events, events[1:]):
                if gpus:
                    colour = "tab:green" if gpus > 1 else "tab:olive"
                    bx.barh(i, t1 - t0, left=t0, height=0.3 * gpus, color=colour)
                    if t1 - t0 >= 4:  # in-place changes come seconds apart: label the lasting ones
                        bx.text(t0 + 0.5, i, str(batch), va="center", fontsize=7)
        bx.set_yticks(range(len(jobs)), sorted(jobs))
        bx.set(xlabel="seconds", title=f"adaptive run {run}: GPUs (bar height) and total batch (label)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cluster_adaptive.png"), dpi=110)


if __name__ == "__main__":
    main()
