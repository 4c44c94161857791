"""Tables and pictures of bench/treelstm_bench.sh's runs.

Usage: summarize_treelstm.py OUT_DIR   (reads treelstm_speed.csv and treelstm_epochs.txt; writes
                                        treelstm.png beside them)
"""
import csv
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out = sys.argv[1]
    with open(f"{out}/treelstm_speed.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["sentences_per_sec"]]
    med = statistics.median
    by = {}
    for r in rows:
        by.setdefault((r["system"], int(r["batch"]), int(r["hidden"])), {})[r["run"]] = float(r["sentences_per_sec"])

    def speed(system, b, h):
        v = by.get((system, b, h))
        return med(v.values()) if v else float("nan")

    def ratio(a, b, batch=64, hidden=150):
        x, y = by[(a, batch, hidden)], by[(b, batch, hidden)]
        rs = [x[k] / y[k] for k in x if k in y]
        return f"{med(rs):.2f}x (range {min(rs):.2f}-{max(rs):.2f})"

    batches = sorted({k[1] for k in by if k[0] == "parasol"})
    hiddens = sorted({k[2] for k in by if k[0] == "parasol"})
    print("Training sentences/s, one thread (parasol batched by level / PyTorch batched by level):")
    print("| hidden | " + " | ".join(f"batch {b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for h in hiddens:
        cells = [f"{speed('parasol', b, h):.0f} / {speed('pytorch-levels', b, h):.0f} "
                 f"({speed('parasol', b, h) / speed('pytorch-levels', b, h):.2f}x)" for b in batches]
        print(f"| {h} | " + " | ".join(cells) + " |")
    print("\nBatch 64, hidden 150:")
    for s in ("parasol", "parasol-no-lazy", "parasol-per-node", "pytorch-levels", "pytorch-recursive",
              "parasol-2-ranks"):
        print(f"  {s}: {speed(s, 64, 150):.1f} sentences/s")
    print(f"parasol / PyTorch recursive: {ratio('parasol', 'pytorch-recursive')} (target 10x)")
    print(f"parasol / PyTorch by level: {ratio('parasol', 'pytorch-levels')} (target 1.5x)")
    print(f"parasol lazy batching on / off: {ratio('parasol', 'parasol-no-lazy')}")
    print(f"parasol batched / per node: {ratio('parasol', 'parasol-per-node')}")
    print(f"2 ranks / 1 rank: {ratio('parasol-2-ranks', 'parasol')} (target 1.7x)")

    epochs, best = [], "no best dev epoch reported"
    pattern = re.compile(r"epoch (\d+): root accuracy fine-grained dev ([\d.]+)% test ([\d.]+)%, "
                         r"binary dev ([\d.]+)% test ([\d.]+)%")
    with open(f"{out}/treelstm_epochs.txt") as f:
        for line in f:
            m = pattern.search(line)
            if m:
                epochs.append([int(m.group(1))] + [float(m.group(i)) for i in range(2, 6)])
            elif line.startswith("best dev"):
                best = line.strip()
    print("\n| epoch | fine dev | fine test | binary dev | binary test |")
    print("|---|---|---|---|---|")
    for e in epochs:
        print(f"| {e[0]} | {e[1]:.2f}% | {e[2]:.2f}% | {e[3]:.2f}% | {e[4]:.2f}% |")
    print(best)

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for system, style in (("parasol", "o-"), ("pytorch-levels", "s--")):
        for i, h in enumerate(hiddens):
            a.plot(batches, [speed(system, bt, h) for bt in batches], style, color=f"C{i}",
                   label=f"{system}, hidden {h}")
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("batch (sentences)")
    a.set_ylabel("training sentences/s")
    a.set_title("Tree-LSTM on SST, one thread")
    a.legend(fontsize=7)
    if epochs:
        xs = [e[0] for e in epochs]
        for i, name in ((1, "fine dev"), (2, "fine test"), (3, "binary dev"), (4, "binary test")):
            b.plot(xs, [e[i] for e in epochs], "o-", label=name)
        b.set_xlabel("epoch")
        b.set_ylabel("root accuracy (%)")
        b.set_title("Accuracy, random word vectors")
        b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/treelstm.png", dpi=110)


if __name__ == "__main__":
    main()
