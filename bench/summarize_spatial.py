"""Rows and summary of bench/spatial_bench.sh.

Usage: summarize_spatial.py row S METRICS_CSV COMMAND_SECONDS   (one run: "spatial S step_s memory_mb command_s")
       summarize_spatial.py summary RAW PNG SIZE                 (the table over repeats, and the picture)
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def row(ranks, path, command_seconds):
    with open(path) as f:
        steps = list(csv.DictReader(f))[1:]  # the first step warms up
    step = statistics.median(float(s["step_seconds"]) for s in steps)
    memory = statistics.median(float(s["peak_memory_mb"]) for s in steps)
    print(f"spatial {ranks} {step:.4f} {memory:.1f} {float(command_seconds):.2f}")


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def summary(raw, png, size):
    runs = {}
    with open(raw) as f:
        for line in f:
            if line.startswith("spatial "):
                _, s, step, memory, command = line.split()
                runs.setdefault(int(s), []).append((float(step), float(memory), float(command)))
    one, two = runs[1], runs[2]
    # Runs were interleaved: pair the i-th of each for the ratios.
    speedup = [a[0] / b[0] for a, b in zip(one, two)]
    memory = [b[1] / a[1] for a, b in zip(one, two)]
    command = [a[2] / b[2] for a, b in zip(one, two)]
    print(f"ResNet-20, {size}x{size} synthetic images, batch 1 per group, one thread per process; "
          f"{len(speedup)} interleaved runs, median (min-max)")
    print("| ranks per image | step (s) | step's peak memory per rank (MB) | whole command (s) |")
    print("|---|---|---|---|")
    for s, rs in sorted(runs.items()):
        print(f"| {s} | {spread([r[0] for r in rs])} | {spread([r[1] for r in rs])} | {spread([r[2] for r in rs])} |")
    print(f"step speed-up of --spatial-parallel 2: {spread(speedup)}x (target >= 1.6)")
    print(f"memory per rank against one rank: {spread(memory)}x (target <= 0.6)")
    print(f"whole command speed-up: {spread(command)}x")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    labels = [f"S = {s}" for s in sorted(runs)]
    left.bar(labels, [statistics.median(r[0] for r in runs[s]) for s in sorted(runs)], color=["#777", "#2a7"])
    left.set_ylabel("step time (s), median")
    left.set_title(f"ResNet-20, {size}x{size}, batch 1")
    right.bar(labels, [statistics.median(r[1] for r in runs[s]) for s in sorted(runs)], color=["#777", "#2a7"])
    right.set_ylabel("step's peak memory per rank (MB)")
    right.set_title("activations and gradients")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    if sys.argv[1] == "row":
        row(*sys.argv[2:5])
    else:
        summary(*sys.argv[2:5])
