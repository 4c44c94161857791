#!/usr/bin/env bash
# LDA throughput and quality: tokens/s per core and log-likelihood per token at 50 and 200
# iterations, on AP and 20 Newsgroups (train), K = 100 and 1,000, 1 and 2 threads, one MH step
# per token (the setting of the WarpLDA figures in docs/benchmarks.md); peak memory; and a
# cache simulation of the sampler (valgrind cachegrind) for misses per token.
# Usage: lda_bench.sh BUILD_DIR OUT_DIR   (REPEAT runs per configuration, default 3)
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
repeat=${REPEAT:-3}
iterations=${ITERATIONS:-200}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
parasol="$build/tools/parasol"
mkdir -p "$out"
corpora=("ap=$root/data/ap/ap.dat")
news="$root/../shared/data/20newsgroups/20news-bydate-train.tar.gz"
[ -f "$news" ] && corpora+=("20news=$news")
summary="$out/lda_runs.csv"
echo "corpus,topics,threads,run,metrics,max_rss_kb" > "$summary"
for entry in "${corpora[@]}"; do
  name=${entry%%=*}
  path=${entry#*=}
  for k in 100 1000; do
    for t in 1 2; do
      for r in $(seq 1 "$repeat"); do
        m="$out/lda_${name}_k${k}_t${t}_run${r}.csv"
        /usr/bin/time -f "%M" -o "$out/rss.txt" "$parasol" lda --corpus "$path" --topics "$k" --iterations "$iterations" \
          --mh-steps 1 --threads "$t" --eval-every 50 --seed "$r" --metrics "$m" > /dev/null
        echo "$name,$k,$t,$r,$m,$(tail -1 "$out/rss.txt")" >> "$summary"
      done
    done
  done
done
python3 "$here/summarize_lda.py" "$summary" | tee "$out/lda_summary.txt"

# Cache and branch simulation of 3 iterations on AP, one thread, per sampled token.
if command -v valgrind > /dev/null; then
  for k in 100 1000; do
    valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --cachegrind-out-file="$out/cg_k$k.out" \
      "$parasol" lda --corpus "$root/data/ap/ap.dat" --topics "$k" --iterations 3 --mh-steps 1 --eval-every 0 \
      > /dev/null 2> "$out/cg_k$k.txt"
    python3 - "$out/cg_k$k.out" "$k" <<'PY' | tee -a "$out/lda_summary.txt"
import sys
events, fn_totals = None, {}
for line in open(sys.argv[1]):
    if line.startswith("events:"):
        events = line.split()[1:]
    elif line.startswith("fn="):
        fn = line[3:].strip()
    elif line[:1].isdigit() and events:
        nums = [int(x) for x in line.split()[1:]]
        acc = fn_totals.setdefault(fn, [0] * len(events))
        for i, v in enumerate(nums):
            acc[i] += v
tokens = 435838 * 3
sampler = [0] * len(events)
for fn, v in fn_totals.items():
    if "ThreadSampler" in fn or "DrawAlias" in fn or "WordTopicTable" in fn:
        sampler = [a + b for a, b in zip(sampler, v)]
e = dict(zip(events, sampler))
print(f"cachegrind K={sys.argv[2]} per token in the sampler: instructions {e['Ir']/tokens:.0f}, "
      f"D1 misses {(e['D1mr']+e['D1mw'])/tokens:.2f}, LL misses {(e['DLmr']+e['DLmw'])/tokens:.3f}, "
      f"branches {(e['Bc'])/tokens:.1f}, mispredicted {(e['Bcm']+e['Bim'])/tokens:.2f}")
PY
  done
fi
