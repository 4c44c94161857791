#!/usr/bin/env bash
# The cluster scheduler, simulated and live.
#  1. cluster-sim on the four Pollux workloads under goodput, Tiresias and Optimus (average JCT).
#  2. parasol cluster on this machine's cores: the same mix of real `parasol train` jobs under
#     goodput and under Tiresias (the users' GPU counts), interleaved REPEAT times; medians of the
#     average JCT and makespan, and goodput / Tiresias.
# Usage: bench/cluster_bench.sh [BUILD_DIR] [OUT_DIR]; GPUS, REPEAT, SKIP_SIM=1 override.
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
parasol="$build/tools/parasol"
gpus=${GPUS:-2}
repeat=${REPEAT:-3}

if [ "${SKIP_SIM:-0}" != 1 ]; then
  for w in 1 2 3 4; do
    for p in goodput tiresias optimus; do
      line=$("$parasol" cluster-sim --workload "$here/../../shared/data/pollux/workloads/workload-$w.csv" \
        --profiles "$here/../../shared/data/pollux/profiles" --policy "$p" | sed -n 2p)
      echo "sim workload-$w $p $line"
    done
  done | tee "$out/cluster_sim.txt"
fi

# Users ask for 1 or 2 GPUs without knowing how their jobs scale: mlp at batch 512 gains ~1.7x
# from a second core, mlp at batch 64 nothing (synchronisation dominates), lenet at 128 ~1.25x.
jobs="$out/cluster_live_jobs.csv"
syn="--dataset synthetic --samples 8192 --no-eval"
cat > "$jobs" <<JOBS
name,time,num_replicas,batch_size,steps,train_args
big1,0,1,512,700,--model mlp $syn
small,10,2,64,1500,--model mlp $syn --seed 2
big2,25,1,512,400,--model mlp $syn --seed 3
conv,40,2,128,1200,--model lenet $syn
big3,60,1,512,300,--model mlp $syn --seed 4
JOBS
raw="$out/cluster_live.txt"
: > "$raw"
for r in $(seq "$repeat"); do
  for p in goodput tiresias; do
    "$parasol" cluster --jobs "$jobs" --gpus "$gpus" --policy "$p" --interval 5 \
      --mpirun "$here/../scripts/mpirun.sh" --work-dir "$out/cluster-work" --timeout 900 > "$out/cluster_live_$p.log"
    line=$(grep '^average JCT' "$out/cluster_live_$p.log")
    echo "live $p $r $line" | tee -a "$raw"
  done
done
# live goodput 1 average JCT 41.2 s, max 60.1 s, makespan 98.3 s
awk '
  { jct[$2] = jct[$2] " " $6; mk[$2] = mk[$2] " " $12 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    g = median(jct["goodput"]); t = median(jct["tiresias"])
    printf "live median average JCT: goodput %.1f s, tiresias %.1f s, goodput/tiresias %.3f\n", g, t, g / t
    g = median(mk["goodput"]); t = median(mk["tiresias"])
    printf "live median makespan: goodput %.1f s, tiresias %.1f s, goodput/tiresias %.3f\n", g, t, g / t
  }' "$raw" | tee "$out/cluster_live_summary.txt"
