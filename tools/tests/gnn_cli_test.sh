#!/usr/bin/env bash
# `parasol gnn` as users meet it: a GCN on Cora reaches the published accuracy, 2 processes train
# as one, early stopping reports its epoch, the metrics file is whole; bad input is one line
# naming file and line (exit 2). Usage: gnn_cli_test.sh PARASOL MPIRUN DATA_DIR

source "$(dirname "$0")/command_test.sh" "$@"
test_acc() { grep '^final:' "$1" | sed 's/.*test accuracy \([0-9.]*\).*/\1/'; }

cora="$data/cora"
runs "$tmp/one.txt" "gnn, 1 process" "$parasol" gnn --graph "$cora" --metrics "$tmp/m.csv"
label="GCN on Cora: test accuracy $(test_acc "$tmp/one.txt") >= 0.79 (Kipf and Welling: 0.815)"
check awk -v a="$(test_acc "$tmp/one.txt")" 'BEGIN { exit !(a != "" && a >= 0.79) }'
label="metrics: a header and 200 epochs"
check [ "$(head -1 "$tmp/m.csv")" = \
  "epoch,seconds,train_loss,train_accuracy,val_loss,val_accuracy,test_accuracy,bytes_sent" ] &&
  [ "$(wc -l < "$tmp/m.csv")" -eq 201 ]
for p in hash range metis; do
  runs "$tmp/two.txt" "gnn under mpirun, $p partition" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" \
    --partition $p
  a=$(test_acc "$tmp/one.txt"); b=$(test_acc "$tmp/two.txt")
  label="2 processes ($p partition) reach one process's test accuracy ($a, $b)"
  check close "$a" "$b" 0.005
  cp "$tmp/two.txt" "$tmp/two_$p.txt"
done
gat=(--model gat --hidden 64 --dropout 0.6 --lr 0.005)
runs "$tmp/gat1.txt" "gnn --model gat" "$parasol" gnn --graph "$cora" "${gat[@]}"
runs "$tmp/gat2.txt" "gnn --model gat under mpirun" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" "${gat[@]}"
a=$(test_acc "$tmp/gat1.txt"); b=$(test_acc "$tmp/gat2.txt")
label="GAT on Cora: test accuracy $a >= 0.79 (Velickovic et al., 8 heads: 0.83); 2 processes reach it too ($b)"
check awk -v a="$a" 'BEGIN { exit !(a != "" && a >= 0.79) }' && close "$a" "$b" 0.005
"$parasol" gnn --graph "$cora" --lr 0.05 --epochs 400 --patience 10 > "$tmp/early.txt" 2> "$tmp/err" || cat "$tmp/err"
label="--patience stops early and reports the epoch of the lowest validation loss"
check grep -qE "^final: epoch [0-9]+ \(lowest validation loss\) of [0-9]+ \(stopped early\)," "$tmp/early.txt"

runs /dev/null "--checkpoint" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" --epochs 40 \
  --checkpoint "$tmp/ckpt" --checkpoint-every 10
runs "$tmp/resumed.txt" "--resume" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" --resume "$tmp/ckpt"
label="a run resumed at epoch 41 ends as the uninterrupted run: $(grep '^final' "$tmp/resumed.txt")"
check [ "$(grep '^final' "$tmp/resumed.txt" | sed 's/, [0-9.]* s:/:/')" = \
        "$(grep '^final' "$tmp/two_hash.txt" | sed 's/, [0-9.]* s:/:/')" ] && grep -q "^    41 " "$tmp/resumed.txt"
expect 2 "a checkpoint of a 1432x16x7 model" -- "$parasol" gnn --graph "$cora" --hidden 8 --resume "$tmp/ckpt"

# Dorylus's pieces: a staleness bound, graph and tensor pools, tensor workers.
final() { grep '^final' "$1" | sed 's/, [0-9.]* s:/:/'; }
for k in 1 2; do
  runs "$tmp/stale$k.txt" "--staleness 1" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" --staleness 1 \
    --patience 20
done
label="--staleness 1 on 2 processes learns Cora ($(test_acc "$tmp/stale1.txt")) and repeats itself"
check awk -v a="$(test_acc "$tmp/stale1.txt")" 'BEGIN { exit !(a != "" && a >= 0.79) }' &&
  [ "$(final "$tmp/stale1.txt")" = "$(final "$tmp/stale2.txt")" ]
runs "$tmp/pools.txt" "--graph-threads/--tensor-threads" "$parasol" gnn --graph "$cora" --graph-threads 1 \
  --tensor-threads 2 --interval-rows 300
"$parasol" gnn --graph "$cora" --interval-rows 300 > "$tmp/nopools.txt" 2> /dev/null
label="graph and tensor threads end where the main thread alone does: $(final "$tmp/pools.txt")"
check [ "$(final "$tmp/pools.txt")" = "$(final "$tmp/nopools.txt")" ]
runs "$tmp/workers.txt" "--tensor-workers 1" "$mpirun" -np 3 "$parasol" gnn --graph "$cora" --tensor-workers 1
label="2 graph processes and a tensor worker end where the 2 processes alone do: $(final "$tmp/workers.txt")"
check [ "$(final "$tmp/workers.txt")" = "$(final "$tmp/two_hash.txt")" ]
# Ghost rows read one-sided (MPI windows) are the rows the owners send.
runs "$tmp/onesided.txt" "--ghosts one-sided" "$mpirun" -np 2 "$parasol" gnn --graph "$cora" \
  --ghosts one-sided
label="ghost rows read one-sided end where the sent ones do: $(final "$tmp/onesided.txt")"
check [ "$(final "$tmp/onesided.txt")" = "$(final "$tmp/two_hash.txt")" ]
expect 2 "--ghosts one-sided needs --staleness 0 (stale rows travel two-sided)" -- "$parasol" gnn --graph "$cora" \
  --ghosts one-sided --staleness 1
expect 2 "--tensor-workers runs GCN's tensor tasks, not gat's" -- "$parasol" gnn --graph "$cora" --model gat \
  --tensor-workers 1
expect 2 "--tensor-workers 1 leaves no graph process of 1" -- "$parasol" gnn --graph "$cora" --tensor-workers 1

mkdir -p "$tmp/bad" "$tmp/edge" "$tmp/empty"
printf '0 0 train 1:1\n1 0 val 2:x\n' > "$tmp/bad/g.content"; : > "$tmp/bad/g.cites"
expect 2 "g.content:2: feature value 'x' is not a finite number" -- "$parasol" gnn --graph "$tmp/bad"
printf '0 0 train 1:1\n1 0 val 2:1\n' > "$tmp/edge/g.content"; printf '0 1\n1 5\n' > "$tmp/edge/g.cites"
expect 2 "g.cites:2: vertex 5 is not in the .content file (2 vertices)" -- "$parasol" gnn --graph "$tmp/edge"
expect 2 "no NAME.content file" -- "$parasol" gnn --graph "$tmp/empty"
printf '0 0 val 1:1\n' > "$tmp/empty/g.content"; : > "$tmp/empty/g.cites"
expect 2 "the graph has no training vertex" -- "$parasol" gnn --graph "$tmp/empty"
expect 2 "--partition" -- "$parasol" gnn --graph "$cora" --partition bogus
expect 2 "--model" -- "$parasol" gnn --graph "$cora" --model bogus
expect 2 "--dropout" -- "$parasol" gnn --graph "$cora" --dropout 1
expect 2 "--metrics $tmp/no/m.csv: no folder $tmp/no" -- "$parasol" gnn --graph "$cora" --metrics "$tmp/no/m.csv"

finish
