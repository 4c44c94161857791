#!/usr/bin/env bash
# Synchronisation modes where the network is slower than memory: two "hosts" (network namespaces
# joined by veth through a bridge, each link shaped to RATE), one rank each, parasol train's VGG and
# the same network in PyTorch (bench/ddp_bench.py's vgg) under parasol.torch (overlap_update, the
# engine's own update as in parasol train), after-backward,
# buckets, wfbp and p3 over allreduce and wfbp, p3 over hybrid (SFB), and DDP (gloo) over the same
# link; interleaved, REPEAT rounds per rate. Writes torch_link.csv, a summary and a PNG of
# samples/s against link speed.
#
# Usage (root): torch_link_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (default 2), RATES ("1gbit 10gbit"), STEPS (6), BATCH (32 per rank).
source "$(dirname "$0")/common.sh" "$@"
repeat=${REPEAT:-2}
rates=${RATES:-"1gbit 10gbit"}
steps=${STEPS:-6}
batch=${BATCH:-32}
modes=${MODES:-"after-backward:allreduce buckets:allreduce wfbp:allreduce p3:allreduce wfbp:hybrid p3:hybrid"}
prefix=tlb

launch() {  # launch LOG COMMAND...: one rank on each host
  local log=$1
  shift
  netns_mpirun "$prefix" -x OPENBLAS_NUM_THREADS=1 -x OMP_WAIT_POLICY=PASSIVE -x PYTHONPATH="$build/python" \
    -x MASTER_ADDR=10.77.0.1 -x MASTER_PORT=29511 -x GLOO_IFNAME_PREFIX="$prefix-h" \
    "$@" > "$log" 2>&1
}

csv="$out/torch_link.csv"
echo "rate,run,system,mode,samples_per_sec" > "$csv"
echo "# machine: $(uptime); vgg, batch $batch per rank, $steps steps, 2 ranks on 2 namespaces"
for rate in $rates; do
  netns_hosts_up "$prefix" "$rate"
  for r in $(seq 1 "$repeat"); do
    log="$out/torch_link.log"
    launch "$log" "$bench_python" "$here/torch_plugin.py" --engine ddp --model vgg --batch "$batch" --steps "$steps" \
      || { echo "torch_link_bench: ddp failed:"; tail -5 "$log"; exit 1; }
    echo "$rate,$r,ddp,allreduce,$(grep -o '"samples_per_sec": [0-9.]*' "$log" | awk '{print $2}')" | tee -a "$csv"
    for m in $modes; do
      sync=${m%%:*} comm=${m##*:}
      launch "$log" "$build/tools/parasol" train --model vgg --dataset synthetic --steps "$steps" --batch "$batch" \
        --threads 1 --sync "$sync" --comm "$comm" --no-eval --no-progress \
        || { echo "torch_link_bench: parasol train $m failed:"; tail -5 "$log"; exit 1; }
      echo "$rate,$r,parasol train,$m,$(grep -E '^median step' "$log" | sed -E 's/.*ms, ([0-9.]+) samples.*/\1/')" \
        | tee -a "$csv"
      # --overlap: the engine updates during backward, as parasol train does (P3's next forward waits per layer)
      launch "$log" "$bench_python" "$here/torch_plugin.py" --engine parasol --model vgg --batch "$batch" \
        --steps "$steps" --sync "$sync" --comm "$comm" --overlap \
        || { echo "torch_link_bench: plugin $m failed:"; tail -5 "$log"; exit 1; }
      echo "$rate,$r,parasol.torch,$m,$(grep -o '"samples_per_sec": [0-9.]*' "$log" | awk '{print $2}')" | tee -a "$csv"
    done
  done
done
echo "# machine after: $(uptime)"
"$bench_python" "$here/summarize_torch_link.py" "$csv" "$out/torch_link.png" | tee "$out/torch_link_summary.txt"
