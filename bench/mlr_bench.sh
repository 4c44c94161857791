#!/usr/bin/env bash
# parasol mlr on 20 Newsgroups (train 11,314 posts, test 7,532, 20 classes; tf-idf of the words
# parasol's tokeniser keeps, 25,243 features): sufficient-factor broadcasting against the
# parameter server (BSP) on 1, 2 and 4 processes (4 on 2 cores: oversubscribed), one thread each,
# and scikit-learn's LogisticRegression (multinomial, lbfgs, C = 1 / (n lambda): the same
# objective) on the same features, in one run. The global batch is 32 samples on any process
# count (32 / P per process), so every configuration takes the same steps per epoch. Each parasol configuration runs REPEAT times,
# alternating, repetition r with seed r (the samples' order); scikit-learn once per repetition.
#
# Usage: mlr_bench.sh BUILD_DIR OUT_DIR     Environment: REPEAT (3), EPOCHS (20), TARGET (0.78:
# the test accuracy time-to-accuracy is measured at)
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
news="$root/../shared/data/20newsgroups"
[ -s "$news/20news-bydate-train.tar.gz" ] || { echo "mlr_bench: $news is missing" >&2; exit 1; }
data="$out/mlr_data"
mkdir -p "$data"
epochs=${EPOCHS:-20}
lambda=8.84e-6  # scikit-learn's C = 1 / (11,314 x 8.84e-6) = 10
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
echo "# $(date -u) $(uptime)" > "$out/mlr_machine.txt"

# The tf-idf rows once, for scikit-learn and for parasol's timed runs alike.
"$parasol" mlr --corpus "$news/20news-bydate-train.tar.gz" --test-corpus "$news/20news-bydate-test.tar.gz" \
  --save-features "$data" --max-steps 1 --epochs 1 > "$data/features.txt"

runs="$out/mlr_runs.csv"
echo "system,comm,processes,run,seconds,final_accuracy,bytes_per_process,metrics" > "$runs"
for r in $(seq 1 "$repeat"); do
  for np in 1 2 4; do
    for comm in sfb ps; do
      log="$data/parasol.$comm.$np.$r"
      "$mpirun" -np "$np" "$parasol" mlr --data "$data/train.svm" --test "$data/test.svm" --comm "$comm" \
        --epochs "$epochs" --batch $((32 / np)) --lr 20 --lr-decay 0.5 --lambda "$lambda" --seed "$r" \
        --metrics "$log.csv" > "$log.txt"
      tail -1 "$log.csv" | awk -F, -v c="$comm" -v np="$np" -v r="$r" -v m="$log.csv" \
        '{ print "parasol," c "," np "," r "," $3 "," $5 "," $6 "," m }' >> "$runs"
    done
  done
  "$bench_python" - "$data" "$lambda" "$r" >> "$runs" <<'PY'
import sys, time
from sklearn.datasets import load_svmlight_files
from sklearn.linear_model import LogisticRegression
data, lam, run = sys.argv[1], float(sys.argv[2]), sys.argv[3]
Xtr, ytr, Xte, yte = load_svmlight_files([data + "/train.svm", data + "/test.svm"])
start = time.perf_counter()
m = LogisticRegression(C=1 / (Xtr.shape[0] * lam), max_iter=1000).fit(Xtr, ytr)
seconds = time.perf_counter() - start
print(f"sklearn,lbfgs,1,{run},{seconds:.3f},{(m.predict(Xte) == yte).mean():.6f},,")
PY
done
echo "# end $(date -u) $(uptime)" >> "$out/mlr_machine.txt"
"$bench_python" "$here/summarize_mlr.py" "$out" "${TARGET:-0.78}"
