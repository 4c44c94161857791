#!/usr/bin/env bash
# parasol train against PyTorch DDP (gloo), side by side in one run: same model, batch per rank,
# ranks (one thread each), synthetic data. For each framework also the compute-only step (the
# same ranks side by side with no synchronisation), so exposed communication is
# (step - compute-only step) / step as the issue defines it.
# Usage: bench/dl_bench.sh [BUILD_DIR] [OUT_DIR]; MODELS, RANKS, BATCH, STEPS, REPEAT override.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/deps.sh"
models=${MODELS:-"mlp resnet20 vgg"}
ranks_list=${RANKS:-"1 2 4"}
batch=${BATCH:-32}
repeat=${REPEAT:-1}
modes=${MODES:-"after-backward:allreduce buckets:allreduce wfbp:allreduce p3:allreduce wfbp:hybrid p3:hybrid"}
export OMP_WAIT_POLICY=PASSIVE
# One thread per rank for both: PyTorch sizes OpenMP, not OpenBLAS's own pool (2 threads here).
export OPENBLAS_NUM_THREADS=1
raw="$out/dl_bench.txt"
: > "$raw"

steps_for() { case $1 in vgg) echo "${STEPS:-10}" ;; *) echo "${STEPS:-30}" ;; esac; }

parasol() {  # model ranks sync comm
  local line
  line=$("$here/../scripts/mpirun.sh" -np "$2" "$build/tools/parasol" train --model "$1" --dataset synthetic \
    --samples $((batch * $2 * 64)) --batch "$batch" --steps "$(steps_for "$1")" --sync "$3" --comm "$4" --no-eval \
    --threads 1 | grep -o 'median step.*')
  # median step 331.73 ms, 193 samples/s, ...
  echo "parasol $3:$4 $1 $2 $(echo "$line" | awk '{print $3, $5}')"
}

for r in $(seq "$repeat"); do
  for model in $models; do
    for ranks in $ranks_list; do
      {
        "$bench_python" "$here/ddp_bench.py" "$model" "$ranks" "$batch" "$(steps_for "$model")"
        "$bench_python" "$here/ddp_bench.py" "$model" "$ranks" "$batch" "$(steps_for "$model")" --no-comm
        parasol "$model" "$ranks" wfbp none
        for m in $modes; do
          [ "$ranks" = 1 ] && [ "$m" != "wfbp:allreduce" ] && continue
          parasol "$model" "$ranks" "${m%%:*}" "${m##*:}"
        done
      } | tee -a "$raw"
    done
  done
done
"$bench_python" "$here/summarize_dl.py" "$raw" | tee "$out/dl_bench_summary.txt"
