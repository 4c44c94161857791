#!/usr/bin/env bash
# Spatial partitioning (issue 46): ResNet-20 on large synthetic images at batch 1, one process
# against --spatial-parallel 2 (two processes of one thread each, halo rows exchanged around every
# convolution), interleaved, REPEAT times. Per run: rank 0's median step (the first step left out),
# its step's peak memory (the metrics' peak_memory_mb: resident memory at its peak during the step
# less before it; MALLOC_MMAP_THRESHOLD_ is fixed so the allocator maps every large tensor on its
# own and returns it when freed, so the resident size follows the live tensors) and the whole
# command's wall time. Prints the table and draws spatial_bench.png.
# Usage: bench/spatial_bench.sh [BUILD_DIR] [OUT_DIR]; SIZE (512), STEPS (6), REPEAT (3) override.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/deps.sh"
size=${SIZE:-512}
steps=${STEPS:-6}
repeat=${REPEAT:-3}
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1 MALLOC_MMAP_THRESHOLD_=131072
raw="$out/spatial_bench.txt"
: > "$raw"
echo "# $(uptime)" | tee -a "$raw"

run() {  # ranks per image
  local csv="$out/spatial_$1.csv" start end
  start=$(date +%s.%N)
  "$here/../scripts/mpirun.sh" -x MALLOC_MMAP_THRESHOLD_ -x OMP_WAIT_POLICY -x OPENBLAS_NUM_THREADS -np "$1" \
    "$build/tools/parasol" train --model resnet20 --dataset synthetic --image-size "$size" --samples 8 \
    --test-samples 2 --batch 1 --steps "$steps" --threads 1 --no-eval --spatial-parallel "$1" \
    --metrics "$csv" > /dev/null < /dev/null
  end=$(date +%s.%N)
  "$bench_python" "$here/summarize_spatial.py" row "$1" "$csv" "$(echo "$end - $start" | bc)"
}

for r in $(seq "$repeat"); do
  { run 1; run 2; } | tee -a "$raw"
done
echo "# $(uptime)" | tee -a "$raw"
"$bench_python" "$here/summarize_spatial.py" summary "$raw" "$out/spatial_bench.png" "$size" |
  tee "$out/spatial_bench_summary.txt"
