#!/usr/bin/python3
"""Summarises bench/dl_bench.sh's lines (`framework mode model ranks step_ms samples_per_sec`):
medians over repeats, parasol's best mode against DDP, exposed communication of each."""
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].startswith("ddp"):
        key = ("ddp", f[0], f[1], int(f[2]))
        runs[key].append((float(f[3]), float(f[4])))
    elif f[0] == "parasol":
        runs[("parasol", f[1], f[2], int(f[3]))].append((float(f[4]), float(f[5])))


def med(key, i):
    return statistics.median(v[i] for v in runs[key]) if key in runs else None


print(f"{'model':9} {'ranks':>5} {'DDP samples/s':>14} {'exposed':>8} {'parasol best':>22} {'samples/s':>10} "
      f"{'exposed':>8} {'ratio':>6}")
for model in ("mlp", "resnet20", "vgg"):
    for ranks in (1, 2, 4):
        ddp = ("ddp", "ddp", model, ranks)
        if ddp not in runs:
            continue
        ddp_step, ddp_rate = med(ddp, 0), med(ddp, 1)
        ddp_compute = med(("ddp", "ddp-nocomm", model, ranks), 0)
        ours_compute = med(("parasol", "wfbp:none", model, ranks), 0)
        modes = [k for k in runs if k[0] == "parasol" and k[2] == model and k[3] == ranks and k[1] != "wfbp:none"]
        best = max(modes, key=lambda k: med(k, 1))
        step, rate = med(best, 0), med(best, 1)
        print(f"{model:9} {ranks:5} {ddp_rate:14.1f} {(ddp_step - ddp_compute) / ddp_step:8.3f} {best[1]:>22} "
              f"{rate:10.1f} {(step - ours_compute) / step:8.3f} {rate / ddp_rate:6.2f}")
        for k in sorted(modes):
            print(f"{'':15} {k[1]:>22} {med(k, 1):10.1f} samples/s, step {med(k, 0):8.2f} ms")
