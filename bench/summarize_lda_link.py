#!/usr/bin/env python3
"""Summarises lda_link_bench.sh: one process against two hosts over a link, and the memory cap.

Usage: summarize_lda_link.py RUNS_CSV OUT_PNG CAP_MB
Prints a Markdown table (medians over the repetitions, the range beside them) and draws where an
iteration's time goes in each setup, and where the whole command's does (the `# whole command` line).
"""
import csv
import re
import statistics
import sys


def read_run(row):
    log = row["log"]
    run = {"setup": row["setup"], "exit": int(row["exit"]), "seconds": float(row["seconds"]),
           "rss_mb": int(row["peak_rss_mb"]), "link_bytes": int(row["link_bytes"])}
    try:
        rows = list(csv.DictReader(open(f"{log}.csv")))
    except FileNotFoundError:
        rows = []
    out = open(f"{log}.out", errors="replace").read()
    run["iterations"] = len(rows)
    run["tokens_per_sec"] = statistics.median(float(r["tokens_per_sec"]) for r in rows[1:]) if len(rows) > 1 else None
    run["loglik"] = float(rows[-1]["loglik_per_token"]) if rows and rows[-1]["loglik_per_token"] else None
    times = [0.0] + [float(r["seconds"]) for r in rows]
    steps = [b - a for a, b in zip(times, times[1:])][1:]
    run["iteration_seconds"] = statistics.median(steps) if steps else None
    m = re.search(r"word-topic table ([0-9.]+) MB", out)
    run["model_mb"] = float(m.group(1)) if m else None
    m = re.search(r"sampling ([0-9.]+) s, waiting for word blocks ([0-9.]+) s, waiting for topic totals ([0-9.]+) s; "
                  r"word blocks sent ([0-9.]+) MB", out)
    run["split"] = tuple(float(g) for g in m.groups()) if m else None
    m = re.search(r"# whole command: reading the corpus ([0-9.]+) s, setting up ([0-9.]+) s, \d+ iterations? "
                  r"([0-9.]+) s \([0-9.]+ s of it training\), the end ([0-9.]+) s", out)
    run["phases"] = tuple(float(g) for g in m.groups()) if m else None
    err = [line for line in out.splitlines() if "error" in line.lower() or "parasol:" in line]
    run["error"] = err[-1].strip() if err else ""
    return run


def med(values):
    values = [v for v in values if v is not None]
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def main():
    runs_csv, png, cap_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    runs = [read_run(r) for r in csv.DictReader(open(runs_csv))]
    by = {}
    for r in runs:
        by.setdefault(r["setup"], []).append(r)
    one, two = by.get("one", []), by.get("two-hosts", [])
    print("| setup | runs | tokens/s (median, range) | whole command s | peak RSS MB (largest process) "
          "| loglik/token | link GB for the run |")
    print("|---|---|---|---|---|---|---|")
    for name, rs in (("1 process, host 1", one), ("2 hosts x 1 process", two)):
        t, lo, hi = med([r["tokens_per_sec"] for r in rs])
        s = med([r["seconds"] for r in rs])[0]
        rss = max(r["rss_mb"] for r in rs) if rs else 0
        ll = med([r["loglik"] for r in rs])[0]
        gb = med([r["link_bytes"] / 1e9 for r in rs])[0]
        if t is None:
            print(f"| {name} | {len(rs)} | failed | | | | |")
            continue
        print(f"| {name} | {len(rs)} | {t / 1e6:.2f} M ({lo / 1e6:.2f}-{hi / 1e6:.2f}) | {s:.0f} | {rss} | "
              f"{ll:.4f} | {gb:.2f} |")
    ratios = [b["tokens_per_sec"] / a["tokens_per_sec"] for a, b in zip(one, two)
              if a["tokens_per_sec"] and b["tokens_per_sec"]]
    if ratios:
        print(f"\n2 hosts / 1 process, tokens/s, pair by pair: median **{statistics.median(ratios):.2f}x** "
              f"(range {min(ratios):.2f}-{max(ratios):.2f}; {len(ratios)} pairs)")
    splits = [r["split"] for r in two if r["split"]]
    if splits:
        sm, wt, su, mb = (statistics.median(x) for x in zip(*splits))
        model = med([r["model_mb"] for r in two])[0]
        print(f"\nPer iteration on 2 hosts (slowest process, medians): sampling {sm:.2f} s, waiting for word "
              f"blocks {wt:.2f} s, waiting for topic totals {su:.2f} s; word blocks sent {mb:.0f} MB a process "
              f"({2 * mb:.0f} MB on the link an iteration; the word-topic table is {model:.0f} MB).")
    phases = {name: [r["phases"] for r in rs if r["phases"]] for name, rs in (("1 process", one), ("2 hosts", two))}
    if any(phases.values()):
        print("\nWhere the whole command goes (medians, s; rank 0's clock, set-up and the end the slowest "
              "process's; the rest of the whole command is starting the processes):\n")
        print("| setup | reading the corpus | setting up | iterations | the end | whole command |")
        print("|---|---|---|---|---|---|")
        for name, rs in (("1 process", one), ("2 hosts", two)):
            if phases[name]:
                m = [statistics.median(x) for x in zip(*phases[name])]
                print(f"| {name} | {m[0]:.1f} | {m[1]:.1f} | {m[2]:.1f} | {m[3]:.1f} | "
                      f"{med([r['seconds'] for r in rs])[0]:.1f} |")
    capped = by.get("one-capped", []) + by.get("two-hosts-capped", [])
    if capped:
        print(f"\nEach host capped at {cap_mb:.0f} MB (a memory cgroup per host):")
        ref = med([r["loglik"] for r in one])[0]
        for r in capped:
            if r["exit"] == 0 and r["loglik"] is not None:
                off = abs(r["loglik"] - ref) / abs(ref) if ref else float("nan")
                print(f"- {r['setup']}: finished, peak RSS {r['rss_mb']} MB, loglik/token {r['loglik']:.4f} "
                      f"({100 * off:.2f}% from the uncapped process's)")
            else:
                why = "killed by the cgroup's limit" if r["exit"] == 137 else r["error"][:200]
                print(f"- {r['setup']}: exit {r['exit']}: {why}")
    draw(png, one, two)


def stack(ax, labels, parts, layers, ylabel, title):
    """One stacked bar per label: layer i of bar j is parts[j][i]."""
    bottom = [0.0] * len(parts)
    for i, (name, color) in enumerate(layers):
        vals = [p[i] for p in parts]
        ax.bar(labels, vals, bottom=bottom, label=name, color=color)
        bottom = [x + v for x, v in zip(bottom, vals)]
    if bottom:
        ax.set_ylim(0, 1.45 * max(bottom))  # room for the legend above the bars
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()


def draw(png, one, two):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4))
    t1 = [r["tokens_per_sec"] / 1e6 for r in one if r["tokens_per_sec"]]
    t2 = [r["tokens_per_sec"] / 1e6 for r in two if r["tokens_per_sec"]]
    a.boxplot([t1, t2], tick_labels=["1 process", "2 hosts"])
    a.set_ylabel("tokens/s (M), per run")
    a.set_title("throughput")
    splits = [r["split"] for r in two if r["split"]]
    labels, parts = [], []
    per_iteration = [r["iteration_seconds"] for r in one if r["iteration_seconds"]]
    if per_iteration:
        labels.append("1 process")
        parts.append((statistics.median(per_iteration), 0, 0))
    if splits:
        labels.append("2 hosts")
        parts.append(tuple(statistics.median(x) for x in list(zip(*splits))[:3]))
    stack(b, labels, parts, (("sampling", "tab:blue"), ("waiting for a block", "tab:red"),
                             ("waiting for totals", "tab:orange")), "seconds an iteration", "where an iteration goes")
    labels, parts = [], []
    for name, rs in (("1 process", one), ("2 hosts", two)):
        ph = [r["phases"] for r in rs if r["phases"]]
        if ph:
            labels.append(name)
            parts.append([statistics.median(x) for x in zip(*ph)])
    stack(c, labels, parts, (("reading the corpus", "tab:green"), ("setting up", "tab:gray"),
                             ("iterations", "tab:blue"), ("the end", "tab:purple")),
          "seconds", "where the whole command goes")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
