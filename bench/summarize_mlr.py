#!/usr/bin/python3
"""Summary of bench/mlr_bench.sh: a markdown table (medians, ranges), the ratios the issue asks
for (sufficient factors against the parameter server: bytes and time to a test accuracy; accuracy
against scikit-learn), and mlr_curves.png (test accuracy against time).

Usage: summarize_mlr.py OUT_DIR TARGET_ACCURACY
"""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def time_to(path, target):
    for r in csv.DictReader(open(path)):
        if r["test_accuracy"] and float(r["test_accuracy"]) >= target:
            return float(r["seconds"])
    return float("nan")


def main():
    out, target = sys.argv[1], float(sys.argv[2])
    rows = list(csv.DictReader(open(os.path.join(out, "mlr_runs.csv"))))
    groups = {}
    for r in rows:
        groups.setdefault((r["system"], r["comm"], int(r["processes"])), []).append(r)
    lines = [f"| system | comm | processes | runs | seconds (median) | range | time to {target} | final accuracy | MB per process |",
             "|---|---|---|---|---|---|---|---|---|"]
    summary = {}
    for key in sorted(groups):
        rs = groups[key]
        secs = [float(r["seconds"]) for r in rs]
        tta = [time_to(r["metrics"], target) for r in rs if r["metrics"]]
        acc = statistics.median(float(r["final_accuracy"]) for r in rs)
        mb = [float(r["bytes_per_process"]) / 1e6 for r in rs if r["bytes_per_process"]]
        summary[key] = (statistics.median(secs), statistics.median(tta) if tta else float("nan"), acc,
                        statistics.median(mb) if mb else float("nan"))
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(rs)} | {summary[key][0]:.2f} | {min(secs):.2f}-{max(secs):.2f} | "
                     f"{summary[key][1]:.2f} | {acc:.4f} | {summary[key][3]:.1f} |")
    lines.append("")
    sk = summary.get(("sklearn", "lbfgs", 1))
    for np in (1, 2, 4):
        s, p = summary.get(("parasol", "sfb", np)), summary.get(("parasol", "ps", np))
        if s and p and np > 1:
            lines.append(f"- {np} processes: parameter server / sufficient factors: bytes {p[3] / s[3]:.1f}x, "
                         f"time to {target} {p[1] / s[1]:.1f}x")
        if s and sk:
            lines.append(f"- {np} processes, sufficient factors: final accuracy {100 * (s[2] - sk[2]):+.2f} points "
                         f"against scikit-learn ({sk[2]:.4f} in {sk[0]:.1f} s)")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "mlr_summary.md"), "w").write(text)
    print(text)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key in sorted(groups):
        if key[0] != "parasol":
            continue
        rs = list(csv.DictReader(open(groups[key][0]["metrics"])))
        ax.semilogx([float(r["seconds"]) for r in rs], [float(r["test_accuracy"]) for r in rs], marker=".",
                    label=f"{key[1]}, {key[2]} process(es)")
    if sk:
        ax.axhline(sk[2], color="black", linestyle="--", label=f"scikit-learn ({sk[0]:.0f} s)")
    ax.set(title="20 Newsgroups, softmax regression", xlabel="seconds", ylabel="test accuracy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "mlr_curves.png"), dpi=110)


if __name__ == "__main__":
    main()
