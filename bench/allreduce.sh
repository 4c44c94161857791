#!/usr/bin/env bash
# parasol's allreduce algorithms against MPI_Allreduce on this machine, 2 and 4 ranks, out of
# place. The machine is shared and noisy, so every configuration runs RUNS times (default 5) and
# the summary reports medians of times and of per-run ratios to MPI.
# Usage: allreduce.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
runs=${RUNS:-5}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/deps.sh"
root=$(cd "$here/.." && pwd)
mkdir -p "$out"
sizes=${SIZES:-8,64K,256K,1M,4M,16M,64M,256M}
for np in 2 4; do
  for run in $(seq 1 "$runs"); do
    "$root/scripts/mpirun.sh" -np "$np" "$build/tools/parasol" allreduce-bench \
      --algos ring,halving-doubling,torus2d,multiring,treepack,auto,mpi --sizes "$sizes" --iters 15 \
      --csv "$out/allreduce_np${np}_run${run}.csv" > /dev/null
  done
done
"$bench_python" "$here/summarize_allreduce.py" "$out"/allreduce_np*_run*.csv | tee "$out/allreduce_summary.txt"
