"""Tables and a picture from gnn_bench.sh's CSVs.

Usage: summarize_gnn.py CORA_CSV BIG_CSV PNG
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def main():
    cora, big, png = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
    med = statistics.median
    models = sorted({r["model"] for r in cora}, key=lambda m: m != "gcn")  # gcn first
    acc = {(m, s): [float(r["test_accuracy"]) for r in cora if r["model"] == m and r["system"] == s]
           for m in models for s in ("parasol", "pytorch")}
    ep = {(m, s): [float(r["median_epoch_ms"]) for r in cora if r["model"] == m and r["system"] == s]
          for m in models for s in ("parasol", "pytorch")}
    print(f"Cora, {len(acc[(models[0], 'parasol')])} seeds, 200 epochs:")
    print("| model | system | test accuracy, mean (min-max) | median epoch (ms) |")
    print("|---|---|---|---|")
    for (m, s), a in acc.items():
        print(f"| {m} | {s} | {100 * statistics.mean(a):.2f}% ({100 * min(a):.1f}-{100 * max(a):.1f}) "
              f"| {med(ep[(m, s)]):.2f} |")
    systems = ("parasol-1", "parasol-2", "pytorch")
    by = {s: [r for r in big if r["system"] == s] for s in systems}
    print(f"\nGenerated graph, {len(by['parasol-1'])} repetitions:")
    print("| system | median epoch (ms), median (range) | peak memory of the largest process (MB) |")
    print("|---|---|---|")
    for s in systems:
        e = [float(r["median_epoch_ms"]) for r in by[s]]
        m = [float(r["peak_rss_mb"]) for r in by[s]]
        print(f"| {s} | {med(e):.0f} ({min(e):.0f}-{max(e):.0f}) | {med(m):.0f} |")

    def ratio(a, b):  # per repetition, then the median and range
        xs = [float(x["median_epoch_ms"]) / float(y["median_epoch_ms"]) for x, y in zip(by[a], by[b])]
        return f"{med(xs):.2f}x (range {min(xs):.2f}-{max(xs):.2f})"

    print(f"\nPyTorch epoch / parasol 1 process: {ratio('pytorch', 'parasol-1')}")
    print(f"parasol 1 process / 2 processes: {ratio('parasol-1', 'parasol-2')}")

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.boxplot([[100 * x for x in v] for v in acc.values()], labels=[f"{m}\n{s}" for m, s in acc])
    a.axhline(81.5, color="gray", linestyle="--", label="GCN paper: 81.5")
    a.set_ylabel("Cora test accuracy (%)")
    a.set_title(f"Cora, {len(acc[(models[0], 'parasol')])} seeds")
    a.legend()
    b.bar(systems, [med(float(r["median_epoch_ms"]) for r in by[s]) / 1000 for s in systems])
    b.set_yscale("log")
    b.set_ylabel("seconds per epoch (log)")
    b.set_title("generated graph, one thread per process")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
