#!/usr/bin/env bash
# parasol mlr (multiclass logistic regression, minibatch SGD with sufficient factors) against the
# solvers a practitioner would pick instead (issue 45), side by side in one run, on the same LIBSVM
# files and the same L2 weight: LIBLINEAR (PyPI's liblinear-official, -s 0 primal Newton and -s 7
# dual coordinate descent, both one class against the rest) and scikit-learn's LogisticRegression
# (multinomial, lbfgs: parasol's own objective), installed pinned in the benchmark's own
# environment (OUT/mlr_peers_venv); one thread each.
#   news20  20 Newsgroups "bydate" as tf-idf (11,314 x 25,243, 20 classes; parasol's tokeniser,
#           `parasol mlr --save-features`), lambda 8.84e-6 (C = 10), target 80.0% test accuracy
#   letter  letter.scale, the first 15,000 rows to train and the last 5,000 to test (LIBSVM's
#           split; 16 features, 26 classes), lambda 1e-5 (C = 6.67), target 77.0%
# Yardstick: the test accuracy, and the time to the target. parasol's time is its training
# seconds at the first epoch whose accuracy reaches the target (evaluations left out); a peer's is
# the fit of its loosest tolerance that reaches the target (a ladder of tolerances, each fitted
# once, first). Then REPEAT timed repetitions, the systems interleaved: parasol run for just
# those epochs, each peer at its chosen tolerance; the whole command's time is the process's
# (reading the files, starting Python or parasol, predicting the test set included). parasol on 2
# processes is timed too; none of the peers has a multi-threaded mode for these solvers.
# Seed 1 for parasol's sample order throughout (the epochs to the target depend on it).
# Usage: mlr_peers_bench.sh BUILD_DIR OUT_DIR      Environment: CASES ("news20 letter"), REPEAT (5)
source "$(dirname "$0")/common.sh" "$@"
repeat=${REPEAT:-5}
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
shared="$root/../shared/data"
env="$out/mlr_peers_venv"
if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c 'import liblinear, sklearn, matplotlib' 2>/dev/null; then
  "$bench_python" -m venv "$env"
  "$env/bin/pip" install --disable-pip-version-check -q liblinear-official==2.50.0 scikit-learn==1.9.1 \
    numpy==2.4.6 scipy==1.17.1 matplotlib==3.11.2
fi
py="$env/bin/python"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
data="$out/mlr_peers_data"
mkdir -p "$data"
runs="$out/mlr_peers_runs.csv"
echo "case,system,setting,phase,run,solver_seconds,whole_seconds,test_accuracy,metrics" > "$runs"
echo "# $(date -u) $(uptime)" > "$out/mlr_peers_machine.txt"

lambda_of() { case $1 in news20) echo 8.84e-6 ;; letter) echo 1e-5 ;; esac; }
target_of() { case $1 in news20) echo 0.800 ;; letter) echo 0.770 ;; esac; }
# parasol's schedule per case (global batch 32): the learning rate and its decay per epoch.
sgd_of() {
  case $1 in
    news20) echo "--lr 20 --lr-decay 0.5 --epochs 20" ;;
    letter) echo "--lr 8 --lr-decay 0.5 --epochs 25" ;;
  esac
}
ladder_of() {
  case $1 in
    liblinear-*) echo "100 30 10 3 1 0.3 0.1 0.01 0.001" ;;
    sklearn-*) echo "1e-2 3e-3 1e-3 3e-4 1e-4" ;;
  esac
}
peers="liblinear-s0 liblinear-s7 sklearn-lbfgs"

# Prepares $train and $test for a case; returns 1 when its data is missing.
prepare() {
  case $1 in
    news20)
      local news="$shared/20newsgroups"
      [ -s "$news/20news-bydate-train.tar.gz" ] || return 1
      if [ ! -s "$data/news20/train.svm" ]; then
        mkdir -p "$data/news20"
        "$parasol" mlr --corpus "$news/20news-bydate-train.tar.gz" --test-corpus "$news/20news-bydate-test.tar.gz" \
          --save-features "$data/news20" --max-steps 1 --epochs 1 > "$data/news20/features.txt"
      fi
      train="$data/news20/train.svm" test="$data/news20/test.svm" ;;
    letter)
      [ -s "$shared/libsvm/letter.scale" ] || return 1
      head -n 15000 "$shared/libsvm/letter.scale" > "$data/letter.train"
      tail -n 5000 "$shared/libsvm/letter.scale" > "$data/letter.test"
      train="$data/letter.train" test="$data/letter.test" ;;
  esac
}

# parasol CASE PROCESSES EPOCHS|- PHASE RUN: one run (all of the schedule's epochs with "-"), a row.
parasol_run() {
  local case=$1 np=$2 epochs=$3 phase=$4 run=$5 start end
  local log="$data/$case.parasol-$np.$phase.$run" args
  args=$(sgd_of "$case")
  [ "$epochs" = - ] || args="${args% --epochs *} --epochs $epochs"
  local launch=("$mpirun" -np "$np")
  [ "$np" -gt 1 ] || launch=()  # one process: the command as a user runs it, without mpirun
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "${launch[@]}" "$parasol" mlr --data "$train" --test "$test" --comm sfb --batch $((32 / np)) $args \
    --lambda "$(lambda_of "$case")" --seed 1 --metrics "$log.csv" > "$log.txt" < /dev/null  # mpirun reads stdin
  end=$(date +%s.%N)
  IFS=, read -r epoch _ seconds _ accuracy _ <<< "$(tail -1 "$log.csv")"
  echo "$case,parasol-$np,$epoch,$phase,$run,$seconds,$(echo "$end - $start" | bc),$accuracy,$log.csv" >> "$runs"
}

# peer CASE SYSTEM TOL PHASE RUN: one fit as its own process, a row.
peer_run() {
  local case=$1 system=$2 tol=$3 phase=$4 run=$5 start end line
  start=$(date +%s.%N)
  line=$("$py" "$here/mlr_peers.py" fit "$system" "$train" "$test" "$(lambda_of "$case")" "$tol" < /dev/null) || line=","
  end=$(date +%s.%N)
  echo "$case,$system,$tol,$phase,$run,${line%,*},$(echo "$end - $start" | bc),${line#*,}," >> "$runs"
}

for case in ${CASES:-news20 letter}; do
  prepare "$case" || { echo "mlr_peers_bench: the data of $case is missing under $shared: skipped" >&2; continue; }
  # The curves: parasol's whole schedule, each peer's ladder.
  for np in 1 2; do parasol_run "$case" "$np" - ladder 1; done
  for system in $peers; do
    for tol in $(ladder_of "$system"); do peer_run "$case" "$system" "$tol" ladder 1; done
  done
  # What reaches the target: parasol's epochs, each peer's loosest tolerance (none: not timed).
  chosen=$("$py" "$here/summarize_mlr_peers.py" "$out" --choose "$case" --target "$(target_of "$case")")
  for r in $(seq 1 "$repeat"); do
    while read -r system setting; do
      case $system in
        parasol-*) parasol_run "$case" "${system#parasol-}" "$setting" timed "$r" ;;
        *) peer_run "$case" "$system" "$setting" timed "$r" ;;
      esac
    done <<< "$chosen"
  done
done
echo "# end $(date -u) $(uptime)" >> "$out/mlr_peers_machine.txt"
"$py" "$here/summarize_mlr_peers.py" "$out" --targets "news20=$(target_of news20),letter=$(target_of letter)"
