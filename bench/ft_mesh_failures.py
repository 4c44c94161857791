#!/usr/bin/env python3
"""ft-mesh on a 16x16 mesh with 1 to 4 failed nodes, against the mesh without failures.

Placements: 24 seeded random sets (every live node keeps at least two links: a node left with one
link doubles the bandwidth bound for any algorithm), grouped by where the failures are, plus a few
structured cases. Prints each ratio and the median and worst per group."""
import json
import random
import statistics
import subprocess
import sys

parasol = sys.argv[1]
R = C = 16


def simulate(failed):
    cmd = [parasol, "collective-sim", "--topology", f"mesh:{R}x{C}", "--algo", "ft-mesh", "--bytes", "256M", "--json"]
    if failed:
        cmd += ["--failed", ",".join(map(str, failed))]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)["time_s"]


def neighbours(v):
    r, c = divmod(v, C)
    for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        if 0 <= r + dr < R and 0 <= c + dc < C:
            yield (r + dr) * C + c + dc


def admissible(failed):
    s = set(failed)
    return all(sum(w not in s for w in neighbours(v)) >= 2 for v in range(R * C) if v not in s)


def group(failed):
    on_edge = any(v // C in (0, R - 1) or v % C in (0, C - 1) for v in failed)
    rows, cols = [v // C for v in failed], [v % C for v in failed]
    adjacent = any(abs(a - b) == 1 for xs in (rows, cols) for a in xs for b in xs)
    return "on the boundary" if on_edge else "neighbouring lines" if adjacent else "interior, apart"


base = simulate([])
print(f"no failures: {base * 1e3:.3f} ms")
rng = random.Random(2026)
sets = []
while len(sets) < 24:
    f = sorted(rng.sample(range(R * C), rng.randint(1, 4)))
    if admissible(f):
        sets.append(f)
sets += [[7 * C + 7], [5 * C + 5, 10 * C + 10], [0], [0, 15, 240, 255]]
by_group = {}
for f in sets:
    ratio = simulate(f) / base
    by_group.setdefault(group(f), []).append(ratio)
    print(f"failed {f}: {ratio:.3f}x ({group(f)})")
for name, ratios in sorted(by_group.items()):
    print(f"{name}: {len(ratios)} sets, median {statistics.median(ratios):.3f}x, worst {max(ratios):.3f}x")
