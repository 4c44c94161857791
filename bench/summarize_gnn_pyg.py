"""Tables and a picture from gnn_pyg_bench.sh's CSVs.

Usage: summarize_gnn_pyg.py CORA_CSV BIG_CSV PNG (either CSV may be missing or hold no rows)
"""
import csv
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def cora_table(cora):
    """Per model and system: accuracy, epoch and whole-command figures; returns the medians."""
    groups = {}
    for r in cora:
        groups.setdefault((r["model"], r["system"]), []).append(r)
    if not groups:
        return {}
    seeds = len(next(iter(groups.values())))
    print(f"\nCora, 200 epochs, {seeds} seeds, one process (one thread):")
    print("| model | system | test accuracy, mean (min-max) | median epoch ms (range over seeds) | "
          "whole command s (range) |")
    print("|---|---|---|---|---|")
    medians = {}
    for (model, system), rs in sorted(groups.items()):
        acc = [100 * float(r["test_accuracy"]) for r in rs]
        ms = [float(r["median_epoch_ms"]) for r in rs]
        whole = [float(r["whole_s"]) for r in rs]
        medians[(model, system)] = (statistics.median(ms), statistics.median(whole))
        print(f"| {model.upper()} | {system} | {statistics.mean(acc):.2f}% ({min(acc):.1f}-{max(acc):.1f}) | "
              f"{spread(ms)} | {spread(whole)} |")
    for model in sorted({m for m, _ in groups}):
        if (model, "parasol") in medians and (model, "pyg") in medians:
            p, g = medians[(model, "parasol")], medians[(model, "pyg")]
            print(f"{model.upper()}: PyG's epoch is {g[0] / p[0]:.2f}x parasol's, its whole command "
                  f"{g[1] / p[1]:.2f}x")
    return medians


def big_table(big):
    """Per core count and system on the generated graph; returns the median epochs."""
    groups = {}
    for r in big:
        groups.setdefault((int(r["cores"]), r["system"]), []).append(r)
    if not groups:
        return {}
    runs = len(next(iter(groups.values())))
    print(f"\nThe generated graph, GCN, {runs} runs interleaved:")
    print("| cores | system | median epoch ms (range) | whole command s (range) | peak memory MB | "
          "test accuracy |")
    print("|---|---|---|---|---|---|")
    medians = {}
    for (cores, system), rs in sorted(groups.items()):
        ms = [float(r["median_epoch_ms"]) for r in rs]
        whole = [float(r["whole_s"]) for r in rs]
        mem = [float(r["peak_rss_mb"]) for r in rs]
        medians[(cores, system)] = statistics.median(ms)
        what = ("1 process" if cores == 1 else "2 processes") if system == "parasol" else \
            ("1 thread" if cores == 1 else "2 threads")
        print(f"| {cores} | {system}, {what} | {spread(ms)} | {spread(whole)} | {statistics.median(mem):.0f} | "
              f"{100 * float(rs[-1]['test_accuracy']):.1f}% |")
    for cores in sorted({c for c, _ in groups}):
        if (cores, "parasol") in medians and (cores, "pyg") in medians:
            print(f"{cores} core(s): PyG's epoch is {medians[(cores, 'pyg')] / medians[(cores, 'parasol')]:.2f}x "
                  f"parasol's")
    return medians


def main():
    cora, big, png = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
    c = cora_table(cora)
    b = big_table(big)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colors = {"parasol": "tab:blue", "pyg": "tab:orange"}
    models = sorted({m for m, _ in c})
    for i, system in enumerate(("parasol", "pyg")):
        axes[0].bar([j + 0.4 * i for j in range(len(models))], [c.get((m, system), (0, 0))[0] for m in models],
                    width=0.4, label=system, color=colors[system])
    axes[0].set_xticks([j + 0.2 for j in range(len(models))], [m.upper() for m in models])
    axes[0].set_ylabel("median epoch (ms)")
    axes[0].set_title("Cora, one thread")
    axes[0].legend()
    cores = sorted({k for k, _ in b})
    for i, system in enumerate(("parasol", "pyg")):
        axes[1].bar([j + 0.4 * i for j in range(len(cores))], [b.get((k, system), 0) / 1000 for k in cores],
                    width=0.4, label=system, color=colors[system])
    axes[1].set_xticks([j + 0.2 for j in range(len(cores))], [f"{k} core{'s' if k > 1 else ''}" for k in cores])
    axes[1].set_ylabel("median epoch (s)")
    axes[1].set_title("1M-vertex generated graph, GCN")
    axes[1].legend()
    fig.suptitle("parasol gnn against PyTorch Geometric")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"\npicture: {png}")


if __name__ == "__main__":
    main()
