#!/usr/bin/env bash
# parasol lda against WarpLDA, side by side in one run: tokens/s, the ratio, log-likelihood at
# equal iterations and at equal time, peak memory; 1 and 2 threads; K = 100 ... 100,000; AP,
# 20 Newsgroups (train) and a 20M-token corpus drawn from the LDA model; then 1 process x 2
# threads against 2 processes x 1 thread, and 4 processes' log-likelihood against one's.
#
# Usage: lda_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (runs per configuration, default 3), CORPORA ("ap news synth"), KS
# ("100 1000 10000 100000"; the synthetic corpus stops at SYNTH_KS, "100 1000 10000"), THREADS ("1 2"),
# SYNTH_TOKENS (20000000).
#
# WarpLDA is built from ../shared/anchors/warplda (its build.sh installs Debian's gflags and
# libnuma); each corpus is written once by `parasol lda-corpus` (the tokens parasol trains on)
# and converted to WarpLDA's input. Both run one MH step per token (parasol's MH sampler, whatever
# K: this is the samplers' race), alpha 50/K, beta 0.01.
# Runs alternate (parasol, WarpLDA) within each repetition; ratios are taken within a repetition.
source "$(dirname "$0")/common.sh" "$@"
corpora=${CORPORA:-"ap news synth"}
ks=${KS:-"100 1000 10000 100000"}
threads=${THREADS:-"1 2"}
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
py=$bench_python  # Debian's: numpy and matplotlib come from Debian packages
warp="$build/warplda"
[ -x "$warp/warplda" ] || bash "$root/../shared/anchors/warplda/build.sh" "$warp" > "$out/warplda_build.log" 2>&1

data="$out/lda_data"
mkdir -p "$data"
# Corpus NAME: parasol's input, its lines file, WarpLDA's files (prefix), iterations per run.
source_of() {
  case $1 in
    ap) echo "$root/data/ap/ap.dat" ;;
    news) echo "$root/../shared/data/20newsgroups/20news-bydate-train.tar.gz" ;;
    synth) echo "$data/synth.lines" ;;
  esac
}
iterations_of() { case $1 in synth) echo "${SYNTH_ITERATIONS:-20}" ;; *) echo "${ITERATIONS:-100}" ;; esac; }
prepare() {
  local name=$1 src
  src=$(source_of "$name")
  if [ "$name" = synth ] && [ ! -s "$src" ]; then
    "$py" "$here/lda_synthetic.py" "$src" "${SYNTH_TOKENS:-20000000}" > /dev/null
  fi
  if [ ! -s "$data/$name.vocab" ]; then
    "$parasol" lda-corpus --corpus "$src" --output "$data/$name.lines" > /dev/null 2>&1
    awk -F'\t' 'NF == 2 && $2 != "" { print NR, NR, $2 }' "$data/$name.lines" > "$data/$name.yahoo"
    "$warp/format" -input "$data/$name.yahoo" -prefix "$data/$name" > /dev/null
    rm -f "$data/$name.yahoo"
  fi
}

runs="$out/lda_runs.csv"
echo "corpus,topics,threads,run,system,log,max_rss_kb" > "$runs"
echo "# machine at start: $(uptime)" | tee "$out/lda_machine.txt"
for name in $corpora; do
  prepare "$name"
  src=$(source_of "$name")
  n=$(iterations_of "$name")
  corpus_ks=$ks
  [ "$name" = synth ] && corpus_ks=${SYNTH_KS:-"100 1000 10000"}
  for k in $corpus_ks; do
    for t in $threads; do
      for r in $(seq 1 "$repeat"); do
        log="$out/lda_${name}_k${k}_t${t}_r${r}"
        /usr/bin/time -f "%M" -o "$out/rss.txt" "$parasol" lda --corpus "$src" --topics "$k" --iterations "$n" \
          --sampler mh --mh-steps 1 --threads "$t" --seed "$r" --eval-every 5 --metrics "$log.parasol.csv" > "$log.parasol.out" 2>&1
        echo "$name,$k,$t,$r,parasol,$log.parasol.csv,$(tail -1 "$out/rss.txt")" >> "$runs"
        OMP_NUM_THREADS=$t /usr/bin/time -f "%M" -o "$out/rss.txt" "$warp/warplda" --prefix "$data/$name" --k "$k" \
          --niter "$n" --mh 1 --alpha 50 --beta 0.01 --perplexity -1 --dumpmodel=false --dumpz=false \
          > "$log.warplda.out" 2>&1
        echo "$name,$k,$t,$r,warplda,$log.warplda.out,$(tail -1 "$out/rss.txt")" >> "$runs"
      done
    done
  done
done

# Processes against threads (20 Newsgroups, K = 1,000), and 4 processes' log-likelihood.
dist="$out/lda_dist_runs.csv"
echo "layout,run,log" > "$dist"
if [[ " $corpora " == *" news "* ]]; then
  src=$(source_of news)
  for r in $(seq 1 "$repeat"); do
    common=(lda --corpus "$src" --topics 1000 --iterations 100 --sampler mh --mh-steps 1 --seed "$r" --eval-every 20)
    "$parasol" "${common[@]}" --threads 2 --metrics "$out/lda_dist_1x2_r$r.csv" > /dev/null 2>&1
    echo "1x2,$r,$out/lda_dist_1x2_r$r.csv" >> "$dist"
    "$mpirun" -np 2 "$parasol" "${common[@]}" --threads 1 --metrics "$out/lda_dist_2x1_r$r.csv" > /dev/null 2>&1
    echo "2x1,$r,$out/lda_dist_2x1_r$r.csv" >> "$dist"
    "$parasol" "${common[@]}" --threads 1 --metrics "$out/lda_dist_1x1_r$r.csv" > /dev/null 2>&1
    echo "1x1,$r,$out/lda_dist_1x1_r$r.csv" >> "$dist"
    "$mpirun" -np 4 "$parasol" "${common[@]}" --threads 1 --metrics "$out/lda_dist_4x1_r$r.csv" > /dev/null 2>&1
    echo "4x1,$r,$out/lda_dist_4x1_r$r.csv" >> "$dist"
  done
fi
echo "# machine at end: $(uptime)" | tee -a "$out/lda_machine.txt"
"$py" "$here/summarize_lda.py" "$runs" "$dist" "$out" | tee "$out/lda_summary.txt"
