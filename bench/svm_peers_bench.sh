#!/usr/bin/env bash
# parasol svm against the kernel SVMs a practitioner would pick instead (issue 45), side by side in
# one run on the same files: LIBSVM from PyPI (libsvm-official, its Python interface over the C
# library, built with OpenMP) and ThunderSVM's CPU build (thundersvm-cpu), installed pinned in the
# benchmark's own environment (OUT/svm_peers_venv). RBF kernel, tolerance 1e-3, a 100 MB kernel
# cache everywhere; C and gamma per case:
#   a9a     Adult (32,561 x 123; test a9a.t), C = 1, gamma = 0.05
#   letter  letter.scale, the first 15,000 rows to train, the last 5,000 to test (16 features, 26
#           classes: 325 one-against-one machines on both sides), C = 10, gamma = 1/16
#   gen     w8a's shape, generated (bench/svm_peers.py generate: 49,749 x 300, 12 binary features
#           set per row; 14,951 to test), C = 1, gamma = 0.05
# Per case, REPEAT times interleaved: LIBSVM on one thread (OMP_NUM_THREADS=1) and on two, parasol
# on one process and on two. ThunderSVM once per case on one thread, under a 16 GB address-space cap
# and a 120 s limit (it needs tens of GB on a9a: what happens is recorded). Yardsticks: the sum of
# the machines' dual objectives (LIBSVM's and parasol's), the support vectors and the test accuracy.
# Times: the solver's (parasol's own figure, summed over its machines; the peers' fit call, reading
# the files left out) and the whole command's (the process: starting, reading, training, writing or
# keeping the model; the peers' scripts also predict the test set, whose time they report and is
# taken off).
#
# Usage: svm_peers_bench.sh BUILD_DIR OUT_DIR      Environment: CASES ("a9a letter gen"), REPEAT (3)
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
shared="$root/../shared/data/libsvm"
env="$out/svm_peers_venv"
if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c 'import libsvm, thundersvm, sklearn, matplotlib' 2>/dev/null; then
  "$bench_python" -m venv "$env"
  "$env/bin/pip" install --disable-pip-version-check --no-cache-dir -q libsvm-official==3.37.0 \
    thundersvm-cpu==0.3.3 scikit-learn==1.9.1 numpy==2.4.6 scipy==1.17.1 matplotlib==3.11.2
fi
py="$env/bin/python"
export OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
data="$out/svm_peers_data"
mkdir -p "$data"
runs="$out/svm_peers_runs.csv"
echo "case,system,threads,run,solver_seconds,whole_seconds,objective,support_vectors,test_accuracy,status" > "$runs"
echo "# $(date -u) $(uptime)" > "$out/svm_peers_machine.txt"

# Sets train, test, c and gamma for a case.
prepare() {
  case $1 in
    a9a) train="$shared/a9a" test="$shared/a9a.t" c=1 gamma=0.05 ;;
    letter)
      head -15000 "$shared/letter.scale" > "$data/letter.train"
      tail -5000 "$shared/letter.scale" > "$data/letter.test"
      train="$data/letter.train" test="$data/letter.test" c=10 gamma=0.0625 ;;
    gen)
      [ -s "$data/gen.test" ] || "$py" "$here/svm_peers.py" generate "$data/gen"
      train="$data/gen.train" test="$data/gen.test" c=1 gamma=0.05 ;;
  esac
}

wall() { awk '/^wall/ {print $2}' "$1"; }

ours() {  # CASE NP RUN
  local log="$data/parasol.$1.$2" launch=()
  [ "$2" -gt 1 ] && launch=("$mpirun" -np "$2")
  /usr/bin/time -f "wall %e" -o "$log.time" "${launch[@]}" "$parasol" svm --data "$train" --c "$c" \
    --gamma "$gamma" --model "$log.model" > "$log.txt"
  local solver objective accuracy
  solver=$(grep -o '[0-9.]* s (eliminated' "$log.txt" | awk '{ s += $1 } END { printf "%.3f", s }')
  objective=$(grep -o 'obj = [-0-9.]*' "$log.txt" | awk '{ s += $3 } END { printf "%.6f", s }')
  accuracy=$("$parasol" svm-predict "$test" "$log.model" "$log.pred" | grep -o '([0-9]*/[0-9]*)' |
    tr -d '()' | awk -F/ '{ printf "%.6f", $1 / $2 }')
  echo "$1,parasol,$2,$3,$solver,$(wall "$log.time"),$objective,$(grep -o 'Total nSV = [0-9]*' "$log.txt" |
    awk '{print $4}'),$accuracy,ok" >> "$runs"
}

peer() {  # CASE SYSTEM THREADS RUN [LIMIT_S]
  local log="$data/$2.$1.$3" status=ok
  if ! (ulimit -v 16000000; OMP_NUM_THREADS=$3 /usr/bin/time -f "wall %e" -o "$log.time" \
        timeout "${5:-3600}" "$py" "$here/svm_peers.py" "$2" "$train" "$test" "$c" "$gamma" "$3" \
        > "$log.json" 2> "$log.err"); then
    status=$(grep -q "bad_alloc\|MemoryError" "$log.err" && echo "out of memory (16 GB cap)" ||
      echo "did not finish in ${5:-3600} s")
    echo "$1,$2,$3,$4,,,,,,$status" >> "$runs"
    return
  fi
  "$py" - "$log.json" "$1,$2,$3,$4" "$(wall "$log.time")" >> "$runs" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
obj = "" if j["objective"] is None else f'{j["objective"]:.6f}'
whole = float(sys.argv[3]) - j["predict_seconds"]
print(f'{sys.argv[2]},{j["solver_seconds"]:.3f},{whole:.3f},{obj},{j["support_vectors"]},'
      f'{j["test_accuracy"]:.6f},ok')
EOF
}

for case in ${CASES:-a9a letter gen}; do
  prepare "$case"
  echo "# $case: $(uptime)" >> "$out/svm_peers_machine.txt"
  for r in $(seq "$repeat"); do
    peer "$case" libsvm 1 "$r"
    ours "$case" 1 "$r"
    peer "$case" libsvm 2 "$r"
    ours "$case" 2 "$r"
  done
  peer "$case" thundersvm 1 1 120
done
echo "# end $(date -u) $(uptime)" >> "$out/svm_peers_machine.txt"

"$py" "$here/summarize_svm_peers.py" "$runs" "$out/svm_peers.png" | tee "$out/svm_peers_summary.txt"
