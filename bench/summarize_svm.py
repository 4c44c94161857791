#!/usr/bin/python3
"""Summary of bench/svm_bench.sh: a markdown table (medians and ranges) and the ratios the issue
asks for, on stdout and in svm_summary.md; svm_curves.png (the maximal violation against time).

Usage: summarize_svm.py OUT_DIR
"""
import csv
import glob
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out = sys.argv[1]
    rows = list(csv.DictReader(open(os.path.join(out, "svm_runs.csv"))))
    groups = {}
    for r in rows:
        groups.setdefault((r["system"], r["config"]), []).append(r)
    lines = ["| system | configuration | runs | wall s (median) | range | solver s | objective | SVs | iterations | test accuracy |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    med = {}
    for (system, config), rs in groups.items():
        walls = [float(r["wall_seconds"]) for r in rs]
        med[(system, config)] = statistics.median(walls)
        solver = [float(r["solver_seconds"]) for r in rs if r["solver_seconds"]]
        acc = next((r["accuracy"] for r in rs if r["accuracy"]), "")
        lines.append(f"| {system} | {config} | {len(rs)} | {med[(system, config)]:.2f} | {min(walls):.2f}-{max(walls):.2f} | "
                     f"{statistics.median(solver) if solver else float('nan'):.2f} | {rs[0]['objective']} | "
                     f"{rs[0]['support_vectors']} | {rs[0]['iterations']} | {acc} |")
    lines.append("")

    def ratio(a, b, what):
        if a in med and b in med:
            # Within each repetition, then the median and range.
            ra = {r["run"]: float(r["wall_seconds"]) for r in groups[a]}
            rb = {r["run"]: float(r["wall_seconds"]) for r in groups[b]}
            rs = [ra[k] / rb[k] for k in ra if k in rb]
            lines.append(f"- {what}: {statistics.median(rs):.2f}x (range {min(rs):.2f}-{max(rs):.2f}, {len(rs)} runs)")

    ratio(("libsvm", "shrinking"), ("parasol", "standard-1proc"), "svm-train / parasol, 1 process")
    ratio(("parasol", "none-1proc"), ("parasol", "standard-1proc"), "parasol without elimination / with")
    ratio(("parasol", "standard-1proc"), ("parasol", "standard-2proc"), "parasol 1 process / 2 processes")
    ratio(("libsvm", "no-shrinking"), ("libsvm", "shrinking"), "svm-train without shrinking / with (one run)")
    ratio(("libsvm", "c10-shrinking"), ("parasol", "c10-standard-1proc"), "C = 10: svm-train / parasol, 1 process")
    ratio(("parasol", "c10-none-1proc"), ("parasol", "c10-standard-1proc"), "C = 10: parasol without elimination / with")
    ratio(("parasol", "c10-standard-1proc"), ("parasol", "c10-standard-2proc"), "C = 10: parasol 1 process / 2")
    bound = elimination_bound(out)
    if bound:
        lines.append(f"- bound on elimination / none (C = 1, run 1), were the work of an iteration in proportion to "
                     f"the active set: {bound[0]:.2f}x; none spends {bound[1]:.2f} s of {bound[2]:.2f} s before "
                     f"elimination has removed a tenth of the samples")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "svm_summary.md"), "w").write(text)
    print(text)
    plot(out, med)


def elimination_bound(out):
    """The speed-up elimination could give at most if an iteration's work (kernel columns,
    selection, gradient update) shrank with the active set and cost nothing else: none's time per
    progress interval, weighted by the share of samples the standard run still had active at the
    same iteration (the two runs take nearly the same steps). Also none's time until that share
    first falls below 90%."""
    paths = [os.path.join(out, "svm_data", f"parasol.{c}-1proc.1.csv") for c in ("none", "standard")]
    if not all(os.path.exists(p) for p in paths):
        return None
    none, standard = ([(int(r["iteration"]), float(r["seconds"]), int(r["active"]))
                       for r in csv.DictReader(open(p))] for p in paths)
    n = none[0][2]

    def active_share(iteration):  # the standard run's, at its last report at or before `iteration`
        share = 1.0
        for it, _, active in standard:
            if it > iteration:
                break
            share = active / n
        return share

    estimate, before, last_it, last_s = 0.0, None, 0, 0.0
    for it, seconds, _ in none:
        share = active_share(last_it)
        estimate += (seconds - last_s) * share
        if before is None and share < 0.9:
            before = last_s
        last_it, last_s = it, seconds
    return last_s / estimate, before if before is not None else last_s, last_s


def plot(out, med):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for path in sorted(glob.glob(os.path.join(out, "svm_data", "parasol.*.1.csv"))):
        if "c10" in path:
            continue
        rs = list(csv.DictReader(open(path)))
        ax.semilogy([float(r["seconds"]) for r in rs], [float(r["violation"]) for r in rs], marker=".",
                    label="parasol " + os.path.basename(path).split(".")[1])
    for config in ("shrinking", "no-shrinking"):
        if ("libsvm", config) in med:
            ax.axvline(med[("libsvm", config)], linestyle="--", color="gray" if config == "shrinking" else "black",
                       label=f"svm-train ({config}) finishes")
    ax.axhline(1e-3, color="red", linewidth=0.5, label="tolerance")
    ax.set(title="a9a, RBF, C = 1, gamma = 0.05", xlabel="seconds (solver)", ylabel="maximal KKT violation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "svm_curves.png"), dpi=110)


if __name__ == "__main__":
    main()
