#!/usr/bin/env python3
"""Summary of lda_bench.sh: parasol lda against WarpLDA, and processes against threads.

Usage: summarize_lda.py RUNS_CSV DIST_CSV OUT_DIR

Speed of a run: the median of its iterations' tokens/s after the first tenth (warm-up). Ratios
are parasol / WarpLDA within a repetition, then the median (and range) over repetitions.
Log-likelihood per token: at the last iteration (equal iterations), and at the time the faster
of the two finished (equal time; parasol's evaluations every 5 iterations are interpolated,
WarpLDA prints one per iteration). Writes lda_results.csv, lda_speed.png and
lda_convergence.png to OUT_DIR.
"""
import csv
import os
import re
import statistics
import sys
from collections import defaultdict

WARP_LINE = re.compile(r"Iteration (\d+), ([0-9.]+) s, ([0-9.]+) Mtokens/s, log_likelihood \(per token\) (-?[0-9.]+)")


def skip_warmup(values):
    return values[max(1, len(values) // 10):] or values


def parasol_run(path):
    rows = list(csv.DictReader(open(path)))
    speed = statistics.median(skip_warmup([float(r["tokens_per_sec"]) for r in rows]))
    curve = [(float(r["seconds"]), float(r["loglik_per_token"])) for r in rows if r["loglik_per_token"]]
    return speed, curve, float(rows[-1]["seconds"])


def warplda_run(path):
    its = [m.groups() for m in map(WARP_LINE.search, open(path)) if m]
    if not its:
        raise SystemExit(f"{path}: no iterations (WarpLDA failed?)")
    speed = statistics.median(skip_warmup([float(s) * 1e6 for _, _, s, _ in its]))
    t, curve = 0.0, []
    for _, sec, _, ll in its:
        t += float(sec)
        curve.append((t, float(ll)))
    return speed, curve, t


def at_time(curve, t):
    """Log-likelihood reached by time t: the last point at or before t, interpolated to t."""
    before = [p for p in curve if p[0] <= t]
    if not before:
        return float("nan")
    after = [p for p in curve if p[0] > t]
    if not after:
        return before[-1][1]
    (t0, l0), (t1, l1) = before[-1], after[0]
    return l0 + (l1 - l0) * (t - t0) / (t1 - t0)


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def main():
    runs_csv, dist_csv, out = sys.argv[1:4]
    runs = defaultdict(dict)  # (corpus, k, threads) -> run -> system -> (speed, curve, total, rss)
    for row in csv.DictReader(open(runs_csv)):
        key = (row["corpus"], int(row["topics"]), int(row["threads"]))
        load = parasol_run if row["system"] == "parasol" else warplda_run
        runs[key].setdefault(int(row["run"]), {})[row["system"]] = (*load(row["log"]), int(row["max_rss_kb"]) / 1024)

    results = []
    for key in sorted(runs, key=lambda k: (["ap", "news", "synth"].index(k[0]) if k[0] in ("ap", "news", "synth") else 9, k[1], k[2])):
        reps = [r for r in runs[key].values() if "parasol" in r and "warplda" in r]
        ratios = [r["parasol"][0] / r["warplda"][0] for r in reps]
        eq_time = [min(r["parasol"][2], r["warplda"][2]) for r in reps]
        results.append({
            "corpus": key[0], "topics": key[1], "threads": key[2],
            "parasol_tokens_per_sec": med(r["parasol"][0] for r in reps),
            "warplda_tokens_per_sec": med(r["warplda"][0] for r in reps),
            "ratio": med(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "parasol_ll_iter": med(r["parasol"][1][-1][1] for r in reps),
            "warplda_ll_iter": med(r["warplda"][1][-1][1] for r in reps),
            "parasol_ll_time": med(at_time(r["parasol"][1], t) for r, t in zip(reps, eq_time)),
            "warplda_ll_time": med(at_time(r["warplda"][1], t) for r, t in zip(reps, eq_time)),
            "equal_time_s": med(eq_time),
            "parasol_rss_mb": med(r["parasol"][3] for r in reps),
            "warplda_rss_mb": med(r["warplda"][3] for r in reps),
            "runs": len(reps),
        })

    with open(os.path.join(out, "lda_results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0].keys()))
        w.writeheader()
        w.writerows(results)

    print("| corpus | K | threads | parasol tokens/s | WarpLDA tokens/s | parasol / WarpLDA (range) | "
          "loglik @ last iteration: parasol / WarpLDA | loglik @ equal time (s): parasol / WarpLDA | peak RSS MB: parasol / WarpLDA |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['corpus']} | {r['topics']:,} | {r['threads']} | {r['parasol_tokens_per_sec']/1e6:.1f} M | "
              f"{r['warplda_tokens_per_sec']/1e6:.1f} M | **{r['ratio']:.2f}** ({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) | "
              f"{r['parasol_ll_iter']:.3f} / {r['warplda_ll_iter']:.3f} | "
              f"{r['parasol_ll_time']:.3f} / {r['warplda_ll_time']:.3f} ({r['equal_time_s']:.1f}) | "
              f"{r['parasol_rss_mb']:.0f} / {r['warplda_rss_mb']:.0f} |")

    # Cost per token against K = 100, one thread.
    print("\nTime per token at K relative to K = 100 (one thread; medians):")
    by = {(r["corpus"], r["topics"], r["threads"]): r for r in results}
    for corpus in sorted({r["corpus"] for r in results}):
        base = by.get((corpus, 100, 1))
        if not base:
            continue
        cells = []
        for k in sorted({r["topics"] for r in results if r["corpus"] == corpus}):
            r = by.get((corpus, k, 1))
            if r:
                cells.append(f"K={k:,}: parasol {base['parasol_tokens_per_sec']/r['parasol_tokens_per_sec']:.2f}x, "
                             f"WarpLDA {base['warplda_tokens_per_sec']/r['warplda_tokens_per_sec']:.2f}x")
        print(f"  {corpus}: " + "; ".join(cells))

    dist = defaultdict(dict)
    if os.path.exists(dist_csv):
        for row in csv.DictReader(open(dist_csv)):
            dist[int(row["run"])][row["layout"]] = parasol_run(row["log"])
    if dist:
        print("\n20 Newsgroups, K = 1,000, 100 iterations (medians over runs):")
        for layout, label in (("1x1", "1 process x 1 thread"), ("1x2", "1 process x 2 threads"),
                              ("2x1", "2 processes x 1 thread"), ("4x1", "4 processes x 1 thread")):
            xs = [d[layout] for d in dist.values() if layout in d]
            if xs:
                print(f"  {label}: {med(x[0] for x in xs)/1e6:.1f} M tokens/s, log-likelihood {med(x[1][-1][1] for x in xs):.4f}")
        pairs = [d["2x1"][0] / d["1x2"][0] for d in dist.values() if "2x1" in d and "1x2" in d]
        if pairs:
            print(f"  2 processes / 2 threads: {med(pairs):.2f} (range {min(pairs):.2f}-{max(pairs):.2f})")
        lls = [abs(d["4x1"][1][-1][1] / d["1x1"][1][-1][1] - 1) for d in dist.values() if "4x1" in d and "1x1" in d]
        if lls:
            print(f"  4 processes' log-likelihood against one process's: {100*med(lls):.2f}% apart (worst {100*max(lls):.2f}%)")

    plot(results, runs, out)


def plot(results, runs, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    corpora = sorted({r["corpus"] for r in results})
    fig, axes = plt.subplots(1, len(corpora), figsize=(5 * len(corpora), 4), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        for threads, style in ((1, "-"), (2, ":")):
            rs = sorted((r for r in results if r["corpus"] == corpus and r["threads"] == threads), key=lambda r: r["topics"])
            if not rs:
                continue
            ks = [r["topics"] for r in rs]
            ax.plot(ks, [r["parasol_tokens_per_sec"] / 1e6 for r in rs], "o" + style, color="C0", label=f"parasol, {threads} thr")
            ax.plot(ks, [r["warplda_tokens_per_sec"] / 1e6 for r in rs], "s" + style, color="C1", label=f"WarpLDA, {threads} thr")
        ax.set_xscale("log")
        ax.set_xlabel("topics K")
        ax.set_ylabel("M tokens/s")
        ax.set_title(corpus)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lda_speed.png"), dpi=110)

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k in zip(axes, (100, 1000)):
        rep = runs.get(("news", k, 1), {}).get(1)
        if not rep:
            continue
        for system, color in (("parasol", "C0"), ("warplda", "C1")):
            curve = rep[system][1]
            ax.plot([t for t, _ in curve], [ll for _, ll in curve], color=color, label=system)
        ax.set_xlabel("seconds (one thread)")
        ax.set_ylabel("log-likelihood per token")
        ax.set_title(f"20 Newsgroups, K = {k:,}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lda_convergence.png"), dpi=110)


if __name__ == "__main__":
    main()
