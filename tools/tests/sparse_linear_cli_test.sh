#!/usr/bin/env bash
# `parasol lasso` and `parasol logreg` as users meet them: bad input is one line naming file and
# line (exit 2); one process and two under mpirun reach the same objective; the model and metrics
# files are complete. Usage: sparse_linear_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"

printf '1 1:0.5 3:1\n-1 3:1 2:4\n' > "$tmp/unordered.svm"
expect 2 "$tmp/unordered.svm:2: feature index 2 after 3: indices must be strictly ascending" -- \
  "$parasol" lasso --data "$tmp/unordered.svm" --lambda 0.1
printf 'a,b\n1,2\n' > "$tmp/nolabel.csv"
expect 2 "$tmp/nolabel.csv:1: no column named 'y' (the label) in the header" -- \
  "$parasol" lasso --data "$tmp/nolabel.csv" --lambda 0.1
expect 2 "unknown --scheduler 'fifo' (expected priority, random, cyclic or shuffled)" -- \
  "$parasol" lasso --data "$data/libsvm/housing_scale" --lambda 0.1 --scheduler fifo
expect 2 "give --lambda or --lambda-path" -- "$parasol" lasso --data "$data/libsvm/housing_scale"
expect 2 "--lambda: 'nan' is not a finite number" -- "$parasol" lasso --data "$data/libsvm/housing_scale" --lambda nan
expect 2 "--model $tmp/no/dir/m.txt: no folder" -- \
  "$parasol" lasso --data "$data/libsvm/housing_scale" --lambda 0.1 --model "$tmp/no/dir/m.txt"
# Sixteen correlated genes at once from one residual overshoot: the run says so and what to do.
expect 3 "diverged" -- "$parasol" lasso --data "$data/riboflavin/riboflavin-500.csv" --lambda 0.02 \
  --scheduler random --schedule-size 64 --dependency-threshold 1

expect 2 "$data/libsvm/housing_scale: logistic regression needs labels of two values; the data set has 229" -- \
  "$parasol" logreg --data "$data/libsvm/housing_scale" --lambda 0.01

final() { grep '^final:' "$1" | sed 's/.*objective \([^,]*\),.*/\1/'; }
run=(lasso --data "$data/riboflavin/riboflavin-500.csv" --lambda 0.05 --tolerance 1e-9 --schedule-size 8)
runs "$tmp/one.txt" "lasso" "$parasol" "${run[@]}" --model "$tmp/one.model" --metrics "$tmp/one.csv"
runs "$tmp/two.txt" "lasso under mpirun" "$mpirun" -np 2 "$parasol" "${run[@]}" --model "$tmp/two.model"
one=$(final "$tmp/one.txt")
two=$(final "$tmp/two.txt")
if [ -n "$one" ] && awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; exit !(d < 1e-9 * a && -d < 1e-9 * a) }'; then
  echo "ok: 1 and 2 processes reach the same objective ($one, $two)"
else
  echo "FAIL: 1 process $one, 2 processes $two"; failures=$((failures + 1))
fi
nonzeros=$(head -2 "$tmp/one.model" | tail -1 | awk '{print $6}')
if [ "$(head -1 "$tmp/one.csv")" = "lambda,round,updates,seconds,objective,nonzeros,gap,relative_gap" ] &&
   [ "$(tail -1 "$tmp/one.csv" | cut -d, -f6)" = "$nonzeros" ] &&
   [ "$(wc -l < "$tmp/one.model")" -eq $((nonzeros + 2)) ]; then
  echo "ok: metrics and model files ($nonzeros nonzeros)"
else
  echo "FAIL: metrics or model file"; head -3 "$tmp/one.csv" "$tmp/one.model"; failures=$((failures + 1))
fi

run=(logreg --data "$data/libsvm/a9a-2000" --lambda 0.003 --tolerance 1e-9)
runs "$tmp/lr1.txt" "logreg" "$parasol" "${run[@]}" --model "$tmp/lr1.model"
runs "$tmp/lr2.txt" "logreg under mpirun" "$mpirun" -np 2 "$parasol" "${run[@]}" --threads 2
one=$(final "$tmp/lr1.txt")
two=$(final "$tmp/lr2.txt")
if [ -n "$one" ] && awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; exit !(d < 1e-8 * a && -d < 1e-8 * a) }' &&
   head -1 "$tmp/lr1.model" | grep -q '^# parasol logreg model'; then
  echo "ok: logreg on 1 process and 2 x 2 threads reach the same objective ($one, $two)"
else
  echo "FAIL: logreg 1 process $one, 2 processes $two"; failures=$((failures + 1))
fi

finish
