#!/usr/bin/env bash
# parasol lda against the strongest single-machine peers, tomotopy (LDAModel, its collapsed Gibbs
# sampler with its SIMD kernels) and gensim (LdaMulticore, online variational Bayes), installed from
# PyPI, pinned, in this benchmark's own environment, and WarpLDA (built from ../shared/anchors, as
# lda_bench.sh builds it; its own default of one MH step; it takes no seed, so it runs for the first
# seed only). One thread each (THREADS: more); the same tokens (`parasol
# lda-corpus` writes the corpus, the first TEST_DOCS documents held out), alpha 50/K, beta 0.01,
# no hyperparameter optimisation. Quality by one yardstick: the held-out perplexity by document
# completion, computed by parasol (`lda-infer --perplexity`, 20 fold-in sweeps) from each system's
# model exported in parasol's format after every stage (parasol's own by `--test`, the same code),
# against the system's training seconds. Per corpus, K and seed (REPEAT seeds) the systems run in
# turn. Writes lda_peers_runs.csv, prints the table and draws lda_peers.png.
# Usage: lda_peers_bench.sh BUILD_DIR OUT_DIR
# Environment: CORPORA ("ap news"; "synth" adds a corpus of SYNTH_TOKENS, 20 M, drawn from the LDA
# model by lda_synthetic.py, where every system does fewer sweeps: parasol SYNTH_ITERATIONS, 80),
# AP_KS ("100 1000 10000"), NEWS_KS ("100 1000"), SYNTH_KS ("100 1000"), GENSIM_KS ("100": its cost
# per token grows with K, a pass at K = 1,000 takes minutes), REPEAT (2).
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
env="$out/lda_peers_venv"
if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c 'import tomotopy, gensim, matplotlib' 2>/dev/null; then
  "$bench_python" -m venv "$env"
  "$env/bin/pip" install --disable-pip-version-check -q tomotopy==0.14.0 gensim==4.4.0 numpy==2.4.6 \
    scipy==1.17.1 matplotlib==3.11.2
fi
data="$out/lda_peers_data"
mkdir -p "$data"
warp="$build/warplda"
[ -x "$warp/warplda" ] || bash "$root/../shared/anchors/warplda/build.sh" "$warp" > "$out/warplda_build.log" 2>&1
source_of() {
  case $1 in
    ap) echo "$root/data/ap/ap.dat" ;;
    news) echo "$root/../shared/data/20newsgroups/20news-bydate-train.tar.gz" ;;
    synth) echo "$data/synth.src.lines" ;;
  esac
}
test_docs_of() { case $1 in ap) echo 300 ;; *) echo 1000 ;; esac; }
# The tokens every system reads: the corpus as parasol tokenises it, split, and each half written
# again as parasol reads it back (so that no system sees a word another drops).
prepare() {
  local name=$1 n
  [ -s "$data/$name.test.lines" ] && return
  n=$(test_docs_of "$name")
  if [ "$name" = synth ]; then
    "$env/bin/python" "$here/lda_synthetic.py" "$(source_of synth)" "${SYNTH_TOKENS:-20000000}" > /dev/null
  fi
  "$parasol" lda-corpus --corpus "$(source_of "$name")" --output "$data/$name.all" > /dev/null 2>&1
  head -n "$n" "$data/$name.all" > "$data/$name.test0"
  tail -n +"$((n + 1))" "$data/$name.all" > "$data/$name.train0"
  "$parasol" lda-corpus --corpus "$data/$name.train0" --min-count 1 --output "$data/$name.train.lines" > /dev/null 2>&1
  "$parasol" lda-corpus --corpus "$data/$name.test0" --min-count 1 --output "$data/$name.test.lines" > /dev/null 2>&1
}
# THREADS (1): every system's training threads (parasol --threads, tomotopy's and gensim's workers,
# WarpLDA's OpenMP threads); with more than one the files are named lda_peers_tN_*.
threads=${THREADS:-1}
export PEERS_THREADS=$threads
tag=lda_peers
[ "$threads" -gt 1 ] && tag=lda_peers_t$threads
runs="$out/${tag}_runs.csv"
echo "corpus,system,k,seed,work,train_seconds,perplexity" > "$runs"
echo "# $(date -u) $(uptime); $threads thread(s) a system" | tee "$out/${tag}_machine.txt"
for name in ${CORPORA:-ap news}; do
  prepare "$name"
  train="$data/$name.train.lines" test="$data/$name.test.lines"
  ks=${AP_KS:-100 1000 10000}
  [ "$name" = news ] && ks=${NEWS_KS:-100 1000}
  [ "$name" = synth ] && ks=${SYNTH_KS:-100 1000}
  iterations=600 eval_every=25
  [ "$name" = synth ] && iterations=${SYNTH_ITERATIONS:-80} eval_every=10
  for k in $ks; do
    # Stages: tomotopy's sweeps per stage (fewer at K = 1,000, where each costs K-fold more).
    tomo_stages=25,25,50,100 gensim_stages=1,2,4
    [ "$k" -ge 1000 ] && tomo_stages=25,25,50
    [ "$k" -ge 10000 ] && tomo_stages=10,15
    [ "$name" = news ] && gensim_stages=1,2
    warp_stages=50,50,100,200  # iterations; each stage a fresh run of all so far (no resume)
    if [ "$name" = synth ]; then  # 15-60x the tokens of the others: fewer sweeps
      tomo_stages=10,10,20 warp_stages=10,10,20,40
      [ "$k" -ge 1000 ] && tomo_stages=5,5
    fi
    for seed in $(seq 1 "$repeat"); do
      "$parasol" lda --corpus "$train" --min-count 1 --topics "$k" --iterations "$iterations" --threads "$threads" \
        --seed "$seed" --eval-every "$eval_every" --test "$test" --coherence-words 0 --metrics "$data/p.csv" > /dev/null
      awk -F, -v c="$name" -v k="$k" -v s="$seed" 'NR > 1 && $5 != "" { print c ",parasol," k "," s "," $1 "," $2 "," $5 }' \
        "$data/p.csv" >> "$runs"
      "$env/bin/python" "$here/lda_peers.py" tomotopy "$train" "$test" "$k" "$seed" "$tomo_stages" "$data/models" \
        "$parasol" | sed "s/^/$name,/" >> "$runs"
      if [[ " ${GENSIM_KS:-100} " == *" $k "* ]]; then
        "$env/bin/python" "$here/lda_peers.py" gensim "$train" "$test" "$k" "$seed" "$gensim_stages" "$data/models" \
          "$parasol" | sed "s/^/$name,/" >> "$runs"
      fi
      if [ "$seed" = 1 ]; then
        "$env/bin/python" "$here/lda_peers.py" warplda "$train" "$test" "$k" "$seed" "$warp_stages" "$data/models" \
          "$parasol" "$warp" | sed "s/^/$name,/" >> "$runs"
      fi
      rm -rf "$data/models"
    done
  done
done
echo "# end: $(uptime)" | tee -a "$out/${tag}_machine.txt"
"$env/bin/python" "$here/summarize_lda_peers.py" "$runs" "$data" "$out/$tag.png" "$threads"
