#!/usr/bin/env bash
# parasol train over a real network link: two "hosts" (network namespaces joined by veth through a
# bridge, each link shaped to 1 Gbit/s) run a 2-rank job with the parameter-server backend and
# with allreduce, interleaved; per rank and step: bytes sent and the median step time.
#
# Usage (root): ps_link_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (default 3), MODEL (vgg), SYNC (p3), STEPS (8), BATCH (32 per rank), RATE (1gbit).
source "$(dirname "$0")/common.sh" "$@"
model=${MODEL:-vgg}
sync=${SYNC:-p3}
steps=${STEPS:-8}
batch=${BATCH:-32}
rate=${RATE:-1gbit}
prefix=plb
netns_hosts_up "$prefix" "$rate"

run() {  # run BACKEND LOG
  netns_mpirun "$prefix" -x OPENBLAS_NUM_THREADS=1 \
    "$build/tools/parasol" train --model "$model" --dataset synthetic --steps "$steps" --batch "$batch" \
    --threads 1 --sync "$sync" --comm "$1" --no-eval > "$2" 2>&1
}


csv="$out/ps_link.csv"
echo "backend,run,median_step_ms,sent_mb_per_rank,link_mb_per_rank,steps" > "$csv"
echo "# machine: $(uptime); link $rate between 2 namespaces; $model, --sync $sync, batch $batch per rank, $steps steps"
for r in $(seq 1 "$repeat"); do
  for backend in allreduce ps; do
    log="$out/ps_link_${backend}_r$r.log"
    before=$(netns_tx_bytes "$prefix")
    run "$backend" "$log" || { echo "ps_link_bench: $backend run $r failed:"; tail -5 "$log"; exit 1; }
    link=$(awk -v a="$before" -v b="$(netns_tx_bytes "$prefix")" 'BEGIN { printf "%.1f", (b - a) / 2 / 1e6 }')
    line=$(grep -E "^median step" "$log" | tail -1)
    step=$(sed -E 's/^median step ([0-9.]+) ms.*/\1/' <<< "$line")
    sent=$(sed -E 's/.*sent ([0-9.]+) MB per rank.*/\1/' <<< "$line")
    echo "$backend,$r,$step,$sent,$link,$steps" >> "$csv"
  done
done
"$bench_python" - "$csv" <<'PY' | tee "$out/ps_link_summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = statistics.median
by = {b: {r["run"]: r for r in rows if r["backend"] == b} for b in ("allreduce", "ps")}
print("| backend | median step (ms) | MB per rank per step (counted) | MB per rank on the link (whole run) |")
print("|---|---|---|---|")
for b, rs in by.items():
    rs = list(rs.values())
    print(f"| {b} | {med(float(r['median_step_ms']) for r in rs):.0f} | "
          f"{med(float(r['sent_mb_per_rank']) / int(r['steps']) for r in rs):.1f} | "
          f"{med(float(r['link_mb_per_rank']) for r in rs):.0f} |")
def ratio(field):
    xs = [float(by["ps"][k][field]) / float(by["allreduce"][k][field]) for k in by["ps"]]
    return f"{med(xs):.3f}x (range {min(xs):.3f}-{max(xs):.3f})"
print(f"ps / allreduce, same run: step {ratio('median_step_ms')}, counted bytes {ratio('sent_mb_per_rank')}, "
      f"link bytes {ratio('link_mb_per_rank')}")
PY
