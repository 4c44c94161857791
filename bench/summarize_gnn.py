"""Tables and a picture from gnn_bench.sh's CSVs.

Usage: summarize_gnn.py CORA_CSV BIG_CSV STALE_CSV LINK_CSV PNG (LINK_CSV may hold no rows)
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


def staleness_table(stale):
    """Cora on 2 processes: test accuracy by bound and early stopping; returns the groups."""
    groups = {}
    for r in stale:
        groups.setdefault((int(r["staleness"]), int(r["patience"])), []).append(float(r["test_accuracy"]))
    print(f"\nCora, GCN on 2 processes, {len(next(iter(groups.values())))} seeds:")
    print("| staleness | early stopping | test accuracy, mean (min-max) |")
    print("|---|---|---|")
    for (b, p), a in sorted(groups.items()):
        stop = f"patience {p}" if p else "none (200 epochs)"
        print(f"| {b} | {stop} | {100 * statistics.mean(a):.2f}% ({100 * min(a):.1f}-{100 * max(a):.1f}) |")
    for p in sorted({p for _, p in groups}):
        if (0, p) in groups and (1, p) in groups:
            d = 100 * (statistics.mean(groups[(1, p)]) - statistics.mean(groups[(0, p)]))
            print(f"S=1 - S=0, patience {p}: {d:+.2f} points")
    return groups


def link_table(link):
    """Two processes over a shaped link: the median epoch by graph and bound; returns
    {graph: (S=0, S=1)} medians."""
    if not link:
        print("\n(no link run: not root)")
        return {}
    med = statistics.median
    out = {}
    for g in dict.fromkeys(r["graph"] for r in link):
        rs = [r for r in link if r["graph"] == g]
        print(f"\n{g}: two processes over a {rs[0]['rate']} link, {len({r['run'] for r in rs})} repetitions:")
        print("| staleness | median epoch (ms), median (range) | MB sent per epoch per process |")
        print("|---|---|---|")
        by = {}
        for b in ("0", "1"):
            e = [float(r["median_epoch_ms"]) for r in rs if r["staleness"] == b]
            mb = [float(r["mb_sent_per_epoch"]) for r in rs if r["staleness"] == b]
            by[b] = e
            print(f"| {b} | {med(e):.0f} ({min(e):.0f}-{max(e):.0f}) | {med(mb):.1f} |")
        xs = [a / b for a, b in zip(by["0"], by["1"])]
        print(f"S=0 epoch / S=1 epoch: {med(xs):.2f}x (range {min(xs):.2f}-{max(xs):.2f}); "
              f"time saved {100 * (1 - med(by['1']) / med(by['0'])):.0f}%")
        out[g] = (med(by["0"]), med(by["1"]))
    return out


def main():
    cora, big, stale, link, png = (rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3]), rows(sys.argv[4]),
                                   sys.argv[5])
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
    systems = ("parasol-1", "parasol-2", "parasol-1-tensor-thread", "parasol-1-tensor-worker", "pytorch")
    by = {s: [r for r in big if r["system"] == s] for s in systems}
    print(f"\nGenerated graph, {len(by['parasol-1'])} repetitions:")
    print("| system | cores | median epoch (ms), median (range) | epochs per core-second "
          "| peak memory of the largest process (MB) |")
    print("|---|---|---|---|---|")
    per_core = {}
    for s in systems:
        e = [float(r["median_epoch_ms"]) for r in by[s]]
        m = [float(r["peak_rss_mb"]) for r in by[s]]
        cores = int(by[s][0]["cores"])
        per_core[s] = 1000 / (med(e) * cores)
        print(f"| {s} | {cores} | {med(e):.0f} ({min(e):.0f}-{max(e):.0f}) | "
              f"{per_core[s]:.3f} | {med(m):.0f} |")

    def ratio(a, b):  # per repetition, then the median and range
        xs = [float(x["median_epoch_ms"]) / float(y["median_epoch_ms"]) for x, y in zip(by[a], by[b])]
        return f"{med(xs):.2f}x (range {min(xs):.2f}-{max(xs):.2f})"

    print(f"\nPyTorch epoch / parasol 1 process: {ratio('pytorch', 'parasol-1')}")
    print(f"parasol 1 process / 2 processes: {ratio('parasol-1', 'parasol-2')}")
    print("parasol 1 process / 1 process with a tensor thread: "
          f"{ratio('parasol-1', 'parasol-1-tensor-thread')}")
    print(f"parasol 1 process / 1 graph process with a tensor worker: "
          f"{ratio('parasol-1', 'parasol-1-tensor-worker')}")
    mem = {s: med(float(r["peak_rss_mb"]) for r in by[s]) for s in systems}
    print(f"memory of the larger of 2 processes / 1 process: {mem['parasol-2'] / mem['parasol-1']:.2f}")
    groups = staleness_table(stale)
    links = link_table(link)

    fig, ((a, b), (c, d)) = plt.subplots(2, 2, figsize=(11, 8))
    a.boxplot([[100 * x for x in v] for v in acc.values()], labels=[f"{m}\n{s}" for m, s in acc])
    a.axhline(81.5, color="gray", linestyle="--", label="GCN paper: 81.5")
    a.set_ylabel("Cora test accuracy (%)")
    a.set_title(f"Cora, {len(acc[(models[0], 'parasol')])} seeds")
    a.legend()
    b.bar(systems, [med(float(r["median_epoch_ms"]) for r in by[s]) / 1000 for s in systems])
    b.set_yscale("log")
    b.set_ylabel("seconds per epoch (log)")
    b.set_title("generated graph")
    b.tick_params(axis="x", labelrotation=20)
    c.boxplot([[100 * x for x in v] for _, v in sorted(groups.items())],
              labels=[f"S={k[0]}\n{'patience ' + str(k[1]) if k[1] else '200 epochs'}"
                      for k in sorted(groups)])
    c.set_ylabel("Cora test accuracy (%)")
    c.set_title("GCN, 2 processes: staleness bound")
    if links:
        names = [f"{g.replace('gnn_graph_', '')}\nS={b}" for g in links for b in (0, 1)]
        d.bar(names, [t / 1000 for g in links for t in links[g]])
        d.set_ylabel("seconds per epoch")
        d.set_title(f"2 processes over a {link[0]['rate']} link")
    else:
        d.bar(list(per_core), list(per_core.values()))
        d.set_ylabel("epochs per core-second")
        d.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
