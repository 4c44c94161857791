#!/bin/bash
# What a user meets: a redirected run can be followed as it goes and keeps every line it printed
# when interrupted (alone and under mpirun); a diverging run ends with exit code 3 and one line
# naming the step, the value and the option to look at; one surface across commands.
source "$(dirname "$0")/command_test.sh" "$@"

# `lines FILE`: the lines of FILE that are figures (not comments or headers; train's "epoch N: ...").
lines() {
  local n
  n=$(grep -c -e '^ *[0-9]' -e '^epoch [0-9]' "$1" 2>/dev/null)
  echo "${n:-0}"
}

# `interrupt NAME WANT -- command...`: runs the command with stdout to $tmp/NAME.log, waits (up to
# 60 s) until WANT figure lines have reached the file, sends SIGINT to it, and checks the log still
# has them, every line whole. With block-buffered output nothing would reach the file.
interrupt() {
  local name=$1 want=$2
  shift 3
  # With job control on, the background command takes SIGINT as a terminal would give it
  # (without, bash starts it with SIGINT ignored).
  set -m
  "$@" >"$tmp/$name.log" 2>"$tmp/$name.err" &
  local pid=$! waited=0
  set +m
  while [ "$(lines "$tmp/$name.log")" -lt "$want" ] && [ "$waited" -lt 600 ] && kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
  done
  local seen
  seen=$(lines "$tmp/$name.log")
  kill -INT "$pid" 2>/dev/null
  timeout 60 tail --pid="$pid" -f /dev/null || { kill -KILL "$pid"; fail "$name: still running 60 s after SIGINT"; }
  label="$name: $seen figure lines reached the redirected log while it ran (wanted $want)"
  check [ "$seen" -ge "$want" ]
  label="$name: after SIGINT the log keeps them, and its last line is whole"
  check [ "$(lines "$tmp/$name.log")" -ge "$seen" ] && [ -z "$(tail -c 1 "$tmp/$name.log")" ]
}

interrupt lda 3 -- "$parasol" lda --corpus "$data/ap/ap.dat" --topics 20 --iterations 100000
interrupt train 2 -- "$parasol" train --model mlp --dataset mnist --data "$data/mnist" --epochs 1000 \
  --metrics "$tmp/train.csv"
# Every figure train prints per epoch is in its metrics too: the test accuracy of each evaluation.
label="train: each epoch's test accuracy printed is in --metrics"
check [ "$(grep -c '^epoch' "$tmp/train.log")" -ge 2 ] &&
  [ "$(awk -F, 'NR > 1 && $10 != ""' "$tmp/train.csv" | wc -l)" -ge "$(grep -c '^epoch' "$tmp/train.log")" ] &&
  close "$(grep '^epoch 1:' "$tmp/train.log" | sed 's/.*test accuracy \([0-9.]*\)%.*/\1/')" \
    "$(awk -F, 'NR > 1 && $10 != "" { print 100 * $10; exit }' "$tmp/train.csv")" 0.01
for r in $(seq 20); do cat "$data/libsvm/letter-1000"; done >"$tmp/letter-20000"
interrupt svm 3 -- "$parasol" svm --data "$tmp/letter-20000" --c 1000 --gamma 5 --tolerance 1e-9 \
  --progress-every 20 --cache-mb 1
interrupt gnn 3 -- "$parasol" gnn --graph "$data/cora" --epochs 1000000
if [ -n "$mpirun" ]; then
  interrupt lda_mpirun 3 -- "$mpirun" -np 2 "$parasol" lda --corpus "$data/ap/ap.dat" --topics 20 \
    --iterations 100000
  label="lda under mpirun: no progress bar's carriage returns in a log"
  check [ "$(tr -cd '\r' <"$tmp/lda_mpirun.log" | wc -c)" -eq 0 ]
fi

# A diverging run: exit code 3, the step (or clock, epoch), the value and the option to look at.
expect 3 "at step 2 (over 100 times its first value" -- \
  "$parasol" train --model lenet --dataset mnist --data "$data/mnist" --lr 1e6 --steps 30 --no-progress
expect 3 "the run diverged; lower --lr" -- \
  "$parasol" mf --data synthetic --lr 1e10 --clocks 5
expect 3 "training loss" -- "$parasol" gnn --graph "$data/cora" --lr 1e6 --epochs 50
expect 3 "training loss 562.5 at epoch 1" -- \
  "$parasol" mlr --data "$data/libsvm/letter-1000" --lr 1e6 --lambda 1e-9 --epochs 3
# The language models and the dynamic networks, through the same training loop.
diverges() { expect 3 "at step 2" -- "$parasol" train "$@" --lr 1e6 --steps 30 --no-progress; }
diverges --model transformer-lm --dataset text --data "$data/tinyshakespeare/input.txt" --layers 1 --d-model 32 \
  --heads 2 --ffn 64 --seq 32 --batch 8
diverges --model lstm-lm --dataset text --data "$data/tinyshakespeare/input.txt"
diverges --model tree-lstm --dataset sst --data "$data/sst"
diverges --model tree-fc --tree-depth 4 --trees 64
if [ -n "$mpirun" ]; then
  expect 3 "the run diverged; lower --lr" -- "$mpirun" -np 2 "$parasol" mf --data synthetic --lr 1e10 --clocks 5
  expect 3 "the run diverged; lower --lr" -- \
    "$mpirun" -np 2 "$parasol" train --model mlp --dataset mnist --data "$data/mnist" --lr 1e6 --steps 30
fi
# The metrics keep the steps up to the one that diverged, and the last good checkpoint stays.
"$parasol" train --model mlp --dataset mnist --data "$data/mnist" --lr 1e6 --steps 30 \
  --metrics "$tmp/diverged.csv" --checkpoint "$tmp/ckpt" --checkpoint-every 1 >/dev/null 2>"$tmp/err"
label="a diverged train run keeps its metrics and the checkpoint of the last good step"
step=$(sed -n 's/.* at step \([0-9]*\) .*/\1/p' "$tmp/err")
check [ -n "$step" ] && [ "$(($(wc -l <"$tmp/diverged.csv") - 1))" -eq "$step" ] &&
  "$parasol" train --model mlp --dataset mnist --data "$data/mnist" --resume "$tmp/ckpt" --eval-only \
    >"$tmp/eval.log" && grep -q "checkpoint of step $((step - 1)):" "$tmp/eval.log"

# A model out, predictions in: each trainer's model file, applied by its predict command, gives the
# figure training printed for the same rows.
figure() { grep -o "$2 [0-9.]*" "$1" | head -1 | awk '{ print $NF }'; }
"$parasol" mf --data synthetic --clocks 5 --test "$tmp/ratings.test" --model "$tmp/mf.model" >"$tmp/mf.log" 2>&1
label="mf --test needs its file before it trains"
check grep -q "ratings.test: cannot open" "$tmp/mf.log"
printf '1\t1\t4\t0\n1\t2\t3\t0\n2\t1\t5\t0\n3\t2\t2\t0\n' >"$tmp/ratings.test"
for alg in sgd ccd; do
  "$parasol" mf --algorithm "$alg" --data synthetic --clocks 5 --test "$tmp/ratings.test" \
    --model "$tmp/mf-$alg.model" >"$tmp/mf-$alg.log"
  "$parasol" mf-predict --model "$tmp/mf-$alg.model" --data "$tmp/ratings.test" --output "$tmp/mf-$alg.pred" \
    >"$tmp/mf-predict-$alg.log"
  label="mf ($alg): the test RMSE training printed is mf-predict's ($(figure "$tmp/mf-$alg.log" "test RMSE"))"
  check [ -n "$(figure "$tmp/mf-$alg.log" "test RMSE")" ] &&
    [ "$(figure "$tmp/mf-$alg.log" "test RMSE")" = "$(figure "$tmp/mf-predict-$alg.log" "RMSE")" ] &&
    [ "$(wc -l <"$tmp/mf-$alg.pred")" -eq 4 ]
done
"$parasol" lasso --data "$data/riboflavin/riboflavin-500.csv" --lambda 0.05 \
  --test "$data/riboflavin/riboflavin-500.csv" --model "$tmp/lasso.model" >"$tmp/lasso.log"
"$parasol" linear-predict --model "$tmp/lasso.model" --data "$data/riboflavin/riboflavin-500.csv" \
  --output "$tmp/lasso.pred" >"$tmp/lasso-predict.log"
label="lasso: --test's MSE is linear-predict's, a prediction per row"
check [ -n "$(figure "$tmp/lasso.log" "test MSE")" ] &&
  [ "$(figure "$tmp/lasso.log" "test MSE")" = "$(figure "$tmp/lasso-predict.log" "test MSE")" ] &&
  [ "$(wc -l <"$tmp/lasso.pred")" -eq 71 ]
"$mpirun" -np 2 "$parasol" logreg --data "$data/libsvm/a9a-2000" --lambda 1e-3 --test "$data/libsvm/a9a-2000" \
  --model "$tmp/logreg.model" >"$tmp/logreg.log"
"$parasol" linear-predict --model "$tmp/logreg.model" --data "$data/libsvm/a9a-2000" >"$tmp/logreg-predict.log"
label="logreg under mpirun: --test's accuracy is linear-predict's ($(figure "$tmp/logreg.log" "test accuracy"))"
check [ -n "$(figure "$tmp/logreg.log" "test accuracy")" ] &&
  [ "$(figure "$tmp/logreg.log" "test accuracy")" = "$(figure "$tmp/logreg-predict.log" "test accuracy")" ]
"$mpirun" -np 2 "$parasol" mlr --data "$data/libsvm/letter-1000" --epochs 3 --test "$data/libsvm/letter-1000" \
  --model "$tmp/mlr.model" >"$tmp/mlr.log"
"$parasol" mlr-predict --model "$tmp/mlr.model" --data "$data/libsvm/letter-1000" --output "$tmp/mlr.pred" \
  >"$tmp/mlr-predict.log"
label="mlr under mpirun: the last epoch's test accuracy is mlr-predict's ($(figure "$tmp/mlr.log" "test accuracy"))"
check [ -n "$(figure "$tmp/mlr.log" "test accuracy")" ] &&
  [ "$(figure "$tmp/mlr.log" "test accuracy")" = "$(figure "$tmp/mlr-predict.log" "accuracy")" ] &&
  [ "$(wc -l <"$tmp/mlr.pred")" -eq 1000 ]
"$mpirun" -np 2 "$parasol" gnn --graph "$data/cora" --epochs 30 --predictions "$tmp/gnn.pred" \
  --model-file "$tmp/gnn.model" >"$tmp/gnn.log"
label="gnn under mpirun: a prediction per vertex, their test accuracy the one training reported"
check [ "$(wc -l <"$tmp/gnn.pred")" -eq 2708 ] && [ -s "$tmp/gnn.model" ] &&
  close "$(awk '$4 == "test" { n++; c += ($2 == $3) } END { print c / n }' "$tmp/gnn.pred")" \
    "$(sed -n 's/.*test accuracy \([0-9.]*\)$/\1/p' "$tmp/gnn.log")" 0.00001
"$parasol" train --model mlp --dataset mnist --data "$data/mnist" --steps 60 --checkpoint "$tmp/tck" \
  >"$tmp/train-pred.log"
"$mpirun" -np 2 "$parasol" train --model mlp --dataset mnist --data "$data/mnist" --resume "$tmp/tck" \
  --eval-only --predictions "$tmp/train.pred" >"$tmp/train-eval.log"
label="train --eval-only --predictions under mpirun: a class per test sample, their accuracy the one printed"
check [ "$(wc -l <"$tmp/train.pred")" -eq 2000 ] &&
  close "$(awk '{ n++; c += ($2 == $3) } END { print 100 * c / n }' "$tmp/train.pred")" \
    "$(sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$tmp/train-eval.log")" 0.01
expect 2 "mf-sgd.model:1: not a parasol lasso or logreg model" -- "$parasol" linear-predict --model "$tmp/mf-sgd.model" \
  --data "$data/libsvm/a9a-2000"
expect 2 "mf-sgd.model: a file of kind 'mf-model', not 'mlr-model'" -- "$parasol" mlr-predict --model "$tmp/mf-sgd.model" --data "$data/libsvm/a9a-2000"

# The README's Slurm script, run with bash outside Slurm (one node): metrics, checkpoints and the
# model in its folder; run again (as after a requeue) it resumes from its checkpoint.
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "$mpirun" ]; then
  for run in 1 2; do
    PARASOL=$parasol MPIRUN=$mpirun WORK=$tmp/slurm CORPUS=$data/ap/ap.dat \
      bash "$root/scripts/slurm/parasol.sbatch" >"$tmp/slurm-$run.log" 2>&1
  done
  label="the Slurm script runs outside Slurm, writes its folder, and resumes when run again"
  check [ "$(wc -l <"$tmp/slurm/metrics-0.csv")" -eq 201 ] && [ -s "$tmp/slurm/model/topics.txt" ] &&
    grep -q "resuming" "$tmp/slurm-2.log" && grep -q "^# resuming .* at iteration 200" "$tmp/slurm-2.log"
fi

# One surface: a misspelt option gets a suggestion; a list of choices names every one; counts read
# as English.
expect 2 "The following arguments were not expected: 5 --topcs (did you mean --topics?)" -- \
  "$parasol" lda --corpus "$data/ap/ap.dat" --topcs 5
expect 2 "--model: foo not in {mlp,lenet,resnet20,vgg,transformer-lm,tree-lstm,lstm-lm,tree-fc}" -- \
  "$parasol" train --model foo
"$parasol" train --model mlp --dataset mnist --data "$data/mnist" --steps 1 --no-eval >"$tmp/one.log"
"$parasol" lda --corpus "$data/ap/ap.dat" --topics 5 --iterations 1 >>"$tmp/one.log"
label="one rank, one process, one thread: singular"
check grep -q "1 rank x batch" "$tmp/one.log" && grep -q "1 process x 1 thread" "$tmp/one.log" &&
  ! grep -q "(es)\|(s)\|1 ranks\|1 processes" "$tmp/one.log"
label="one default deadline: 60 s in every command that waits on another process"
check [ "$(for c in lda mf mlr gnn svm mtrl lasso logreg; do "$parasol" "$c" --help; done |
  grep -A1 -e '--timeout-ms' | grep -o '=[0-9]*' | sort -u)" = "=60000" ]

finish
