"""Summary of bench/mlr_peers_bench.sh: parasol mlr against LIBLINEAR and scikit-learn.

    summarize_mlr_peers.py OUT --choose CASE --target T   what the timed phase runs, a line each:
        "parasol-P EPOCHS" (the first epoch of the ladder run at or above T) and "PEER TOL" (the
        loosest tolerance of the ladder at or above T); a system that never reaches T is left out
    summarize_mlr_peers.py OUT --targets news20=0.8,letter=0.77
        the table (OUT/mlr_peers_summary.md, also printed) and the plot (OUT/mlr_peers.png)
"""
import csv
import statistics
import sys
from collections import defaultdict


def rows_of(out):
    with open(f"{out}/mlr_peers_runs.csv") as f:
        return [r for r in csv.DictReader(f) if r["solver_seconds"]]


def curve(metrics):
    """(training seconds, test accuracy) per epoch of a parasol metrics file."""
    with open(metrics) as f:
        return [(float(r["seconds"]), float(r["test_accuracy"])) for r in csv.DictReader(f)]


def choose(out, case, target):
    rows = [r for r in rows_of(out) if r["case"] == case and r["phase"] == "ladder"]
    for r in rows:
        if r["system"].startswith("parasol-"):
            epochs = [i + 1 for i, (_, acc) in enumerate(curve(r["metrics"])) if acc >= target]
            if epochs:
                print(r["system"], epochs[0])
    peers = defaultdict(list)
    for r in rows:
        if not r["system"].startswith("parasol-") and float(r["test_accuracy"]) >= target:
            peers[r["system"]].append(r["setting"])
    for system, tols in peers.items():
        print(system, max(tols, key=float))


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def table(out, case, target, rows):
    ladder = [r for r in rows if r["case"] == case and r["phase"] == "ladder"]
    timed = defaultdict(list)
    for r in rows:
        if r["case"] == case and r["phase"] == "timed":
            timed[(r["system"], r["setting"])].append(r)
    lines = [f"### {case}: time to {100 * target:.1f}% test accuracy", "",
             "| system | setting | test accuracy | solver s, median (range) | whole command s | "
             "solver: x parasol's | whole: x parasol's | best accuracy of its ladder |",
             "|---|---|---|---|---|---|---|---|"]
    base = next((v for (s, _), v in timed.items() if s == "parasol-1"), None)
    med = lambda v, key: statistics.median(float(r[key]) for r in v)  # noqa: E731
    systems = sorted({r["system"] for r in ladder}, key=lambda s: (not s.startswith("parasol"), s))
    for system in systems:
        best = max(float(r["test_accuracy"]) for r in ladder if r["system"] == system)
        if system.startswith("parasol"):
            best = max(a for r in ladder if r["system"] == system for _, a in curve(r["metrics"]))
        entries = [(k, v) for k, v in timed.items() if k[0] == system]
        if not entries:
            lines.append(f"| {system} | - | never {100 * target:.1f}% | - | - | - | - | {100 * best:.2f}% |")
            continue
        (_, setting), v = entries[0]
        label = f"{setting} epochs" if system.startswith("parasol") else f"tol {setting}"
        ratio = lambda key: f"{med(v, key) / med(base, key):.2f}" if base else "-"  # noqa: E731
        lines.append(f"| {system} | {label} | {100 * med(v, 'test_accuracy'):.2f}% | "
                     f"{spread([float(r['solver_seconds']) for r in v])} | "
                     f"{spread([float(r['whole_seconds']) for r in v])} | {ratio('solver_seconds')} | "
                     f"{ratio('whole_seconds')} | {100 * best:.2f}% |")
    return lines + [""]


def plot(out, cases, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(cases), figsize=(6 * len(cases), 4.2), squeeze=False)
    for ax, (case, target) in zip(axes[0], cases):
        ladder = [r for r in rows if r["case"] == case and r["phase"] == "ladder"]
        for system in sorted({r["system"] for r in ladder}):
            mine = [r for r in ladder if r["system"] == system]
            if system.startswith("parasol-"):
                points = curve(mine[0]["metrics"])
                label = f"parasol mlr, {system[8:]} process{'es' if system[8:] != '1' else ''} (per epoch)"
            else:
                points = sorted((float(r["solver_seconds"]), float(r["test_accuracy"])) for r in mine)
                label = f"{system} (per tolerance)"
            ax.plot([p[0] for p in points], [100 * p[1] for p in points], marker=".", label=label)
        ax.axhline(100 * target, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_title(case)
        ax.set_xlabel("solver seconds (one thread a process)")
        ax.set_ylabel("test accuracy, %")
        low = min(100 * float(r["test_accuracy"]) for r in ladder)
        ax.set_ylim(max(low, 100 * target - 12), None)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/mlr_peers.png", dpi=110)


def main():
    out = sys.argv[1]
    if sys.argv[2] == "--choose":
        choose(out, sys.argv[3], float(sys.argv[5]))
        return
    cases = [(c, float(t)) for c, t in (item.split("=") for item in sys.argv[3].split(","))]
    rows = rows_of(out)
    cases = [(c, t) for c, t in cases if any(r["case"] == c for r in rows)]
    lines = []
    for case, target in cases:
        lines += table(out, case, target, rows)
    text = "\n".join(lines)
    with open(f"{out}/mlr_peers_summary.md", "w") as f:
        f.write(text + "\n")
    print(text)
    plot(out, cases, rows)


if __name__ == "__main__":
    main()
