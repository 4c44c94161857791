#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ in the checked build build-asan (clang, ASan, UBSan; the
# suite under ASan, scripts/sanitize.sh asan, runs from the same objects) and runs each for SECONDS
# (default 20; as many targets at once as there are cores, one core each), from the seeds in
# fuzz/seeds plus what earlier runs found (kept in build-asan/corpus). A finding (crash, sanitizer
# report, hang over 10 s, more than 2 GiB, or an exception other than ParseError) fails the script;
# its input is saved in build-asan/findings. Prints one line per target and writes
# build-asan/fuzz-summary.csv.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (targets: the names of fuzz/*_fuzz.cc)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
build=build-asan

bash scripts/checked-preset.sh asan  # CMakePresets.json: clang, ASan, UBSan, assertions on
cmake --build "$build" -j "$(nproc)" --target fuzz_targets > "$build/fuzz-build.log" 2>&1 ||
  { tail -30 "$build/fuzz-build.log"; exit 1; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cc; do t=$(basename "$f" _fuzz.cc); targets+=("$t"); done
fi

summary="$build/fuzz-summary.csv"
echo "target,seconds,executions,executions_per_second,corpus_files,result" > "$summary"
# One target: its run, then a line "target,seconds,...,result" in $build/fuzz-$t.result.
fuzz_one() {
  local t=$1 corpus="$build/corpus/$1" findings="$build/findings/$1" log="$build/fuzz-$1.log" result runs files rate
  mkdir -p "$corpus" "$findings"
  # Leaks are not findings of a reader that throws: libarchive and the standard library keep
  # caches for the life of the process.
  if ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
       "$corpus" "fuzz/seeds/$t" > "$log" 2>&1; then
    result=ok
  else
    result=FINDING
  fi
  runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
  files=$(find "$corpus" -type f | wc -l)
  rate=$(awk -v r="${runs:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", r / s }')
  echo "$t,$seconds,${runs:-0},$rate,$files,$result" > "$build/fuzz-$t.result"
}
# Each target runs on one core: as many at once as there are cores (CI's smoke run takes half).
jobs=$(getconf _NPROCESSORS_ONLN)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
failed=0
for t in "${targets[@]}"; do
  IFS=, read -r _ _ runs rate files result < "$build/fuzz-$t.result"
  cat "$build/fuzz-$t.result" >> "$summary"
  printf '%-16s %10s runs %8s/s  corpus %5s  %s\n' "$t" "$runs" "$rate" "$files" "$result"
  if [ "$result" != ok ]; then
    failed=$((failed + 1))
    grep -E "ERROR|SUMMARY|terminate|what\(\)" "$build/fuzz-$t.log" | head -5
    echo "  log: $build/fuzz-$t.log"
  fi
done
[ "$failed" -eq 0 ]
