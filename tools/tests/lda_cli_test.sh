#!/usr/bin/env bash
# `parasol lda` and `parasol lda-infer` as users meet them: malformed corpora get file:line and
# exit 2; a run writes complete outputs; resume equals a straight run; 2 and 4 processes under
# mpirun end within 1% of one process. Usage: lda_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"

printf 'a\nb\n' > "$tmp/vocab.txt"
printf '1 0:2\n2 1:1 0:x\n' > "$tmp/bad.dat"
expect 2 "$tmp/bad.dat:2: count 'x' is not a whole number" -- "$parasol" lda --corpus "$tmp/bad.dat" --iterations 1
printf '1 0:2\n1 5:1\n' > "$tmp/bad2.dat"
expect 2 "$tmp/bad2.dat:2: word id 5 not in the vocabulary of 2 words" -- "$parasol" lda --corpus "$tmp/bad2.dat" --iterations 1
expect 2 "no such file or folder" -- "$parasol" lda --corpus "$tmp/none.dat"
# A header that claims more documents than the file holds: an error at once, not an allocation.
mkdir -p "$tmp/uci"
printf 'a\nb\n' > "$tmp/uci/vocab.x.txt"
printf '999999999999\n2\n1\n1 1 1\n' > "$tmp/uci/docword.x.txt"
expect 2 "$tmp/uci/docword.x.txt:1: 999999999999 documents, more than a file of 23 bytes holds" -- \
  "$parasol" lda --corpus "$tmp/uci"
printf 'not an archive' > "$tmp/bad.tar.gz"
expect 2 "$tmp/bad.tar.gz: not a readable archive" -- "$parasol" lda --corpus "$tmp/bad.tar.gz"
expect 2 "--topics: 1 must be >= 2" -- "$parasol" lda --corpus "$data/ap/ap.dat" --topics 1
expect 2 "--sampler 'x': auto, mh or gibbs" -- "$parasol" lda --corpus "$data/ap/ap.dat" --sampler x
expect 2 "--sampler gibbs runs in one process" -- "$mpirun" -np 2 "$parasol" lda --corpus "$data/ap/ap.dat" --sampler gibbs
# --sampler auto: collapsed Gibbs at small K in one process; MH at large K, under mpirun, or when
# MH steps are asked for.
sampler_of() { "$parasol" lda --corpus "$data/ap/ap.dat" --iterations 1 --eval-every 0 --coherence-words 0 "$@" \
  2>/dev/null | grep -o "[a-z]* sampler" | head -1; }
[ "$(sampler_of --topics 100)" = "gibbs sampler" ] && [ "$(sampler_of --topics 300)" = "mh sampler" ] \
  && [ "$(sampler_of --topics 100 --mh-steps 4)" = "mh sampler" ] \
  && [ "$(sampler_of --topics 100 --sampler mh)" = "mh sampler" ] \
  && [ "$("$mpirun" -np 2 "$parasol" lda --corpus "$data/ap/ap.dat" --topics 100 --iterations 1 --eval-every 0 \
        --coherence-words 0 2>/dev/null | grep -o "[a-z]* sampler" | head -1)" = "mh sampler" ] \
  && echo "ok: --sampler auto" || fail "--sampler auto"
expect 2 "nomodel/vocab.txt: cannot open" -- "$parasol" lda-infer --corpus "$data/ap/ap.dat" --model "$tmp/nomodel"
printf 'the\nfoo bar\n' > "$tmp/stop.txt"
expect 2 "$tmp/stop.txt:2: more than one word on the line" -- "$parasol" lda --corpus "$data/ap/ap.dat" --stopwords "$tmp/stop.txt"
expect 2 "--blocks 3: must be a multiple of the 2 processes" -- "$mpirun" -np 2 "$parasol" lda --corpus "$data/ap/ap.dat" --blocks 3

# The lines format: lda-corpus writes AP as parasol reads it, every token; text read from lines
# (tokenised: AP's vocabulary also has stop words, which it drops) reads back the same.
"$parasol" lda-corpus --corpus "$data/ap/ap.dat" --output "$tmp/ap.lines" > "$tmp/out" 2>"$tmp/err" \
  && grep -q "2246 documents, 10473 words, 435838 tokens" "$tmp/out" \
  && [ "$(cut -f2 "$tmp/ap.lines" | wc -w)" -eq 435838 ] \
  && "$parasol" lda-corpus --corpus "$tmp/ap.lines" --output "$tmp/ap2.lines" > /dev/null 2>&1 \
  && "$parasol" lda-corpus --corpus "$tmp/ap2.lines" --output "$tmp/ap3.lines" > /dev/null 2>&1 \
  && cmp -s "$tmp/ap2.lines" "$tmp/ap3.lines" && echo "ok: lines format" || fail "lines format"
# Stop words from a file are gone from the vocabulary; unnamed lines are numbered.
printf 'stock market stock prices\nprices fell\n\nmarket rose\n' > "$tmp/small.lines"
printf '# finance\nStock\n' > "$tmp/stop.txt"
"$parasol" lda-corpus --corpus "$tmp/small.lines" --min-count 1 --stopwords "$tmp/stop.txt" --output "$tmp/small.out" \
  > /dev/null 2>"$tmp/err" && [ "$(cat "$tmp/small.out")" = "$(printf '1\tmarket prices\n2\tprices fell\n3\t\n4\tmarket rose')" ] \
  && grep -q "1 of 4 documents have no known word (the first: '3')" "$tmp/err" \
  && echo "ok: --stopwords, lines names, empty document warning" || { fail "--stopwords"; cat "$tmp/small.out" "$tmp/err"; }

# A run with outputs; its metrics CSV has one row per iteration, log-likelihood where evaluated.
common=(--corpus "$data/ap/ap.dat" --topics 20 --seed 3)
if "$parasol" lda "${common[@]}" --iterations 12 --eval-every 4 --threads 2 --metrics "$tmp/m.csv" --output "$tmp/model" --npy \
     --checkpoint "$tmp/ckpt" --checkpoint-every 6 > "$tmp/out" 2>&1; then
  python3 - "$tmp/m.csv" <<'PY' && echo "ok: metrics CSV" || fail "metrics CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["iteration", "seconds", "tokens_per_sec", "loglik_per_token", "umass", "npmi"]
assert [int(r["iteration"]) for r in rows] == list(range(1, 13))
assert all(r["umass"] == r["npmi"] == "" for r in rows[:-1]) and rows[-1]["umass"] and rows[-1]["npmi"]
ll = [float(r["loglik_per_token"]) for r in rows if r["loglik_per_token"]]
assert len(ll) == 3 and ll[0] < ll[-1] < -7, ll
assert all(float(r["tokens_per_sec"]) > 1e5 for r in rows)
PY
  for f in model.txt vocab.txt topics.txt doc_topics.txt; do [ -s "$tmp/model/$f" ] || fail "missing $f"; done
  [ "$(wc -l < "$tmp/model/topics.txt")" -eq 20 ] || fail "topics.txt lines"
  [ "$(wc -l < "$tmp/model/doc_topics.txt")" -eq 2246 ] || fail "doc_topics.txt lines"
  ls "$tmp/model" | grep -q '\.tmp$' && fail "temporary files left"
  grep -q "^topic  19" "$tmp/out" || fail "topics not printed"
  grep -Eq "^# whole command: reading the corpus [0-9.]+ s, setting up [0-9.]+ s, 12 iterations [0-9.]+ s \([0-9.]+ s of it training\), the end [0-9.]+ s, coherence [0-9.]+ s$" \
    "$tmp/out" && echo "ok: where the whole command's time went" || fail "whole command line"
  # Each topic's coherence in topics.txt, and their means in the metrics, against the formulas
  # computed here from the corpus's documents (coherence.h).
  python3 - "$tmp/model/topics.txt" "$tmp/ap.lines" "$tmp/m.csv" <<'PY' && echo "ok: coherence" || fail "coherence"
import csv, math, re, sys
docs = [set(line.rstrip("\n").split("\t")[1].split()) for line in open(sys.argv[2])]
n = len(docs)
def d(*ws): return sum(1 for doc in docs if all(w in doc for w in ws))
umass_all, npmi_all = [], []
for line in open(sys.argv[1]):
    m = re.match(r"topic +\d+ \(\d+ tokens, umass (\S+), npmi (\S+)\): (.*)", line)
    assert m, line
    words = m.group(3).split()
    umass = sum(math.log((d(words[i], words[j]) + 1) / d(words[j])) for i in range(1, len(words)) for j in range(i))
    def npmi(a, b):
        both = d(a, b)
        if both == 0: return -1.0
        if both == n: return 1.0
        p = both / n
        return math.log(p / (d(a) / n * d(b) / n)) / -math.log(p)
    pairs = [npmi(words[i], words[j]) for i in range(1, len(words)) for j in range(i)]
    got_u, got_n = float(m.group(1)), float(m.group(2))
    assert math.isclose(got_u, umass, rel_tol=1e-3), (line, umass)
    assert math.isclose(got_n, sum(pairs) / len(pairs), rel_tol=1e-3, abs_tol=1e-4), (line, sum(pairs) / len(pairs))
    umass_all.append(umass); npmi_all.append(sum(pairs) / len(pairs))
last = list(csv.DictReader(open(sys.argv[3])))[-1]
assert math.isclose(float(last["umass"]), sum(umass_all) / len(umass_all), rel_tol=1e-4), last
assert math.isclose(float(last["npmi"]), sum(npmi_all) / len(npmi_all), rel_tol=1e-4, abs_tol=1e-5), last
PY
else
  fail "lda run"; cat "$tmp/out"
fi

# --npy: the distributions as NumPy arrays, read back by NumPy, equal the model and doc_topics.txt.
"$data/../.venv/bin/python" - "$tmp/model" "$tmp/ap.lines" <<'PY' && echo "ok: --npy arrays" || fail "--npy arrays"
import sys, numpy as np
d, lines = sys.argv[1], sys.argv[2]
head = open(f"{d}/model.txt").readline().split()
k, v, alpha, beta = int(head[2]), int(head[3]), float(head[4]), float(head[5])
counts = np.zeros((k, v))
for line in open(f"{d}/model.txt").readlines()[1:]:
    word, *pairs = line.split()
    for p in pairs:
        t, c = p.split(":")
        counts[int(t), int(word)] = int(c)
phi = (counts + beta) / (counts.sum(1, keepdims=True) + v * beta)
tw = np.load(f"{d}/topic_word.npy")
assert tw.dtype == np.float32 and tw.shape == (k, v), (tw.dtype, tw.shape)
assert np.allclose(tw, phi, rtol=1e-5, atol=0), abs(tw - phi).max()
vocab = [w.strip() for w in open(f"{d}/vocab.txt")]
docs = [line.rstrip("\n").split("\t")[1].split() for line in open(lines)]
tf = np.zeros(v, dtype=np.int64)
index = {w: i for i, w in enumerate(vocab)}
for doc in docs:
    for w in doc: tf[index[w]] += 1
assert (np.load(f"{d}/term_frequency.npy") == tf).all()
assert (np.load(f"{d}/doc_lengths.npy") == [len(doc) for doc in docs]).all()
dt = np.load(f"{d}/doc_topic.npy")
assert dt.shape == (len(docs), k) and np.allclose(dt.sum(1), 1, atol=1e-5)
for i, line in enumerate(open(f"{d}/doc_topics.txt")):
    for p in line.split()[1:]:
        t, share = p.split(":")
        assert abs(dt[i, int(t)] - float(share)) <= 5.1e-5, (i, t, share, dt[i, int(t)])
PY
expect 2 "--npy writes into the --output folder" -- "$parasol" lda --corpus "$data/ap/ap.dat" --npy
# Under mpirun each rank writes its documents' rows, as with doc_topics.RANK.txt.
"$mpirun" -np 2 "$parasol" lda "${common[@]}" --iterations 2 --output "$tmp/npy2" --npy >/dev/null 2>&1 &&
  "$data/../.venv/bin/python" -c "
import numpy as np, sys
rows = [np.load(f'$tmp/npy2/doc_topic.{r}.npy') for r in (0, 1)]
lengths = np.concatenate([np.load(f'$tmp/npy2/doc_lengths.{r}.npy') for r in (0, 1)])
assert sum(len(x) for x in rows) == 2246 and lengths.sum() == 435838
assert np.load('$tmp/npy2/topic_word.npy').shape == (20, 10473)" && echo "ok: --npy under mpirun" ||
  fail "--npy under mpirun"

# Hyperparameter optimisation under mpirun: the fitted alpha and beta in the table, the metrics,
# topics.txt and a version 2 model, which lda-infer reads.
head -50 "$tmp/ap.lines" > "$tmp/opt.lines"
if "$mpirun" -np 2 "$parasol" lda "${common[@]}" --iterations 12 --optimize-interval 4 --optimize-burn-in 4 \
     --metrics "$tmp/opt.csv" --output "$tmp/opt" > "$tmp/out" 2>&1 &&
   grep -q "^# fitted hyperparameters: alpha sum .* (per topic .* to .*), beta " "$tmp/out" &&
   "$parasol" lda-infer --corpus "$tmp/opt.lines" --model "$tmp/opt" --iterations 4 --output "$tmp/opt.infer" \
     > /dev/null 2>&1; then
  "$data/../.venv/bin/python" - "$tmp/opt" "$tmp/opt.csv" "$tmp/opt.infer" <<'PY' && echo "ok: --optimize-interval" ||
import csv, sys
d, metrics, infer = sys.argv[1:]
head, alpha_line = open(f"{d}/model.txt").readlines()[:2]
assert head.split()[:2] == ["parasol-lda-model", "2"], head
alpha = [float(a) for a in alpha_line.split()[1:]]
assert alpha_line.startswith("alpha ") and len(alpha) == 20 and len(set(alpha)) > 10, alpha_line
rows = list(csv.DictReader(open(metrics)))
assert list(rows[0].keys())[4:6] == ["alpha_sum", "beta"], rows[0].keys()
sums = [float(r["alpha_sum"]) for r in rows]
assert sums[:7] == [50.0] * 7 and sums[7] != 50.0, sums  # the first fit: after burn-in, at a multiple of 4
assert abs(sums[-1] - sum(alpha)) < 1e-4 * sum(alpha), (sums[-1], sum(alpha))
topics = open(f"{d}/topics.txt").readlines()
assert all(f", alpha {float(t.split(', alpha ')[1].split(',')[0]):.4g}" in t for t in topics), topics[0]
lines = open(infer).readlines()
# Each proportion is printed to 4 decimals: 20 of them can sum to 1 + 20 x 0.00005.
assert len(lines) == 50 and all(0 < sum(float(p.split(":")[1]) for p in l.split()[1:]) <= 1.001 for l in lines)
PY
    fail "--optimize-interval"
else
  fail "lda --optimize-interval"; cat "$tmp/out"
fi
expect 2 "--optimize-interval: -1 must be >= 0" -- "$parasol" lda --corpus "$data/ap/ap.dat" --optimize-interval -1

# Choosing K: the sweep script's table (the last metrics row of each run) and its plot.
head -200 "$tmp/ap.lines" > "$tmp/sweep.test"
tail -n +201 "$tmp/ap.lines" > "$tmp/sweep.train"
"$data/../.venv/bin/python" "$data/../scripts/lda_sweep.py" --corpus "$tmp/sweep.train" --test "$tmp/sweep.test" \
  --topics 10,5 --iterations 3 --out "$tmp/sweep" --parasol "$parasol" > "$tmp/sweep.out" 2>&1 &&
  [ "$(head -1 "$tmp/sweep/sweep.csv")" = "topics,seconds,loglik_per_token,test_perplexity,umass,npmi" ] &&
  [ "$(cut -d, -f1 "$tmp/sweep/sweep.csv" | tail -n +2 | tr '\n' ' ')" = "5 10 " ] &&
  [ "$(tail -1 "$tmp/sweep/metrics_k10.csv" | cut -d, -f6,7)" = "$(tail -1 "$tmp/sweep/sweep.csv" | cut -d, -f5,6)" ] &&
  [ -s "$tmp/sweep/sweep.png" ] && echo "ok: lda_sweep.py" || { fail "lda_sweep.py"; cat "$tmp/sweep.out"; }

# Resume from iteration 6 reaches the same final state as the straight run.
"$parasol" lda "${common[@]}" --iterations 12 --eval-every 0 --threads 2 --resume "$tmp/ckpt" --output "$tmp/resumed" > /dev/null 2>&1 \
  || fail "resume run"
cmp -s "$tmp/model/doc_topics.txt" "$tmp/resumed/doc_topics.txt" && cmp -s "$tmp/model/model.txt" "$tmp/resumed/model.txt" \
  && echo "ok: resume equals a straight run" || fail "resume differs from the straight run"

# Held-out perplexity: during training (--test) and from lda-infer, by document completion.
head -200 "$tmp/ap.lines" > "$tmp/test.lines"
"$parasol" lda "${common[@]}" --iterations 10 --eval-every 5 --test "$tmp/test.lines" --metrics "$tmp/t.csv" > "$tmp/out" 2>&1 \
  && grep -q "test ppl" "$tmp/out" && [ "$(head -1 "$tmp/t.csv")" = "iteration,seconds,tokens_per_sec,loglik_per_token,test_perplexity,umass,npmi" ] \
  && [ -n "$(sed -n 11p "$tmp/t.csv" | cut -d, -f5)" ] && echo "ok: lda --test" || { fail "lda --test"; cat "$tmp/out"; }
"$parasol" lda-infer --corpus "$tmp/test.lines" --model "$tmp/model" --iterations 10 --perplexity --output "$tmp/infer.txt" \
  2> "$tmp/err" > /dev/null && grep -Eq "^held-out perplexity [0-9.]+ \(document completion" "$tmp/err" \
  && echo "ok: lda-infer --perplexity" || { fail "lda-infer --perplexity"; cat "$tmp/err"; }

# Folding in documents: every document gets proportions summing to about 1 over listed topics.
"$parasol" lda-infer --corpus "$data/ap/ap.dat" --model "$tmp/model" --iterations 10 --output "$tmp/infer.txt" > /dev/null 2>&1 \
  && [ "$(wc -l < "$tmp/infer.txt")" -eq 2246 ] && echo "ok: lda-infer" || fail "lda-infer"

# 2 and 4 processes (word blocks rotating around them) against one process, same iterations.
final() { tail -1 "$1" | awk -F, '{print $4}'; }
"$parasol" lda "${common[@]}" --iterations 100 --eval-every 0 --metrics "$tmp/one.csv" > /dev/null 2>&1 || fail "one process"
for np in 2 4; do
  "$mpirun" -np "$np" "$parasol" lda "${common[@]}" --iterations 100 --eval-every 0 --metrics "$tmp/np$np.csv" \
    --output "$tmp/np$np" > "$tmp/out" 2>&1 || { fail "mpirun -np $np"; cat "$tmp/out"; continue; }
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'   {sys.argv[3]} processes {b:.4f}, one {a:.4f}'); sys.exit(abs(a - b) > 0.01 * abs(a))" \
    "$(final "$tmp/one.csv")" "$(final "$tmp/np$np.csv")" "$np" && echo "ok: $np processes within 1%" || fail "$np processes not within 1%"
  [ "$(cat "$tmp/np$np"/doc_topics.*.txt | wc -l)" -eq 2246 ] || fail "np$np doc_topics"
done

finish
