#!/usr/bin/env bash
# `parasol mtrl` as users meet it: on 20 schools it beats fixed relationships on held-out students,
# 1 and 2 processes reach the same objective, a resumed run ends where the whole run ends, the
# model and relationships files are written; bad input is one line (exit 2).
# Usage: mtrl_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"
objective() { grep '^final:' "$1" | sed 's/.*objective \([^,]*\),.*/\1/'; }
ev() { grep '^final:' "$1" | sed 's/.*explained variance \([^,]*\),.*/\1/'; }

schools="$data/school/school-20.csv"
run=(mtrl --data "$schools" --split 0.7 --lambda2 0.1 --epsilon 1e-3 --tolerance 1e-9 --iterations 2000)
runs "$tmp/one.txt" "mtrl, 1 process" "$parasol" "${run[@]}" --metrics "$tmp/m.csv" --model "$tmp/model.csv" \
  --relationships "$tmp/rel.csv"
runs "$tmp/two.txt" "mtrl under mpirun" "$mpirun" -np 2 "$parasol" "${run[@]}"
a=$(objective "$tmp/one.txt"); b=$(objective "$tmp/two.txt")
label="1 and 2 processes converge to the same objective ($a, $b)"
check grep -q "^final: converged" "$tmp/two.txt" && close "$a" "$b" 1e-6
"$parasol" "${run[@]}" --fixed-covariance > "$tmp/fixed.txt" 2> "$tmp/err" || cat "$tmp/err"
label="learned relationships explain more of the held-out students than none ($(ev "$tmp/one.txt") > $(ev "$tmp/fixed.txt"))"
check awk -v a="$(ev "$tmp/one.txt")" -v b="$(ev "$tmp/fixed.txt")" 'BEGIN { exit !(a != "" && b != "" && a > b) }'
label="metrics: a header and one row per iteration; model: one row per school; relationships 20 x 20 with ones"
check [ "$(head -1 "$tmp/m.csv")" = \
  "iteration,rounds,seconds,objective,duality_gap,train_mse,test_explained_variance,bytes_sent" ] &&
  [ "$(wc -l < "$tmp/m.csv")" -ge 3 ] && [ "$(wc -l < "$tmp/model.csv")" -eq 21 ] &&
  [ "$(head -1 "$tmp/model.csv" | cut -d, -f1-3)" = "task,intercept,x1" ] &&
  [ "$(wc -l < "$tmp/rel.csv")" -eq 21 ] && [ "$(sed -n 2p "$tmp/rel.csv" | cut -d, -f2)" = "1.000000" ]

# The model file predicts in the data's units: its prediction for the first student of school 1
# matches what the training run saw (a score of about the data's scale, not of standardised units).
label="the model file's intercept is in exam-score units (10 to 40)"
check awk -F, 'NR == 2 { exit !($2 > 10 && $2 < 40) }' "$tmp/model.csv"

short=(mtrl --data "$schools" --split 0.7 --tolerance 0)
"$mpirun" -np 2 "$parasol" "${short[@]}" --iterations 6 > "$tmp/whole.txt" 2> "$tmp/err" || cat "$tmp/err"
runs /dev/null "--checkpoint" "$mpirun" -np 2 "$parasol" "${short[@]}" --iterations 3 --checkpoint "$tmp/ckpt"
runs "$tmp/resumed.txt" "--resume" "$mpirun" -np 2 "$parasol" "${short[@]}" --iterations 6 \
  --resume "$tmp/ckpt"
a=$(objective "$tmp/whole.txt"); b=$(objective "$tmp/resumed.txt")
label="a run resumed from iteration 3's checkpoint ends at the uninterrupted run's objective ($a, $b)"
check close "$a" "$b" 1e-7

printf 'task,y,x1\n1,2,3\n1,4,oops\n' > "$tmp/bad.csv"
expect 2 "bad.csv:3: column 3 'oops' is not a finite number" -- "$parasol" mtrl --data "$tmp/bad.csv"
printf 'school,y,x1\n1,2,3\n' > "$tmp/nocol.csv"
expect 2 "nocol.csv:1: no column named 'task'" -- "$parasol" mtrl --data "$tmp/nocol.csv"
head -2 "$schools" > "$tmp/test.csv" && sed -n 2p "$schools" | sed 's/^[0-9]*,/77,/' >> "$tmp/test.csv"
expect 2 "test.csv: task 77 has no training samples" -- "$parasol" mtrl --data "$schools" --test "$tmp/test.csv"
expect 2 "give --test or --split, not both" -- "$parasol" mtrl --data "$schools" --test "$tmp/test.csv" --split 0.5
expect 2 "--lambda1 and --lambda2 cannot both be 0" -- "$parasol" mtrl --data "$schools" --lambda1 0 --lambda2 0
expect 2 "--lambda2: 'nan' is not a finite number" -- "$parasol" mtrl --data "$schools" --lambda2 nan
expect 2 "a checkpoint of 20 tasks" -- "$parasol" mtrl --data "$tmp/test.csv" --resume "$tmp/ckpt"

finish
