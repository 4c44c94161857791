#!/usr/bin/env bash
# parasol svm against LIBSVM's svm-train (Debian libsvm-tools, shrinking on, the same 100 MB
# kernel cache), side by side in one run on the same file: Adult a9a (32,561 x 123,
# ../shared/data/libsvm), RBF kernel, C = 1, gamma = 0.05, tolerance 1e-3 (both sides' default).
# Per repetition, alternating: svm-train; parasol on 1 process with standard elimination and with
# none; parasol on 2 processes. Once: svm-train without shrinking, parasol's earliest and lazy
# policies; and C = 10 (a longer tail of small steps, where elimination pays): svm-train, parasol
# with standard elimination and with none. Times are wall clock for both (reading the file and
# writing the model included); parasol's own solver time is kept too. Test accuracy on a9a.t from
# each side's model with its own predictor, outside the timed runs.
#
# Usage: svm_bench.sh BUILD_DIR OUT_DIR        Environment: REPEAT (3)
source "$(dirname "$0")/common.sh" "$@"
ensure_debian_packages libsvm-tools
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
train="$root/../shared/data/libsvm/a9a"
test="$root/../shared/data/libsvm/a9a.t"
[ -s "$train" ] || { echo "svm_bench: $train is missing" >&2; exit 1; }
data="$out/svm_data"
mkdir -p "$data"
runs="$out/svm_runs.csv"
echo "system,config,run,wall_seconds,solver_seconds,objective,support_vectors,iterations,accuracy" > "$runs"
echo "# $(date -u) $(uptime)" > "$out/svm_machine.txt"
export OMP_NUM_THREADS=1

# The value of KEY in "KEY = VALUE" (svm-train's and parasol's final lines share the form).
field() { grep -o "$2 = [^ ,]*" "$1" | head -1 | awk '{print $3}'; }
wall() { awk '/^wall/ {print $2}' "$1"; }

libsvm() {  # CONFIG RUN C ARGS...
  local config=$1 run=$2 c=$3 log="$data/libsvm.$1.$2"
  shift 3
  /usr/bin/time -f "wall %e" -o "$log.time" svm-train "$@" -c "$c" -g 0.05 "$train" "$log.model" > "$log.txt"
  local accuracy=""
  if [ "$run" -eq 1 ]; then
    accuracy=$(svm-predict "$test" "$log.model" "$log.pred" | grep -o '[0-9.]*%' | tr -d %)
  fi
  echo "libsvm,$config,$run,$(wall "$log.time"),,$(field "$log.txt" obj),$(field "$log.txt" nSV),$(grep -o '#iter = [0-9]*' "$log.txt" | awk '{print $3}'),$accuracy" >> "$runs"
}

ours() {  # CONFIG RUN NP C ARGS...
  local config=$1 run=$2 np=$3 c=$4 log="$data/parasol.$1.$2" launch=()
  shift 4
  [ "$np" -gt 1 ] && launch=("$mpirun" -np "$np")
  /usr/bin/time -f "wall %e" -o "$log.time" "${launch[@]}" "$parasol" svm --data "$train" --c "$c" --gamma 0.05 \
    --progress-every 250 --metrics "$log.csv" --model "$log.model" "$@" > "$log.txt"
  local accuracy="" solver
  if [ "$run" -eq 1 ]; then
    accuracy=$("$parasol" svm-predict "$test" "$log.model" "$log.pred" | grep -o '[0-9.]*%' | tr -d %)
  fi
  solver=$(grep -o 'nBSV = [0-9]*, [0-9.]* s' "$log.txt" | awk '{print $4}')
  echo "parasol,$config,$run,$(wall "$log.time"),$solver,$(field "$log.txt" obj),$(field "$log.txt" nSV),$(grep -o 'finished: [0-9]*' "$log.txt" | awk '{print $2}'),$accuracy" >> "$runs"
}

for r in $(seq 1 "$repeat"); do
  libsvm shrinking "$r" 1
  ours standard-1proc "$r" 1 1
  ours none-1proc "$r" 1 1 --elimination none
  ours standard-2proc "$r" 2 1
done
libsvm no-shrinking 1 1 -h 0
ours earliest-1proc 1 1 1 --elimination earliest
ours lazy-1proc 1 1 1 --elimination lazy
libsvm c10-shrinking 1 10
ours c10-standard-1proc 1 1 10
ours c10-none-1proc 1 1 10 --elimination none
ours c10-standard-2proc 1 2 10
echo "# end $(date -u) $(uptime)" >> "$out/svm_machine.txt"

"$bench_python" "$here/summarize_svm.py" "$out"
