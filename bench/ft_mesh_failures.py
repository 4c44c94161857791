#!/usr/bin/env python3
"""ft-mesh on 16x16 and 32x32 meshes with 1 to 4 failed nodes, against the same mesh without failures.

Usage: ft_mesh_failures.py PARASOL OUT_DIR

Placements: seeded random sets (every live node keeps at least two links: a node left with one
link doubles the bandwidth bound for any algorithm) plus structured ones: an interior hole, the
corners, holes on each edge, holes in neighbouring rows. Each set is grouped by where its failures
are (on the boundary, in neighbouring lines, interior and apart). ft-mesh's planner simulates its
candidates (lines with five splits of the data, a ring through the live nodes) and keeps the
fastest; the time is the simulator's for that plan, 256 MiB of float32 at 25 GB/s per link and 1 us
per hop. Prints each ratio, the plan and the median and worst per group; draws ft_mesh_failures.png."""
import json
import random
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

parasol, out_dir = sys.argv[1], sys.argv[2]


def simulate(side, failed):
    cmd = [parasol, "collective-sim", "--topology", f"mesh:{side}x{side}", "--algo", "ft-mesh", "--bytes", "256M",
           "--json"]
    if failed:
        cmd += ["--failed", ",".join(map(str, failed))]
    j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return j["time_s"], j["ft_mesh_as"]


def neighbours(side, v):
    r, c = divmod(v, side)
    for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        if 0 <= r + dr < side and 0 <= c + dc < side:
            yield (r + dr) * side + c + dc


def admissible(side, failed):
    s = set(failed)
    return all(sum(w not in s for w in neighbours(side, v)) >= 2 for v in range(side * side) if v not in s)


def group(side, failed):
    on_edge = any(v // side in (0, side - 1) or v % side in (0, side - 1) for v in failed)
    rows, cols = [v // side for v in failed], [v % side for v in failed]
    adjacent = any(abs(a - b) == 1 for xs in (rows, cols) for a in xs for b in xs)
    return "on the boundary" if on_edge else "neighbouring lines" if adjacent else "interior, apart"


def placements(side, count, seed):
    rng = random.Random(seed)
    sets = []
    while len(sets) < count:
        f = sorted(rng.sample(range(side * side), rng.randint(1, 4)))
        if admissible(side, f):
            sets.append(f)
    m, e = side // 2 - 1, side - 1
    sets += [[m * side + m],                                   # one interior hole
             [0, e, e * side, e * side + e],                   # the four corners
             [5, 7 * side + e, e * side + 9, 9 * side],        # one on each edge
             [4 * side + 7, 5 * side + 10, 9 * side + 3]]      # neighbouring rows
    return sets


def main():
    results = {}
    with ThreadPoolExecutor(max_workers=2) as pool:  # two cores: two simulations at once
        for side, count in ((16, 24), (32, 12)):
            base, base_as = simulate(side, [])
            print(f"mesh:{side}x{side}, no failures: {base * 1e3:.3f} ms (as {base_as})", flush=True)
            sets = placements(side, count, 2026)
            by_group = {}
            for f, (t, plan) in zip(sets, pool.map(lambda f: simulate(side, f), sets)):
                g = group(side, f)
                by_group.setdefault(g, []).append(t / base)
                print(f"  failed {f}: {t / base:.3f}x as {plan} ({g})", flush=True)
            for name, ratios in sorted(by_group.items()):
                print(f"  {name}: {len(ratios)} sets, median {statistics.median(ratios):.3f}x, "
                      f"worst {max(ratios):.3f}x", flush=True)
            results[side] = by_group
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (side, by_group) in zip(axes, sorted(results.items())):
        for k, (name, ratios) in enumerate(sorted(by_group.items())):
            ax.scatter([k + random.Random(j).uniform(-0.15, 0.15) for j in range(len(ratios))], ratios, label=name)
        ax.axhline(1.25, color="grey", linestyle="--", label="target 1.25x")
        ax.set_xticks(range(len(by_group)), sorted(by_group), fontsize=8)
        ax.set_title(f"ft-mesh, mesh:{side}x{side}, 1-4 failed nodes")
    axes[0].set_ylabel("time / time without failures")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out_dir}/ft_mesh_failures.png", dpi=100)


main()
