#!/usr/bin/env bash
# Dynamic networks (Cavs): the Tree-LSTM on SST, one thread per rank, side by side in one run:
#  1. training sentences/s at batch 1, 16, 64, 256 and hidden 150, 256, 512: parasol batched by
#     level, PyTorch batched by level (bench/treelstm_torch.py --mode levels, DGL's approach), and
#     at batch 64 also parasol one vertex at a time (--batching per-node), parasol without lazy
#     batching, and PyTorch recursing per node (--mode recursive); REPEAT interleaved repetitions;
#  2. 2 ranks against 1 at batch 64 per rank, hidden 150;
#  3. accuracy: EPOCHS epochs on SST train, root accuracy (fine-grained and binary) on dev and test
#     after each.
#
# Usage: treelstm_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (3), STEPS (20), EPOCHS (10), SST (the folder, default the bundled data/sst),
#              BATCHES ("1 16 64 256"), HIDDENS ("150 256 512")
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
py=$bench_python
sst=${SST:-$root/data/sst}
steps=${STEPS:-20}
epochs=${EPOCHS:-10}
batches=${BATCHES:-"1 16 64 256"}
hiddens=${HIDDENS:-"150 256 512"}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
echo "# $(date -u) $(uptime)" | tee "$out/treelstm_machine.txt"

speed() { sed -n 's/^median \([0-9.]*\) examples\/s.*/\1/p' "$1"; }
torch_speed() { sed -n 's/.*median_sentences_per_sec \([0-9.]*\).*/\1/p' "$1"; }
tl=(train --model tree-lstm --dataset sst --data "$sst" --threads 1 --no-eval)

csv="$out/treelstm_speed.csv"
echo "system,batch,hidden,run,sentences_per_sec" > "$csv"
for r in $(seq "$repeat"); do
  for h in $hiddens; do
    for b in $batches; do
      n=$steps
      [ "$b" -ge 256 ] && n=$((steps / 2 + 1))
      "$parasol" "${tl[@]}" --batch "$b" --hidden "$h" --steps "$n" > "$out/tl_p.log" 2>&1
      echo "parasol,$b,$h,$r,$(speed "$out/tl_p.log")" >> "$csv"
      "$py" "$here/treelstm_torch.py" "$sst" --mode levels --batch "$b" --hidden "$h" --steps "$n" > "$out/tl_t.log" 2>&1
      echo "pytorch-levels,$b,$h,$r,$(torch_speed "$out/tl_t.log")" >> "$csv"
    done
  done
  # The baselines at batch 64, hidden 150 (one vertex at a time is slow: few steps).
  "$parasol" "${tl[@]}" --batch 64 --steps 6 --batching per-node > "$out/tl_n.log" 2>&1
  echo "parasol-per-node,64,150,$r,$(speed "$out/tl_n.log")" >> "$csv"
  "$parasol" "${tl[@]}" --batch 64 --steps "$steps" --no-lazy-batching > "$out/tl_l.log" 2>&1
  echo "parasol-no-lazy,64,150,$r,$(speed "$out/tl_l.log")" >> "$csv"
  "$py" "$here/treelstm_torch.py" "$sst" --mode recursive --batch 64 --steps 3 > "$out/tl_r.log" 2>&1
  echo "pytorch-recursive,64,150,$r,$(torch_speed "$out/tl_r.log")" >> "$csv"
  "$mpirun" -np 2 "$parasol" "${tl[@]}" --batch 64 --steps "$steps" > "$out/tl_2.log" 2>&1
  echo "parasol-2-ranks,64,150,$r,$(speed "$out/tl_2.log")" >> "$csv"
done

# Accuracy: one run, root accuracy after each epoch.
"$parasol" train --model tree-lstm --dataset sst --data "$sst" --threads 1 --epochs "$epochs" \
  --metrics "$out/treelstm_metrics.csv" > "$out/treelstm_accuracy.log" 2>&1
grep -E '^(epoch|best dev)' "$out/treelstm_accuracy.log" | tee "$out/treelstm_epochs.txt"
echo "# $(date -u) $(uptime)" | tee -a "$out/treelstm_machine.txt"
"$py" "$here/summarize_treelstm.py" "$out" | tee "$out/treelstm_summary.txt"
