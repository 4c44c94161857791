#!/usr/bin/env bash
# Matrix factorisation by CCD++ beside SGD on the parameter server, same ratings (MovieLens-100K
# from ../shared/data), rank, lambda and objective: objective against time. SGD: BSP, 1 and 2
# processes of one worker, 20 clocks; CCD++: 1 and 2 processes, 10 outer iterations. Runs
# alternate within each repetition; the curves of the first repetition are drawn.
# Usage: mf_ccd_bench.sh BUILD_DIR OUT_DIR
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
ratings="$root/../shared/data/movielens-100k/u.data"
[ -s "$ratings" ] || { echo "mf_ccd_bench: $ratings is missing" >&2; exit 1; }
data="$out/mf_ccd_data"
mkdir -p "$data"
runs="$out/mf_ccd_runs.csv"
echo "config,run,seconds,objective" > "$runs"
echo "# $(date -u) $(uptime)" > "$out/mf_ccd_machine.txt"
common=(mf --data "$ratings" --rank 16 --lambda 0.05 --seed 1)
run() {  # CONFIG RUN NP ARGS...
  local config=$1 r=$2 np=$3
  shift 3
  local launch=()
  [ "$np" -gt 1 ] && launch=("$mpirun" -np "$np")
  "${launch[@]}" "$parasol" "${common[@]}" --metrics "$data/$config.$r.csv" "$@" > "$data/$config.$r.txt"
  tail -1 "$data/$config.$r.csv" | awk -F, -v c="$config" -v r="$r" '{ print c "," r "," $2 "," $3 }' >> "$runs"
}
for r in $(seq 1 "$repeat"); do
  run sgd-bsp-1proc "$r" 1 --algorithm sgd --consistency bsp --workers 1 --clocks 20
  run ccd-1proc "$r" 1 --algorithm ccd --workers 1 --clocks 10
  run sgd-bsp-2proc "$r" 2 --algorithm sgd --consistency bsp --workers 1 --clocks 20
  run ccd-2proc "$r" 2 --algorithm ccd --workers 1 --clocks 10
done
"$bench_python" - "$out" <<'PY'
import csv, os, statistics, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "mf_ccd_runs.csv"))))
lines = ["| configuration | runs | median s | spread s | final objective |", "|---|---|---|---|---|"]
for config in dict.fromkeys(r["config"] for r in rows):
    rs = [r for r in rows if r["config"] == config]
    secs = [float(r["seconds"]) for r in rs]
    lines.append(f"| {config} | {len(rs)} | {statistics.median(secs):.3f} | {min(secs):.3f}-{max(secs):.3f} | "
                 f"{statistics.median(float(r['objective']) for r in rs):.6f} |")
text = "\n".join(lines) + "\n"
open(os.path.join(out, "mf_ccd_summary.md"), "w").write(text)
print(text)
fig, ax = plt.subplots(figsize=(7, 4.5))
for config in dict.fromkeys(r["config"] for r in rows):
    pts = list(csv.DictReader(open(os.path.join(out, "mf_ccd_data", f"{config}.1.csv"))))
    ax.semilogy([float(p["seconds"]) for p in pts], [float(p["objective"]) for p in pts], marker=".", label=config)
ax.set(title="MovieLens-100K, rank 16, lambda 0.05", xlabel="seconds", ylabel="objective")
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "mf_ccd_curves.png"), dpi=110)
PY
