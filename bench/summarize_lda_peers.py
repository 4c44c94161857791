"""Table and plot of lda_peers_bench.sh: per corpus and K, each system's final perplexity and training
time (medians over seeds, with the range), its tokens/s, and how long parasol takes to reach that
perplexity. Usage: summarize_lda_peers.py RUNS_CSV DATA_DIR PNG [THREADS]"""
import collections
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

runs, data, png = sys.argv[1:4]
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rows = list(csv.DictReader(open(runs)))
curves = collections.defaultdict(list)  # (corpus, k, system, seed) -> [(seconds, perplexity, work)]
for r in rows:
    key = (r["corpus"], int(r["k"]), r["system"], int(r["seed"]))
    curves[key].append((float(r["train_seconds"]), float(r["perplexity"]), int(r["work"])))
tokens = {c: sum(len(l.split("\t", 1)[-1].split()) for l in open(f"{data}/{c}.train.lines"))
          for c in {r["corpus"] for r in rows}}


def first_time_at(curve, target):
    """The first time a curve's perplexity is at most target (None if never)."""
    return next((t for t, p, _ in sorted(curve) if p <= target), None)


def at_time(curve, t):
    """A curve's perplexity at its last point no later than t (None before its first)."""
    before = [p for tt, p, _ in sorted(curve) if tt <= t]
    return before[-1] if before else None


def med(xs):
    return statistics.median(xs), min(xs), max(xs)


configs = sorted({(c, k) for c, k, _, _ in curves})
systems = ["parasol", "tomotopy", "gensim", "warplda"]
print("| corpus | K | system | work | training s | tokens/s | held-out perplexity | parasol's at that time | "
      "parasol's s to it | peer s / parasol s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for c, k in configs:
    for s in systems:
        seeds = sorted(seed for cc, kk, ss, seed in curves if (cc, kk, ss) == (c, k, s))
        if not seeds:
            continue
        finals = [max(curves[(c, k, s, seed)]) for seed in seeds]
        secs, ppl, work = [f[0] for f in finals], [f[1] for f in finals], finals[0][2]
        rate = [tokens[c] * f[2] / f[0] for f in finals]
        unit = {"parasol": "iterations", "tomotopy": "sweeps", "gensim": "passes", "warplda": "iterations"}[s]
        reach = [first_time_at(curves[(c, k, "parasol", seed)], f[1]) for seed, f in zip(seeds, finals)]
        ratio = "-"
        if s != "parasol" and all(reach):
            m, lo, hi = med([f[0] / t for f, t in zip(finals, reach)])
            ratio = f"**{m:.1f}** ({lo:.1f}-{hi:.1f})"
        reach_txt = "-" if s == "parasol" or not all(reach) else f"{statistics.median(reach):.2f}"
        if s != "parasol" and not all(reach):
            reach_txt = "not reached"
        m, lo, hi = med(secs)
        pm, plo, phi = med(ppl)
        same = [at_time(curves[(c, k, "parasol", seed)], f[0]) for seed, f in zip(seeds, finals)]
        same_txt = "-" if s == "parasol" or None in same else f"{statistics.median(same):.0f}"
        print(f"| {c} | {k:,} | {s} | {work} {unit} | {m:.2f} ({lo:.2f}-{hi:.2f}) | {statistics.median(rate) / 1e6:.2f} M "
              f"| {pm:.0f} ({plo:.0f}-{phi:.0f}) | {same_txt} | {reach_txt} | {ratio} |")

cols = min(3, len(configs))
nrows = (len(configs) + cols - 1) // cols
fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.6 * nrows), squeeze=False)
for ax in axes.flat[len(configs):]:
    ax.axis("off")
for ax, (c, k) in zip(axes.flat, configs):
    for s, color in zip(systems, ["tab:blue", "tab:orange", "tab:green", "tab:red"]):
        for seed in sorted(seed for cc, kk, ss, seed in curves if (cc, kk, ss) == (c, k, s)):
            pts = sorted(curves[(c, k, s, seed)])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, color=color, alpha=0.8,
                    label=s if seed == 1 else None)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_title(f"{c}, K = {k:,}")
    ax.set_xlabel("training seconds (one thread)" if threads == 1 else f"training seconds ({threads} threads each)")
    ax.set_ylabel("held-out perplexity")
    ax.legend()
fig.tight_layout()
fig.savefig(png, dpi=110)
print(f"plot: {png}")
