#!/usr/bin/env bash
# A million topics: `parasol lda` at K = 1,000 and K = 1,000,000 on 20 Newsgroups (train) and on a
# corpus of SYNTH_TOKENS (200 M) tokens drawn from the LDA model (bench/lda_synthetic.py), one
# thread, a few iterations each: peak memory of the process, the tokens' and word-topic table's
# bytes as parasol reports them, the median tokens/s after the first iteration, the log-likelihood
# per token at the end. Usage: lda_million_bench.sh BUILD_DIR OUT_DIR
# Environment: CORPORA ("news synth"), KS ("1000 1000000"), SYNTH_TOKENS (200000000), THREADS (1).
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
data="$out/lda_million_data"
mkdir -p "$data"
runs="$out/lda_million_runs.csv"
echo "corpus,k,tokens,peak_rss_mb,token_mb,table_mb,tokens_per_sec,loglik_per_token" > "$runs"
echo "# $(date -u) $(uptime)" | tee "$out/lda_million_machine.txt"
for name in ${CORPORA:-news synth}; do
  case $name in
    news) src="$root/../shared/data/20newsgroups/20news-bydate-train.tar.gz" iterations=20 ;;
    synth)
      src="$data/synth.lines" iterations=3
      if [ ! -s "$src" ]; then "$bench_python" "$here/lda_synthetic.py" "$src" "${SYNTH_TOKENS:-200000000}" > /dev/null; fi
      ;;
  esac
  for k in ${KS:-1000 1000000}; do
    log="$data/$name.k$k"
    /usr/bin/time -f "%M" -o "$log.rss" "$parasol" lda --corpus "$src" --topics "$k" --iterations "$iterations" \
      --threads "${THREADS:-1}" --eval-every 0 --coherence-words 0 --metrics "$log.csv" > "$log.out" 2>&1
    "$bench_python" - "$name" "$k" "$log" >> "$runs" <<'PY'
import csv, re, statistics, sys
name, k, log = sys.argv[1:]
rows = list(csv.DictReader(open(f"{log}.csv")))
out = open(f"{log}.out").read()
tokens = re.search(r"documents, \d+ words, (\d+) tokens", out).group(1)
mem = re.search(r"# memory: tokens ([0-9.]+) MB.*word-topic table ([0-9.]+) MB", out)
rss = int(open(f"{log}.rss").read().split()[-1]) / 1024
rate = statistics.median(float(r["tokens_per_sec"]) for r in rows[1:])
print(f"{name},{k},{tokens},{rss:.0f},{mem.group(1)},{mem.group(2)},{rate:.4g},{rows[-1]['loglik_per_token']}")
PY
    tail -1 "$runs"
  done
done
echo "# end: $(uptime)" | tee -a "$out/lda_million_machine.txt"
