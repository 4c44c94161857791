#!/usr/bin/env bash
# parasol.torch against PyTorch DDP (gloo), interleaved in one run: torchvision VGG-11 and
# ResNet-18 on synthetic 32x32 images, the same script (bench/torch_plugin.py), batch per rank,
# one thread per rank; 1, 2 and 4 ranks; REPEAT rounds, each round every configuration once.
# Also the same DDP over the "parasol" backend (ddp-parasol), and the plugin's overhead on one
# rank against plain PyTorch. MODES: sync:comm[:overlap] (overlap: overlap_update=True).
# Usage: bench/torch_plugin_bench.sh [BUILD_DIR] [OUT_DIR]; MODELS, RANKS, BATCH, STEPS, REPEAT,
# MODES override.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=${2:-bench/results}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source "$here/deps.sh"
models=${MODELS:-"vgg11 resnet18"}
ranks_list=${RANKS:-"1 2 4"}
batch=${BATCH:-32}
repeat=${REPEAT:-3}
modes=${MODES:-"wfbp:allreduce buckets:allreduce wfbp:hybrid p3:allreduce:overlap p3:hybrid:overlap"}
export PYTHONPATH="$build/python" OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1 MASTER_ADDR=127.0.0.1
raw="$out/torch_plugin.jsonl"
: > "$raw"
uptime | tee "$out/torch_plugin_uptime.txt"

steps_for() { case $1 in vgg11) echo "${STEPS:-6}" ;; *) echo "${STEPS:-12}" ;; esac; }
run() {  # ranks model engine [sync comm [overlap]]
  local ranks=$1 model=$2 engine=$3
  export MASTER_PORT=$((29500 + RANDOM % 2000))
  "$here/../scripts/mpirun.sh" -np "$ranks" "$bench_python" "$here/torch_plugin.py" --engine "$engine" \
    --model "$model" --batch "$batch" --steps "$(steps_for "$model")" ${4:+--sync "$4" --comm "$5"} \
    ${6:+--overlap} | grep '^{' | tee -a "$raw"
}

for r in $(seq "$repeat"); do
  for model in $models; do
    for ranks in $ranks_list; do
      run "$ranks" "$model" plain
      if [ "$ranks" = 1 ]; then
        run 1 "$model" parasol wfbp allreduce
        continue
      fi
      run "$ranks" "$model" ddp
      run "$ranks" "$model" ddp-parasol
      for m in $modes; do
        IFS=: read -r sync comm overlap <<< "$m"
        run "$ranks" "$model" parasol "$sync" "$comm" "$overlap"
      done
    done
  done
done
uptime | tee -a "$out/torch_plugin_uptime.txt"
"$bench_python" "$here/summarize_torch_plugin.py" "$raw" "$out/torch_plugin.csv" "$out/torch_plugin.png" \
  | tee "$out/torch_plugin_summary.txt"
