#!/usr/bin/env bash
# Hyperparameter optimisation (`lda --optimize-interval`) against the fixed prior (alpha = 50/K,
# beta = 0.01) on AP: 1,946 training documents, the first 300 held out; K = 100, one thread, 300
# iterations, a fit every 20 after 50. Per seed, both runs back to back: training seconds, the
# median tokens/s of iterations after the first 60 without a fit (and of those with one), held-out
# perplexity by document completion and the mean coherences at the end. The MH sampler (`--sampler
# mh`), the one its figures were measured with.
# Usage: lda_optimize_bench.sh BUILD_DIR OUT_DIR   (SEEDS="1 2 3", K, ITERATIONS)
set -euo pipefail
build=$1 out=$2
parasol="$build/tools/parasol"
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data"
work="$out/lda_optimize"
mkdir -p "$work"
k=${K:-100} iterations=${ITERATIONS:-300}
"$parasol" lda-corpus --corpus "$data/ap/ap.dat" --output "$work/ap.lines" > /dev/null 2>&1
head -300 "$work/ap.lines" > "$work/test.lines"
tail -n +301 "$work/ap.lines" > "$work/train.lines"
echo "# lda --optimize-interval against the fixed prior: AP, K $k, $iterations iterations, one thread; $(uptime)"
for seed in ${SEEDS:-1 2 3}; do
  for interval in 0 20; do
    "$parasol" lda --corpus "$work/train.lines" --min-count 1 --topics "$k" --iterations "$iterations" --threads 1 \
      --sampler mh --eval-every 0 --seed "$seed" --optimize-interval "$interval" --optimize-burn-in 50 --test "$work/test.lines" \
      --metrics "$work/m.$seed.$interval.csv" > "$work/out.$seed.$interval" 2>&1
  done
done
python3 - "$work" ${SEEDS:-1 2 3} <<'PY'
import csv, statistics, sys
work, seeds = sys.argv[1], sys.argv[2:]
print("| seed | prior | training s | tokens/s, no fit | tokens/s, with a fit | held-out perplexity | UMass | NPMI |")
print("|---|---|---|---|---|---|---|---|")
for seed in seeds:
    for interval, name in (("0", "alpha 50/K, beta 0.01"), ("20", "fitted every 20")):
        rows = list(csv.DictReader(open(f"{work}/m.{seed}.{interval}.csv")))
        late = [r for r in rows if int(r["iteration"]) > 60]
        plain = [float(r["tokens_per_sec"]) for r in late if int(r["iteration"]) % 20 or interval == "0"]
        fit = [float(r["tokens_per_sec"]) for r in late if not int(r["iteration"]) % 20 and interval != "0"]
        last = rows[-1]
        print(f"| {seed} | {name} | {float(last['seconds']):.2f} | {statistics.median(plain) / 1e6:.1f} M | "
              f"{statistics.median(fit) / 1e6:.1f} M |" if fit else
              f"| {seed} | {name} | {float(last['seconds']):.2f} | {statistics.median(plain) / 1e6:.1f} M | - |",
              f" {float(last['test_perplexity']):.0f} | {float(last['umass']):.1f} | {float(last['npmi']):.3f} |")
PY
