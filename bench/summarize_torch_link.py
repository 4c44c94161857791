#!/usr/bin/python3
"""Summarises bench/torch_link_bench.sh: median samples/s (and range) per rate, system and mode;
p3 against after-backward, hybrid against allreduce, the plugin against parasol train; a PNG of
samples/s against link speed. Usage: summarize_torch_link.py torch_link.csv OUT.png"""
import collections
import csv
import statistics
import sys


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    runs = collections.defaultdict(list)
    for r in rows:
        runs[(r["rate"], r["system"], r["mode"])].append(float(r["samples_per_sec"]))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print("| link | system | mode | samples/s (median) | range |")
    print("|---|---|---|---|---|")
    for (rate, system, mode), v in sorted(runs.items()):
        print(f"| {rate} | {system} | {mode} | {med[(rate, system, mode)]:.1f} | {min(v):.1f}-{max(v):.1f} |")
    for rate in sorted({k[0] for k in runs}):
        for system in ("parasol train", "parasol.torch"):
            def m(mode, system=system):
                return med.get((rate, system, mode), float("nan"))
            best = max(v for k, v in med.items() if k[0] == rate and k[1] == system)
            print(f"{rate} {system}: p3 / after-backward {m('p3:allreduce') / m('after-backward:allreduce'):.2f}x, "
                  f"wfbp hybrid / wfbp allreduce {m('wfbp:hybrid') / m('wfbp:allreduce'):.2f}x, "
                  f"p3 hybrid / p3 allreduce {m('p3:hybrid') / m('p3:allreduce'):.2f}x, "
                  f"best / DDP {best / med[(rate, 'ddp', 'allreduce')]:.2f}x")
        modes = sorted({k[2] for k in runs if k[1] == "parasol train" and k[0] == rate})
        ratios = [(x, med[(rate, "parasol.torch", x)] / med[(rate, "parasol train", x)]) for x in modes
                  if (rate, "parasol.torch", x) in med]
        print(f"{rate} plugin / parasol train, same mode: " + ", ".join(f"{x} {q:.2f}" for x, q in ratios))
    plot(runs, med, sys.argv[2])


def plot(runs, med, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    gbit = {"1gbit": 1, "10gbit": 10}
    rates = sorted({k[0] for k in runs}, key=lambda r: gbit.get(r, 0))
    fig, ax = plt.subplots(figsize=(8, 5))
    for system, style in (("parasol train", "-"), ("parasol.torch", "--"), ("ddp", ":")):
        for mode in sorted({k[2] for k in runs if k[1] == system}):
            xs = [gbit.get(r, 0) for r in rates if (r, system, mode) in med]
            ys = [med[(r, system, mode)] for r in rates if (r, system, mode) in med]
            ax.plot(xs, ys, style, marker="o", label=f"{system} {mode}")
    ax.set_xscale("log")
    ax.set_xlabel("link speed (Gbit/s)")
    ax.set_ylabel("samples/s, 2 ranks")
    ax.set_title("VGG over a shaped link between two network namespaces")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
