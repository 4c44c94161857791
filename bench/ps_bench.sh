#!/usr/bin/env bash
# The parameter server: the local path (Google Benchmark: cached Get+Inc per thread, update
# message size under load) and the consistency models side by side on MF with a 2x straggler
# among 4 workers, as 4 processes (one shard each) and as 1 process of 4 threads.
# Usage: ps_bench.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
repeat=${REPEAT:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mkdir -p "$out"
"$build/bench/ps_local_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/ps_local_bench.json" --benchmark_out_format=json | tee "$out/ps_local_bench.txt"
# MovieLens 100K where the shared data has it (not redistributed), else its synthetic stand-in.
ratings=$root/../shared/data/movielens-100k/u.data
[ -f "$ratings" ] || ratings=synthetic
"$root/scripts/mpirun.sh" -np 4 "$build/tools/parasol" ps-bench --data "$ratings" --straggler 3:2 --clocks 30 --repeat "$repeat" \
  --csv "$out/ps_bench_np4.csv" | tee "$out/ps_bench_np4.txt"
"$build/tools/parasol" ps-bench --data "$ratings" --straggler 3:2 --clocks 30 --repeat "$repeat" \
  --csv "$out/ps_bench_threads.csv" | tee "$out/ps_bench_threads.txt"
