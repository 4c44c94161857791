#!/usr/bin/env bash
# parasol mf (SGD on the parameter server) against LIBMF (PyPI's `libmf`, pinned, in this
# benchmark's own environment), side by side in one run on MovieLens-100K's u1.base / u1.test
# (../shared/data): rank 16, L2 regularisation 0.05 on both factors per update (the same
# per-rating rule in both), the same step rule (LIBMF's adaptive step from eta 0.1: parasol's
# --step adaptive --lr 0.1), the same epochs (5, 10, 20, 40), one thread and then two. Neither
# computes an objective during training (LIBMF quiet, parasol --eval-every 0).
# Yardstick: the test RMSE after the same epochs, and the time to a test RMSE (TARGETS: 0.95 0.96);
# time: the solver's (parasol's training seconds, LIBMF's fit) and the whole command's (the
# process, start to exit: parasol's command, and a Python script that imports NumPy and LIBMF,
# reads the files, fits and predicts). Runs alternate within each repetition (REPEAT, default
# 3); medians with the spread.
# PyPI's wrapper (libmf 0.9.2) predicts wrongly (its predict reads the pairs off by a stride: a
# train RMSE of 1.34 where the factors give 0.73), so the script predicts as LIBMF's mf_predict
# does: p_u . q_i, or the model's mean b for a user or item the training set lacks.
# Usage: mf_peers_bench.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
ml="$root/../shared/data/movielens-100k"
[ -s "$ml/u1.base" ] && [ -s "$ml/u1.test" ] || { echo "mf_peers_bench: $ml/u1.base or u1.test is missing" >&2; exit 1; }
env="$out/mf_peers_venv"
if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c 'import libmf' 2>/dev/null; then
  "$bench_python" -m venv "$env"
  "$env/bin/pip" install --disable-pip-version-check -q libmf==0.9.2 numpy==2.4.6
fi
data="$out/mf_peers_data"
mkdir -p "$data"
cat > "$data/libmf_run.py" <<'PY'
import sys, time
start = time.perf_counter()
import numpy as np
from libmf import mf
train = np.loadtxt(sys.argv[1], usecols=(0, 1, 2))
test = np.loadtxt(sys.argv[2], usecols=(0, 1, 2))
epochs, threads = int(sys.argv[3]), int(sys.argv[4])
m = mf.MF(k=16, nr_iters=epochs, nr_threads=threads, lambda_p1=0.0, lambda_q1=0.0, lambda_p2=0.05,
          lambda_q2=0.05, eta=0.1, quiet=True)
t = time.perf_counter()
m.fit(train)
fit = time.perf_counter() - t
p, q = m.p_factors(), m.q_factors()
u, i = test[:, 0].astype(int), test[:, 1].astype(int)
known = (u < len(p)) & (i < len(q))
pred = np.full(len(test), m.model.b)
dots = np.einsum("ij,ij->i", p[u[known]], q[i[known]])
pred[known] = np.where(np.isfinite(dots), dots, m.model.b)
rmse = float(np.sqrt(np.mean((pred - test[:, 2]) ** 2)))
print(f"fit {fit:.6f} rmse {rmse:.6f} script {time.perf_counter() - start:.6f}")
PY
runs="$out/mf_peers_runs.csv"
echo "system,threads,epochs,run,solver_s,whole_s,test_rmse" > "$runs"
echo "# $(date -u) $(uptime)" > "$out/mf_peers_machine.txt"
now() { date +%s.%N; }
for r in $(seq 1 "$repeat"); do
  for threads in 1 2; do
    for epochs in 5 10 20 40; do
      t0=$(now)
      "$parasol" mf --data "$ml/u1.base" --test "$ml/u1.test" --clocks "$epochs" --workers "$threads" --rank 16 \
        --lambda 0.05 --step adaptive --lr 0.1 --eval-every 0 --seed "$r" > "$data/parasol.txt"
      t1=$(now)
      solver=$(sed -n 's/^final objective .*; \([0-9.]*\) s$/\1/p' "$data/parasol.txt")
      rmse=$(sed -n 's/^test RMSE \([0-9.]*\) .*/\1/p' "$data/parasol.txt")
      echo "parasol,$threads,$epochs,$r,$solver,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),$rmse" >> "$runs"
      t0=$(now)
      "$env/bin/python" "$data/libmf_run.py" "$ml/u1.base" "$ml/u1.test" "$epochs" "$threads" > "$data/libmf.txt" 2>/dev/null
      t1=$(now)
      read -r _ fit _ rmse _ _ < <(grep "^fit " "$data/libmf.txt")
      echo "libmf,$threads,$epochs,$r,$fit,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),$rmse" >> "$runs"
    done
  done
done
echo "# machine at end: $(uptime)" >> "$out/mf_peers_machine.txt"
"$bench_python" - "$runs" "$out" <<'PY'
import csv, os, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
def cell(system, threads, epochs, key):
    xs = [float(r[key]) for r in rows if (r["system"], r["threads"], r["epochs"]) == (system, threads, epochs)]
    return statistics.median(xs), min(xs), max(xs)
lines = ["| threads | epochs | parasol test RMSE | LIBMF test RMSE | parasol solver s | LIBMF fit s | solver ratio "
         "(LIBMF / parasol) | parasol whole s | LIBMF whole s | whole ratio |", "|" + "---|" * 10]
epoch_grid = ("5", "10", "20", "40")
targets = [float(t) for t in os.environ.get("TARGETS", "0.95 0.96").split()]
for threads in ("1", "2"):
    for epochs in epoch_grid:
        pr, lr = cell("parasol", threads, epochs, "test_rmse"), cell("libmf", threads, epochs, "test_rmse")
        ps, ls = cell("parasol", threads, epochs, "solver_s"), cell("libmf", threads, epochs, "solver_s")
        pw, lw = cell("parasol", threads, epochs, "whole_s"), cell("libmf", threads, epochs, "whole_s")
        lines.append(f"| {threads} | {epochs} | {pr[0]:.4f} | {lr[0]:.4f} | {ps[0]:.3f} ({ps[1]:.3f}-{ps[2]:.3f}) | "
                     f"{ls[0]:.3f} ({ls[1]:.3f}-{ls[2]:.3f}) | {ls[0] / ps[0]:.2f} | {pw[0]:.3f} | {lw[0]:.3f} | "
                     f"{lw[0] / pw[0]:.2f} |")
lines += ["", "Time to a test RMSE (the fewest epochs of the grid whose median reaches it):", "",
          "| test RMSE | threads | parasol epochs | parasol solver s | LIBMF epochs | LIBMF fit s | "
          "ratio (LIBMF / parasol) |", "|" + "---|" * 7]
for target in targets:
    for threads in ("1", "2"):
        first = {}
        for system in ("parasol", "libmf"):
            first[system] = next(((e, cell(system, threads, e, "solver_s")[0]) for e in epoch_grid
                                  if cell(system, threads, e, "test_rmse")[0] <= target), ("-", float("nan")))
        (pe, pt), (le, lt) = first["parasol"], first["libmf"]
        lines.append(f"| {target} | {threads} | {pe} | {pt:.3f} | {le} | {lt:.3f} | {lt / pt:.2f} |")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "mf_peers_summary.md"), "w").write(text)
print(text, end="")
fig, ax = plt.subplots(figsize=(7, 4.5))
for system, style in (("parasol", "o-"), ("libmf", "s--")):
    for threads in ("1", "2"):
        pts = [(cell(system, threads, e, "solver_s")[0], cell(system, threads, e, "test_rmse")[0]) for e in epoch_grid]
        ax.plot(*zip(*pts), style, label=f"{'LIBMF' if system == 'libmf' else 'parasol'}, {threads} thread{'s' if threads == '2' else ''}")
ax.set(title="MovieLens-100K u1, rank 16: test RMSE after 5, 10, 20, 40 epochs", xlabel="solver seconds",
       ylabel="test RMSE", xscale="log")
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "mf_peers.png"), dpi=110)
PY
