"""Reads OUT/lasso_peers_runs.csv (lasso_peers_bench.sh).

  summarize_lasso_peers.py OUT --choose CASE [--target T]   each system's loosest ladder tolerance
                                                             whose suboptimality reaches T
  summarize_lasso_peers.py OUT [--target T]                  the table (medians of the timed runs)
                                                             and OUT/lasso_peers.png

Suboptimality: (P(w) - P*) / P(0), P* the least objective any run of the case reached.
"""
import argparse
import csv
import os
import statistics

SYSTEMS = ["parasol", "glmnet", "liblinear", "celer", "skglm", "sklearn"]


def load(out):
    rows = []
    with open(os.path.join(out, "lasso_peers_runs.csv")) as f:
        for row in csv.DictReader(f):
            if not row["objective"]:
                continue
            for k in ("solver_seconds", "whole_seconds", "objective", "relative_gap", "p0"):
                row[k] = float(row[k])
            rows.append(row)
    best = {}
    for row in rows:
        best[row["case"]] = min(best.get(row["case"], float("inf")), row["objective"])
    for row in rows:
        row["subopt"] = max(0.0, (row["objective"] - best[row["case"]]) / row["p0"])
    return rows


def choose(rows, case, target):
    for system in SYSTEMS:
        ladder = [r for r in rows if r["case"] == case and r["system"] == system and r["phase"] == "ladder"]
        if not ladder:
            continue
        ladder.sort(key=lambda r: -float(r["tol"]))
        hit = [r for r in ladder if r["subopt"] <= target]
        print(system, (hit[0] if hit else ladder[-1])["tol"])


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def table(rows, target):
    print(f"| case | system | its tolerance | solver s | whole command s | solver: peer / parasol | "
          f"whole: peer / parasol | suboptimality | relative gap | nonzeros |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in dict.fromkeys(r["case"] for r in rows):
        timed = [r for r in rows if r["case"] == case and r["phase"] == "timed"]
        base = [r for r in timed if r["system"] == "parasol"]
        if not base:
            continue
        base_solver = statistics.median(r["solver_seconds"] for r in base)
        base_whole = statistics.median(r["whole_seconds"] for r in base)
        for system in SYSTEMS:
            mine = [r for r in timed if r["system"] == system]
            if not mine:
                continue
            solver = [r["solver_seconds"] for r in mine]
            whole = [r["whole_seconds"] for r in mine]
            ratio = "" if system == "parasol" else f"{statistics.median(solver) / base_solver:.2f}x"
            ratio_whole = "" if system == "parasol" else f"{statistics.median(whole) / base_whole:.2f}x"
            worst = max(mine, key=lambda r: r["subopt"])
            missed = " (misses the target)" if worst["subopt"] > target else ""
            print(f"| {case} | {system} | {mine[0]['tol']} | {spread(solver)} | {spread(whole)} | {ratio} | "
                  f"{ratio_whole} | {worst['subopt']:.1e}{missed} | {worst['relative_gap']:.1e} | "
                  f"{mine[0]['nonzeros']} |")


def plot(rows, out, target):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = list(dict.fromkeys(r["case"] for r in rows))
    columns = min(4, len(cases))
    rows_of_plots = (len(cases) + columns - 1) // columns
    fig, axes = plt.subplots(rows_of_plots, columns, figsize=(5 * columns, 4 * rows_of_plots), squeeze=False)
    for ax in axes.flat[len(cases):]:
        ax.set_visible(False)
    for ax, case in zip(axes.flat, cases):
        for system in SYSTEMS:
            ladder = [r for r in rows if r["case"] == case and r["system"] == system and r["phase"] == "ladder"]
            if not ladder:
                continue
            ladder.sort(key=lambda r: -float(r["tol"]))  # loosest first
            ax.plot([r["solver_seconds"] for r in ladder], [max(r["subopt"], 1e-16) for r in ladder], "o-",
                    label=system, markersize=3)
        ax.axhline(target, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(case)
        ax.set_xlabel("solver seconds (one thread)")
        ax.set_ylabel("(P(w) - P*) / P(0)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lasso_peers.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--choose")
    parser.add_argument("--target", type=float, default=1e-6)
    args = parser.parse_args()
    rows = load(args.out)
    if args.choose:
        choose(rows, args.choose, args.target)
        return
    table(rows, args.target)
    plot(rows, args.out, args.target)


if __name__ == "__main__":
    main()
