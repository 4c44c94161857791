#!/usr/bin/env bash
# `parasol mlr` as users meet it: the parameter server under BSP and sufficient factors take the
# same steps on 2 processes; --comm auto picks by bytes; text folders become tf-idf classes; bad
# input is one line (exit 2). Usage: mlr_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"
loss() { grep '^final:' "$1" | sed 's/.*train loss \([^,]*\),.*/\1/'; }

letter="$data/libsvm/letter-1000"
run=(mlr --data "$letter" --test "$letter" --batch 16 --lr 1)
for c in sfb ps; do
  runs "$tmp/$c.txt" "mlr --comm $c under mpirun" "$mpirun" -np 2 "$parasol" "${run[@]}" --epochs 3 \
    --comm "$c" --metrics "$tmp/$c.csv"
done
a=$(loss "$tmp/sfb.txt"); b=$(loss "$tmp/ps.txt")
label="2 processes: sufficient factors and the parameter server under BSP end at the same loss ($a, $b)"
check awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-6 && -d < 1e-6) }'
label="metrics: a header and one row per epoch"
check [ "$(head -1 "$tmp/sfb.csv")" = "epoch,steps,seconds,train_loss,test_accuracy,bytes_sent" ] &&
  [ "$(wc -l < "$tmp/sfb.csv")" -eq 4 ]
runs /dev/null "--checkpoint" "$mpirun" -np 2 "$parasol" "${run[@]}" --comm ps --epochs 1 \
  --checkpoint "$tmp/ckpt"
runs "$tmp/resumed.txt" "--resume" "$mpirun" -np 2 "$parasol" "${run[@]}" --comm ps --epochs 3 \
  --resume "$tmp/ckpt"
c=$(loss "$tmp/resumed.txt")
label="a run resumed from epoch 1's checkpoint ends at the uninterrupted run's loss ($c, $b)"
check awk -v a="$c" -v b="$b" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-6 && -d < 1e-6) }'
expect 2 "a checkpoint of --comm ps; this run has --comm sfb" -- \
  "$parasol" "${run[@]}" --epochs 3 --comm sfb --resume "$tmp/ckpt"
"$mpirun" -np 2 "$parasol" mlr --data "$letter" --epochs 1 > "$tmp/auto.txt" 2>&1
label="--comm auto picks the parameter server for 26 classes of 16 dense features"
check grep -q -- "--comm ps" "$tmp/auto.txt"

# Three classes of text: folders name the classes.
for cls in apples boats cars; do
  mkdir -p "$tmp/text/$cls"
  for i in 1 2 3 4 5 6; do
    printf 'the %s story number %s about %s and more %s words\n' "$cls" "$i" "$cls" "$cls" > "$tmp/text/$cls/$i"
  done
done
runs "$tmp/text.txt" "mlr --corpus" "$parasol" mlr --corpus "$tmp/text" --min-count 2 --epochs 20 --lr 2 \
  --batch 3 --test-corpus "$tmp/text" --save-features "$tmp/features"
label="text folders: 18 documents in 3 classes, learnt (test accuracy 1), features saved"
check grep -q "18 documents, 3 classes" "$tmp/text.txt" && grep -q "test accuracy 1.0000" "$tmp/text.txt" &&
  [ "$(wc -l < "$tmp/features/train.svm")" -eq 18 ]

expect 2 "give --data or --corpus (one of them)" -- "$parasol" mlr
expect 2 "--consistency is for --comm ps" -- "$parasol" mlr --data "$letter" --comm sfb --consistency ssp:2
expect 2 "unknown --comm 'mpi'" -- "$parasol" mlr --data "$letter" --comm mpi
expect 2 "--lr: 'nan' is not a finite number" -- "$parasol" mlr --data "$letter" --lr nan
printf 'lonely words without a class folder\n' > "$tmp/loose.txt"
mkdir -p "$tmp/flat" && cp "$tmp/loose.txt" "$tmp/flat/a" && cp "$tmp/loose.txt" "$tmp/flat/b"
expect 2 "$tmp/flat: 'a' is not in a folder naming its class" -- "$parasol" mlr --corpus "$tmp/flat" --min-count 1
printf '1 1:1\n1 2:1\n' > "$tmp/one.svm"
expect 2 "$tmp/one.svm: multiclass logistic regression needs two classes at least" -- "$parasol" mlr --data "$tmp/one.svm"

finish
