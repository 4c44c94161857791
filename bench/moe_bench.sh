#!/usr/bin/env bash
# The Transformer language model's mixture of experts and tensor parallelism, on tinyshakespeare
# (characters), one thread per rank:
#  1. dense against MoE at equal active parameters per token (4 layers, d 128: a feed-forward of
#     512 against 8 experts of 256 with top-2), equal steps and batch, 2 ranks (the experts over
#     both), and the MoE again without its load-balancing loss: validation loss per epoch, expert
#     load (busiest / mean) and dropped choices per step;
#  2. the same MoE in PyTorch (bench/moe_torch.py, gloo all-to-all) against parasol's, 2 ranks,
#     interleaved REPEAT times: tokens/s;
#  3. tensor parallelism on a layer too wide to be cheap (d 1024, ffn 4096, 2 layers): 2 ranks with
#     --tensor-parallel 2 against 1 rank, interleaved REPEAT times: tokens/s, parameters per rank.
#
# Usage: moe_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (3), STEPS (1500: the convergence runs), SPEED_STEPS (60), TP_STEPS (20: about
#              2 s each at T = 1), TEXT (the corpus)
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
py=$bench_python
text=${TEXT:-$root/../shared/data/tinyshakespeare/input.txt}
steps=${STEPS:-1500}
speed_steps=${SPEED_STEPS:-60}
tp_steps=${TP_STEPS:-20}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
echo "# $(date -u) $(uptime)" | tee "$out/moe_machine.txt"

lm=(train --model transformer-lm --dataset text --data "$text" --layers 4 --d-model 128 --heads 4 --seq 128
    --batch 16 --threads 1)
moe=(--ffn 256 --moe-experts 8 --moe-top-k 2 --capacity-factor 1.25 --expert-parallel 2)
tokens_per_sec() { sed -n 's/^median \([0-9]*\) tokens\/s.*/\1/p' "$1"; }
params() { sed -n 's/^median .* \([0-9]*\) parameters on rank 0.*/\1/p' "$1"; }
peak_mb() { sed -n 's/.*Maximum resident set size (kbytes): \([0-9]*\)/\1/p' "$1" | sort -n | tail -1 | awk '{print $1 / 1024}'; }

# 1. Convergence: each run writes its metrics (loss per step, validation per epoch).
for run in dense moe moe-nobalance; do
  case $run in
    dense) args=(--ffn 512) ;;
    moe) args=("${moe[@]}") ;;
    moe-nobalance) args=("${moe[@]}" --aux-loss-coef 0) ;;
  esac
  "$mpirun" -np 2 "$parasol" "${lm[@]}" "${args[@]}" --steps "$steps" --metrics "$out/moe_$run.csv" \
    > "$out/moe_$run.log" 2>&1 || { echo "moe_bench: $run failed"; tail -5 "$out/moe_$run.log"; exit 1; }
  tail -1 "$out/moe_$run.log"
done

# 2. parasol against PyTorch, the same MoE, 2 ranks; 3. tensor parallel 2 against 1.
speed="$out/moe_speed.csv"
echo "test,system,run,tokens_per_sec,parameters_rank0,peak_rss_mb" > "$speed"
wide=(train --model transformer-lm --dataset text --data "$text" --layers 2 --d-model 1024 --heads 16 --ffn 4096
      --seq 64 --batch 8 --threads 1 --steps "$tp_steps" --no-eval)
for r in $(seq "$repeat"); do
  "$mpirun" -np 2 "$parasol" "${lm[@]}" "${moe[@]}" --steps "$speed_steps" --no-eval > "$out/moe_p.log" 2>&1
  echo "moe,parasol,$r,$(tokens_per_sec "$out/moe_p.log"),$(params "$out/moe_p.log")," >> "$speed"
  "$py" "$here/moe_torch.py" "$text" --ranks 2 --steps "$speed_steps" > "$out/moe_t.log" 2>&1
  echo "moe,pytorch,$r,$(sed -n 's/.*median_tokens_per_sec \([0-9.]*\).*/\1/p' "$out/moe_t.log"),," >> "$speed"
  /usr/bin/time -v "$parasol" "${wide[@]}" > "$out/tp1.log" 2>&1
  echo "tp,parasol-t1,$r,$(tokens_per_sec "$out/tp1.log"),$(params "$out/tp1.log"),$(peak_mb "$out/tp1.log")" >> "$speed"
  /usr/bin/time -v "$mpirun" -np 2 "$parasol" "${wide[@]}" --tensor-parallel 2 > "$out/tp2.log" 2>&1
  echo "tp,parasol-t2,$r,$(tokens_per_sec "$out/tp2.log"),$(params "$out/tp2.log"),$(peak_mb "$out/tp2.log")" >> "$speed"
done
echo "# $(date -u) $(uptime)" | tee -a "$out/moe_machine.txt"
"$py" "$here/summarize_moe.py" "$out" | tee "$out/moe_summary.txt"
