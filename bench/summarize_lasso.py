#!/usr/bin/python3
"""Summary of bench/lasso_bench.sh: a markdown table (medians, spread, ratios) on stdout and in
lasso_summary.md, and lasso_curves.png (objective against time and against updates).

Usage: summarize_lasso.py OUT_DIR
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
    rows = list(csv.DictReader(open(os.path.join(out, "lasso_runs.csv"))))
    groups = {}
    for r in rows:
        groups.setdefault((r["case"], r["system"], r["config"]), []).append(r)
    lines = ["| case | system | configuration | runs | median s | spread s | objective | rel. gap | updates | status |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    medians = {}
    for (case, system, config), rs in groups.items():
        secs = [float(r["seconds"]) for r in rs if r["seconds"]]
        med = statistics.median(secs) if secs else float("nan")
        medians[(case, system, config)] = med
        spread = f"{min(secs):.3f}-{max(secs):.3f}" if secs else ""
        last = rs[-1]
        lines.append(f"| {case} | {system} | {config} | {len(rs)} | {med:.3f} | {spread} | {last['objective']} | "
                     f"{last['relative_gap']} | {last['updates']} | {','.join(sorted({r['status'] for r in rs}))} |")
    lines.append("")
    for (case, system, config), med in medians.items():
        if system != "parasol":
            continue
        for (sk_case, sk_system, sk_config), sk in medians.items():
            if sk_case != case or sk_system != "sklearn":
                continue
            ratio = sk / med if med > 0 else float("nan")
            obj_p = [float(r["objective"]) for r in groups[(case, system, config)] if r["objective"]]
            obj_s = [float(r["objective"]) for r in groups[(case, "sklearn", sk_config)] if r["objective"]]
            # Positive: parasol's objective is lower.
            diff = (obj_s[-1] - obj_p[-1]) / abs(obj_s[-1]) if obj_p and obj_s else float("nan")
            timeout = any(r["status"] == "timeout" for r in groups[(case, "sklearn", sk_config)])
            lines.append(f"- {case}, parasol {config} against scikit-learn {sk_config}: time ratio "
                         f"{'>= ' if timeout else ''}{ratio:.2f}x; objective lower by {diff:.2e} (relative)")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "lasso_summary.md"), "w").write(text)
    print(text)
    plot(out)


def config_of(path, case):
    return os.path.basename(path)[len(case) + 1:-len(".1.csv")]


def series(path, x, y):
    rs = list(csv.DictReader(open(path)))
    return [float(r[x]) for r in rs], [float(r[y]) for r in rs]


def plot(out):
    data = os.path.join(out, "lasso_data")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    curves = {}
    for path in sorted(glob.glob(os.path.join(data, "riboflavin.priority-*.1.csv"))):
        curves["parasol " + config_of(path, "riboflavin")] = series(path, "seconds", "objective")
    sk = os.path.join(data, "riboflavin.sklearn.curve.csv")
    if os.path.exists(sk):
        curves["scikit-learn (stopped after 1, 2, 4, ... epochs)"] = series(sk, "seconds", "objective")
    if curves:
        best = min(min(v) for _, v in curves.values())
        for name, (t, v) in curves.items():
            axes[0].loglog(t, [max(o - best, 1e-12) / best for o in v], marker=".", label=name)
        axes[0].set(title="riboflavin, lambda 0.05", xlabel="seconds (fit only)", ylabel="objective - best, relative")
        axes[0].legend(fontsize=8)
    for path in sorted(glob.glob(os.path.join(data, "correlated.*.1.csv"))):
        if "sklearn" in path:
            continue
        u, v = series(path, "updates", "objective")
        axes[1].semilogy(u, v, marker=".", label=config_of(path, "correlated"))
    axes[1].set(title="correlated blocks of 50 (0.95), lambda 0.01", xlabel="coordinate updates", ylabel="objective")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lasso_curves.png"), dpi=110)


if __name__ == "__main__":
    main()
