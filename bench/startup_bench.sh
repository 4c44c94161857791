#!/usr/bin/env bash
# Start-up of whole commands (hyperfine, Debian's): `parasol --version` and `parasol lasso --help`
# (no libtorch since the deep-learning commands moved into libparasol_train.so) beside `parasol
# train --help` (which loads it), interleaved, REPEAT runs each after warm-ups; medians, spread.
# Usage: bench/startup_bench.sh [BUILD_DIR] [OUT_DIR]
source "$(dirname "$0")/common.sh" "$@"
ensure_debian_packages hyperfine
runs=${RUNS:-30}
uptime | tee "$out/startup_uptime.txt"
hyperfine --warmup 3 --runs "$runs" -N --export-json "$out/startup.json" \
  "$build/tools/parasol --version" "$build/tools/parasol lasso --help" "$build/tools/parasol train --help" \
  > /dev/null
uptime | tee -a "$out/startup_uptime.txt"
"$bench_python" - "$out/startup.json" <<'PY' | tee "$out/startup_summary.txt"
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
print(f"{'command':44} {'median ms':>10} {'min-max ms':>16}")
for r in results:
    t = [1e3 * x for x in r["times"]]
    print(f"{r['command'].split('/tools/')[-1]:44} {statistics.median(t):10.1f} {min(t):7.1f}-{max(t):<8.1f}")
PY
