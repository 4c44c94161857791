#!/usr/bin/env bash
# `parasol svm` and `parasol svm-predict` beside LIBSVM's svm-train and svm-predict (Debian
# libsvm-tools): the same dual objective, support vectors and predictions for each kernel and for
# 26 classes (one against one); each
# reads the other's model files; one process and two under mpirun give the same model and
# accuracy; a killed run resumed from its checkpoint gives the uninterrupted run's model; bad input
# is one line naming file and line (exit 2).
# Usage: svm_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"
train="$data/libsvm/a9a-2000"

command -v svm-train > /dev/null || { echo "FAIL: svm-train (Debian libsvm-tools) is not installed"; exit 1; }

# The value of KEY in "KEY = VALUE" on a line of FILE (svm-train's "obj = -716.86, rho = 0.57").
field() { grep -o "$2 = [^ ,]*" "$1" | head -1 | awk '{print $3}'; }
close() { awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a;
                                                       exit !(a != "" && d <= tol * (m > 1 ? m : 1)) }'; }

# Kernel by kernel, the same problem on both sides (LIBSVM's -t 0 linear, 1 polynomial, 2 rbf).
cases=("rbf|--kernel rbf --gamma 0.05 --c 1|-t 2 -g 0.05 -c 1"
       "linear|--kernel linear --c 0.5|-t 0 -c 0.5"
       "poly|--kernel poly --degree 2 --gamma 0.1 --coef0 1 --c 2|-t 1 -d 2 -g 0.1 -r 1 -c 2"
       "rbf-lazy|--kernel rbf --gamma 0.2 --c 4 --elimination lazy|-t 2 -g 0.2 -c 4")
for c in "${cases[@]}"; do
  IFS='|' read -r name ours theirs <<< "$c"
  # shellcheck disable=SC2086
  svm-train $theirs "$train" "$tmp/$name.libsvm.model" > "$tmp/$name.libsvm.txt"
  # shellcheck disable=SC2086
  "$parasol" svm --data "$train" $ours --model "$tmp/$name.model" > "$tmp/$name.txt" 2> "$tmp/err" ||
    { echo "FAIL: parasol svm $ours"; cat "$tmp/err"; failures=$((failures + 1)); continue; }
  obj_l=$(field "$tmp/$name.libsvm.txt" obj); obj_p=$(field "$tmp/$name.txt" obj)
  sv_l=$(field "$tmp/$name.libsvm.txt" nSV); sv_p=$(field "$tmp/$name.txt" nSV)
  label="$name: dual objective $obj_p, svm-train $obj_l (1e-5 relative)"; check close "$obj_p" "$obj_l" 1e-5
  label="$name: $sv_p support vectors, svm-train $sv_l (within 1%)"; check close "$sv_p" "$sv_l" 0.01
  # Each side predicts with the other's model: the same labels as with its own.
  svm-predict "$train" "$tmp/$name.model" "$tmp/$name.pred.libsvm" > /dev/null
  "$parasol" svm-predict "$train" "$tmp/$name.libsvm.model" "$tmp/$name.pred.parasol" > /dev/null 2>&1
  svm-predict "$train" "$tmp/$name.libsvm.model" "$tmp/$name.pred.ref" > /dev/null
  differ=$(paste "$tmp/$name.pred.libsvm" "$tmp/$name.pred.ref" | awk '$1 != $2' | wc -l)
  label="$name: svm-predict with parasol's model differs from svm-train's on $differ of 2000 (at most 5)"
  check [ "$differ" -le 5 ]
  label="$name: parasol svm-predict with svm-train's model gives svm-predict's labels"
  check cmp -s "$tmp/$name.pred.parasol" "$tmp/$name.pred.ref"
done

# 26 classes, one machine per pair (325), as LIBSVM: the same support vectors and votes.
letter="$data/libsvm/letter-1000"
svm-train -c 4 -g 0.5 "$letter" "$tmp/letter.libsvm.model" > "$tmp/letter.libsvm.txt"
runs "$tmp/letter.txt" "parasol svm on letter" "$parasol" svm --data "$letter" --c 4 --gamma 0.5 \
  --model "$tmp/letter.model"
sv_l=$(grep -o 'Total nSV = [0-9]*' "$tmp/letter.libsvm.txt" | awk '{print $4}')
sv_p=$(grep -o 'Total nSV = [0-9]*' "$tmp/letter.txt" | awk '{print $4}')
label="letter, 26 classes: $sv_p support vectors, svm-train $sv_l (within 1%)"; check close "$sv_p" "$sv_l" 0.01
label="letter: 325 pairs, one line each"; check [ "$(grep -c 'optimization finished' "$tmp/letter.txt")" -eq 325 ]
svm-predict "$letter" "$tmp/letter.model" "$tmp/letter.pred.libsvm" > /dev/null
svm-predict "$letter" "$tmp/letter.libsvm.model" "$tmp/letter.pred.ref" > /dev/null
"$parasol" svm-predict "$letter" "$tmp/letter.libsvm.model" "$tmp/letter.pred.parasol" > /dev/null 2>&1
differ=$(paste "$tmp/letter.pred.libsvm" "$tmp/letter.pred.ref" | awk '$1 != $2' | wc -l)
label="letter: svm-predict with parasol's model differs from svm-train's on $differ of 1000 (at most 3)"
check [ "$differ" -le 3 ]
label="letter: parasol svm-predict with svm-train's model gives svm-predict's labels"
check cmp -s "$tmp/letter.pred.parasol" "$tmp/letter.pred.ref"

run=(svm --data "$train" --gamma 0.05 --c 1 --elimination earliest --progress-every 100)
runs "$tmp/one.txt" "svm" "$parasol" "${run[@]}" --model "$tmp/one.model" --metrics "$tmp/one.csv"
runs "$tmp/two.txt" "svm under mpirun" "$mpirun" -np 2 "$parasol" "${run[@]}" --model "$tmp/two.model"
label="1 and 2 processes write the same model (SV coefficients bit for bit, rho to 1e-12)"
check cmp -s <(grep -v '^rho' "$tmp/one.model") <(grep -v '^rho' "$tmp/two.model") &&
  close "$(grep '^rho' "$tmp/one.model" | cut -d' ' -f2)" "$(grep '^rho' "$tmp/two.model" | cut -d' ' -f2)" 1e-12
label="metrics: a header and a row per 100 iterations, ending at the last"
check [ "$(head -1 "$tmp/one.csv")" = "pair,iteration,seconds,violation,active,support_vectors" ] &&
  [ "$(tail -1 "$tmp/one.csv" | cut -d, -f2)" = "$(grep -o 'finished: [0-9]*' "$tmp/one.txt" | awk '{print $2}')" ]

# --test under mpirun: each process predicts a block of the rows; the accuracy is one process's.
"$parasol" svm --data "$train" --gamma 0.05 --test "$train" > "$tmp/acc1.txt" 2>&1
"$mpirun" -np 2 "$parasol" svm --data "$train" --gamma 0.05 --test "$train" > "$tmp/acc2.txt" 2>&1
label="--test on 2 processes prints one process's accuracy: $(grep Accuracy "$tmp/acc2.txt")"
check [ "$(grep -c '^Accuracy' "$tmp/acc2.txt")" -eq 1 ] &&
  [ "$(grep '^Accuracy' "$tmp/acc1.txt")" = "$(grep '^Accuracy' "$tmp/acc2.txt")" ]

# Checkpoints: a 26-class run killed after some machines and resumed (on 2 processes) writes the
# model of the uninterrupted run, bit for bit (the machines not done are solved from the start).
"$parasol" svm --data "$letter" --c 4 --gamma 0.5 --checkpoint "$tmp/ck" > "$tmp/ck.txt" 2>&1 &
pid=$!
for _ in $(seq 1500); do
  done_pairs=$(awk '$1 == "pairs_done" { print $2 }' "$tmp/ck/svm.txt" 2>/dev/null)
  [ "${done_pairs:-0}" -ge 40 ] && break; sleep 0.02
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
done_pairs=$(awk '$1 == "pairs_done" { print $2 }' "$tmp/ck/svm.txt")
runs "$tmp/resumed.txt" "svm --resume" "$mpirun" -np 2 "$parasol" svm --data "$letter" --c 4 --gamma 0.5 \
  --resume "$tmp/ck" --model "$tmp/resumed.model"
label="killed after $done_pairs of 325 machines, resumed: the same model as without a stop"
check [ "$done_pairs" -lt 325 ] && [ "$(grep -c 'from the checkpoint' "$tmp/resumed.txt")" -eq "$done_pairs" ] &&
  cmp -s "$tmp/resumed.model" "$tmp/letter.model"
expect 2 "a checkpoint of another problem: it was trained with C 4; this run has 1" -- \
  "$parasol" svm --data "$letter" --gamma 0.5 --resume "$tmp/ck"
expect 2 "svm.txt: cannot open" -- "$parasol" svm --data "$letter" --resume "$tmp/no-such"
expect 2 "--checkpoint-every needs --checkpoint" -- "$parasol" svm --data "$letter" --checkpoint-every 10

printf '1 1:1\n1 2:1\n' > "$tmp/one-class.svm"
expect 2 "$tmp/one-class.svm: every label is 1: two classes at least are needed" -- \
  "$parasol" svm --data "$tmp/one-class.svm"
printf '1 2:1 1:1\n' > "$tmp/bad.svm"
expect 2 "$tmp/bad.svm:1:" -- "$parasol" svm --data "$tmp/bad.svm"
expect 2 "unknown kernel 'gauss'" -- "$parasol" svm --data "$train" --kernel gauss
expect 2 "unknown elimination 'soon'" -- "$parasol" svm --data "$train" --elimination soon
expect 2 "--c: 'nan' is not a finite number" -- "$parasol" svm --data "$train" --c nan
expect 2 "--model $tmp/no/dir/m: no folder" -- "$parasol" svm --data "$train" --model "$tmp/no/dir/m"
sed 's/^total_sv .*/total_sv 5/' "$tmp/one.model" > "$tmp/short.model"
expect 2 "$tmp/short.model:" -- "$parasol" svm-predict "$train" "$tmp/short.model" "$tmp/out.txt"
label="a failed svm-predict leaves no output file"; check [ ! -e "$tmp/out.txt" ]

finish
