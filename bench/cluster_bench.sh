#!/usr/bin/env bash
# The cluster scheduler, simulated and live.
#  1. cluster-sim on the four Pollux workloads under goodput, Tiresias and Optimus (average JCT).
#  2. parasol cluster on this machine's cores: a mix of real `parasol train` jobs with fixed
#     batches under goodput and under Tiresias (the users' GPU counts), interleaved REPEAT times;
#     medians of the average JCT and makespan, and goodput / Tiresias.
#  3. Adaptive batches: MNIST jobs whose train_args allow --batch-max 1024 under goodput choosing
#     counts and batches, goodput choosing counts only (--fixed-batch) and Tiresias, interleaved
#     REPEAT times; each job's final test accuracy beside its JCT; summarize_cluster.py writes
#     the table and cluster_adaptive.png (JCT by policy, one adaptive run's counts and batches).
# Usage: bench/cluster_bench.sh [BUILD_DIR] [OUT_DIR]; GPUS, REPEAT, SKIP_SIM=1, SKIP_MIX=1,
# SKIP_ADAPTIVE=1 override.
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

if [ "${SKIP_MIX:-0}" != 1 ]; then
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
fi

[ "${SKIP_ADAPTIVE:-0}" = 1 ] && exit 0
source "$here/deps.sh"
# Jobs of 20 s to 90 s on one core at their users' batches (MNIST's 10,000 bundled images): the
# mlp jobs' gradient noise scale grows from ~200 to ~400 samples as they train, lenet's similar.
mnist=$(cd "$here/../data/mnist" && pwd)
jobs="$out/cluster_adaptive_jobs.csv"
cat > "$jobs" <<JOBS
name,time,num_replicas,batch_size,steps,train_args
m1,0,1,64,6000,--model mlp --dataset mnist --data $mnist --batch-max 1024
m2,40,2,64,4800,--model mlp --dataset mnist --data $mnist --seed 2 --batch-max 1024
l1,80,1,128,2400,--model lenet --dataset mnist --data $mnist --batch-max 1024
m3,120,1,64,3600,--model mlp --dataset mnist --data $mnist --seed 3 --batch-max 1024
l2,180,2,128,2000,--model lenet --dataset mnist --data $mnist --seed 2 --batch-max 1024
JOBS
runs="$out/cluster_adaptive_runs.csv"
echo "policy,run,average_jct,max_jct,makespan,restarts,restart_s,mean_test_accuracy,min_test_accuracy" > "$runs"
uptime | tee "$out/cluster_adaptive_uptime.txt"
for r in $(seq "$repeat"); do
  for p in adaptive fixed tiresias; do
    case $p in
      adaptive) flags=(--policy goodput) ;;
      fixed) flags=(--policy goodput --fixed-batch) ;;
      tiresias) flags=(--policy tiresias) ;;
    esac
    log="$out/cluster_adaptive_${p}_$r.log"
    "$parasol" cluster --jobs "$jobs" --gpus "$gpus" "${flags[@]}" --interval 15 --mpirun "$here/../scripts/mpirun.sh" \
      --work-dir "$out/cluster-work" --timeout 1200 > "$log"
    # average JCT 41.2 s, max 60.1 s, makespan 98.3 s / N restarts, S s stopping and starting; ...
    acc=$(for j in m1 m2 l1 m3 l2; do
            grep -o 'test accuracy [0-9.]*%' "$out/cluster-work/$j/train.log" | tail -1 | tr -dc '0-9.\n'
          done | awk '{ s += $1; if (NR == 1 || $1 < m) m = $1 } END { printf "%.2f,%.2f", s / NR, m }')
    awk -v p="$p" -v r="$r" -v acc="$acc" '
      /^average JCT/ { gsub(/,/, ""); jct = $3; mx = $6; mk = $9 }
      / restarts, / { n = $1; s = $3 }
      END { printf "%s,%s,%s,%s,%s,%s,%s,%s\n", p, r, jct, mx, mk, n, s, acc }' "$log" | tee -a "$runs"
  done
done
"$bench_python" "$here/summarize_cluster.py" "$out"
