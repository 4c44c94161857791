#!/usr/bin/env bash
# `parasol train --model transformer-lm` as users meet it: a run learns and writes its metrics,
# tensor parallelism (2 processes) and expert parallelism (2 processes) end where the plain
# layout does, bad input is one line and exit 2. Usage: lm_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"
val_loss() { sed -n 's/.*validation loss \([0-9.]*\), perplexity.*/\1/p' "$1" | tail -1; }

# The first 3,000 lines of the bundled Shakespeare: enough to learn from in a few steps.
text="$tmp/text.txt"
head -3000 "$data/tinyshakespeare/input.txt" > "$text"
lm=(train --model transformer-lm --dataset text --data "$text" --layers 2 --d-model 32 --heads 4 --ffn 64 --seq 32
    --batch 8 --eval-batches 10 --lr 0.005)
runs "$tmp/one.txt" "transformer-lm, 1 process" "$parasol" "${lm[@]}" --steps 150 --metrics "$tmp/m.csv"
# Characters drawn by their frequencies alone would cost 3.3 nats; a uniform guess ln 61 = 4.1.
label="one process learns: validation loss $(val_loss "$tmp/one.txt") below 2.9"
check awk -v a="$(val_loss "$tmp/one.txt")" 'BEGIN { exit !(a != "" && a < 2.9) }'
label="metrics: a header and 150 steps"
check [ "$(head -1 "$tmp/m.csv")" = \
  "step,seconds,step_seconds,tokens_per_sec,loss,balance_loss,z_loss,expert_load_max_over_mean,dropped_fraction,val_loss,val_perplexity" ] &&
  [ "$(wc -l < "$tmp/m.csv")" -eq 151 ]
runs "$tmp/tp.txt" "--tensor-parallel 2" "$mpirun" -np 2 "$parasol" "${lm[@]}" --steps 150 --tensor-parallel 2
label="tensor parallel 2 ends at one process's validation loss ($(val_loss "$tmp/one.txt"), $(val_loss "$tmp/tp.txt"))"
check close "$(val_loss "$tmp/one.txt")" "$(val_loss "$tmp/tp.txt")" 0.002
# 10 steps: routing is discrete, so float differences of the two layouts' sums may flip a choice
# and part the runs further on (after 40 steps they were 0.0003 apart in one build, 0.004 in the next).
moe=(--moe-experts 4 --moe-every 2)
runs "$tmp/dp.txt" "2 replicas, experts on each" "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 10
runs "$tmp/ep.txt" "--expert-parallel 2" "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 10 \
  --expert-parallel 2
label="experts split over 2 processes end where replicated experts do ($(val_loss "$tmp/dp.txt"), $(val_loss "$tmp/ep.txt"))"
check close "$(val_loss "$tmp/dp.txt")" "$(val_loss "$tmp/ep.txt")" 0.002
label="the MoE run reports its routing"
check grep -qE "balance [0-9.]+, z [0-9.]+, load max/mean [0-9.]+, dropped [0-9.]+%" "$tmp/ep.txt"

# A run checkpointed at step 20 and resumed to 40 (2 processes, experts split) ends where the
# uninterrupted 40-step run ends, to the last digit; another layout or a damaged file is refused.
runs "$tmp/ep40.txt" "40 steps, experts split" "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 \
  --expert-parallel 2
runs "$tmp/first.txt" "checkpointed run" "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 20 \
  --expert-parallel 2 --checkpoint "$tmp/ck"
runs "$tmp/resumed.txt" "resumed run" "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 \
  --expert-parallel 2 --resume "$tmp/ck"
label="a run resumed at step 20 ends as the uninterrupted one ($(val_loss "$tmp/ep40.txt"), $(val_loss "$tmp/resumed.txt"))"
check [ "$(val_loss "$tmp/ep40.txt")" = "$(val_loss "$tmp/resumed.txt")" ] && grep -q "resuming .* at step 20 of 40" "$tmp/resumed.txt"
expect 2 "a checkpoint of 2 ranks (tensor parallel 1, expert parallel 2)" -- \
  "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 --resume "$tmp/ck"
printf 'x' | dd of="$tmp/ck/rank-1.step-20.bin" bs=1 seek=100 conv=notrunc 2> /dev/null
expect 2 "rank-1.step-20.bin" -- \
  "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 --expert-parallel 2 --resume "$tmp/ck"

# Resized as a scheduler resizes it: plain data parallelism checkpointed on 2 processes at step 20,
# resumed on 1 with the same global batch (16), ends where one process's uninterrupted run of that
# batch ends (the validation loss of 2 processes is over twice the --eval-batches, so it is not the
# figure to compare); with experts split over the ranks the layout must stay (above).
mapfile -t lm1 < <(without --batch "${lm[@]}")
runs "$tmp/one40.txt" "40 steps on 1 process" "$parasol" "${lm1[@]}" --batch 16 --steps 40
runs /dev/null "checkpointed on 2 processes" "$mpirun" -np 2 "$parasol" "${lm[@]}" --steps 20 \
  --checkpoint "$tmp/ck3"
runs "$tmp/resized.txt" "resumed on 1 process" "$parasol" "${lm1[@]}" --batch 16 --steps 40 \
  --resume "$tmp/ck3"
label="resumed on 1 process, it ends where 1 process ends ($(val_loss "$tmp/one40.txt"), $(val_loss "$tmp/resized.txt"))"
check close "$(val_loss "$tmp/one40.txt")" "$(val_loss "$tmp/resized.txt")" 0.001 &&
  grep -q "resuming .* at step 20 of 40" "$tmp/resized.txt"

# A scheduler's stop file (present from the start): the run checkpoints after its first step and
# stops, the status file says so, and resumed it ends where the uninterrupted run ends.
"$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 --expert-parallel 2 > "$tmp/ep40b.txt" 2>/dev/null
touch "$tmp/stop"
"$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 --expert-parallel 2 --checkpoint "$tmp/ck2" \
  --stop-file "$tmp/stop" --status "$tmp/status" > "$tmp/stopped.txt" 2> "$tmp/err"
label="a stop file stops the run after its step, checkpointed, and the status file says so"
check grep -q "stopped at step 1 of 40 (checkpoint written)" "$tmp/stopped.txt" &&
  grep -qx "state stopped" "$tmp/status" && grep -qx "step 1" "$tmp/status"
rm -f "$tmp/stop"
"$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps 40 --expert-parallel 2 --resume "$tmp/ck2" \
  --status "$tmp/status" > "$tmp/resumed2.txt" 2> "$tmp/err"
label="resumed after the stop, it ends as the uninterrupted run ($(val_loss "$tmp/ep40b.txt"), $(val_loss "$tmp/resumed2.txt"))"
check [ -n "$(val_loss "$tmp/resumed2.txt")" ] && [ "$(val_loss "$tmp/ep40b.txt")" = "$(val_loss "$tmp/resumed2.txt")" ] &&
  grep -qx "state done" "$tmp/status" && grep -qx "step 40" "$tmp/status"
expect 2 "--batch-file is not supported with --model transformer-lm" -- \
  "$parasol" "${lm[@]}" --steps 4 --batch-file "$tmp/batch"

: > "$tmp/empty.txt"
expect 2 "empty.txt: no text" -- "$parasol" train --model transformer-lm --dataset text --data "$tmp/empty.txt"
expect 2 "no.txt: cannot open" -- "$parasol" train --model transformer-lm --dataset text --data "$tmp/no.txt"
expect 2 "--model transformer-lm trains on --dataset text" -- "$parasol" train --model transformer-lm --dataset mnist
expect 2 "d_model 32 is not a multiple of the 3 heads" -- \
  "$parasol" train --model transformer-lm --dataset text --data "$text" --d-model 32 --heads 3
expect 2 "tensor parallel 2 does not divide the job's 1 rank" -- "$parasol" "${lm[@]}" --tensor-parallel 2
expect 2 "3 experts do not split over 2 expert-parallel ranks" -- \
  "$mpirun" -np 2 "$parasol" "${lm[@]}" --moe-experts 3 --expert-parallel 2

finish
