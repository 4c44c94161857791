#!/usr/bin/python3
"""Summarises bench/torch_plugin_bench.sh: per model, ranks and engine the median samples/s over
the rounds and its spread (min-max), the ratio to DDP (to plain PyTorch on one rank), the exposed
synchronisation per step; writes the table as CSV and a bar chart as PNG.
Usage: summarize_torch_plugin.py RESULTS.jsonl OUT.csv OUT.png"""
import collections
import csv
import json
import statistics
import sys


def main():
    raw, csv_path, png_path = sys.argv[1:4]
    runs = collections.defaultdict(list)
    for line in open(raw):
        r = json.loads(line)
        runs[(r["model"], r["ranks"], r["engine"])].append(r)
    rows = []
    for (model, ranks, engine), rs in sorted(runs.items()):
        sps = [r["samples_per_sec"] for r in rs]
        base = runs.get((model, ranks, "ddp" if ranks > 1 else "plain"))
        base_sps = statistics.median(r["samples_per_sec"] for r in base) if base else None
        waits = [r["wait_ms"] for r in rs if r["wait_ms"] is not None]
        rows.append({"model": model, "ranks": ranks, "engine": engine, "runs": len(rs),
                     "samples_per_sec": round(statistics.median(sps), 2),
                     "min": round(min(sps), 2), "max": round(max(sps), 2),
                     "vs_base": round(statistics.median(sps) / base_sps, 3) if base_sps else "",
                     "wait_ms_per_step": round(statistics.median(waits), 1) if waits else ""})
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'model':9} {'ranks':>5} {'engine':28} {'samples/s':>10} {'min-max':>17} "
          f"{'vs DDP/plain':>12} {'wait ms':>8}")
    for r in rows:
        print(f"{r['model']:9} {r['ranks']:5} {r['engine']:28} {r['samples_per_sec']:10.1f} "
              f"{r['min']:8.1f}-{r['max']:<8.1f} {str(r['vs_base']):>12} {str(r['wait_ms_per_step']):>8}")
    plot(rows, png_path)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({r["model"] for r in rows})
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4.5), squeeze=False)
    for ax, model in zip(axes[0], models):
        mine = [r for r in rows if r["model"] == model and r["ranks"] > 1 and r["engine"] != "plain"]
        engines = sorted({r["engine"] for r in mine}, key=lambda e: (e != "ddp", e))
        ranks = sorted({r["ranks"] for r in mine})
        width = 0.8 / max(1, len(engines))
        for i, e in enumerate(engines):
            vals = [next((r["samples_per_sec"] for r in mine if r["engine"] == e and r["ranks"] == k), 0)
                    for k in ranks]
            ax.bar([k + (i - len(engines) / 2) * width for k in range(len(ranks))], vals, width, label=e)
        ax.set_xticks(range(len(ranks)))
        ax.set_xticklabels([f"{k} ranks" for k in ranks])
        ax.set_ylabel("samples/s (all ranks)")
        ax.set_title(f"torchvision {model}, 32x32, 1 thread per rank")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
