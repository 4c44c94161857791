#!/usr/bin/env bash
# parasol gnn against the GCN in PyTorch (bench/gnn_torch.py: torch.sparse.mm, as the reference
# implementations), side by side in one run, one thread per rank, the same model and
# hyper-parameters (hidden 16, dropout 0.5, lr 0.01, weight decay 5e-4):
#  1. Cora, 200 epochs, seeds 1..SEEDS: test accuracy of both (Kipf and Welling report 81.5%);
#     then the one-head GAT of both with GAT_ARGS (Velickovic et al. report 83.0% with 8 heads);
#     and the GCN on 2 processes under a staleness bound of 0 and 1, with and without early
#     stopping (--patience 20, as Kipf and Welling train);
#  2. a generated graph (parasol make-graph: VERTICES, EDGES), REPEAT times interleaved: the
#     median epoch (training step and evaluation, the first epoch left out) of parasol on 1 and 2
#     processes, on 1 process with a tensor thread beside the main one (--tensor-threads 1), on 1
#     graph process with 1 tensor worker (--tensor-workers 1), and of PyTorch; each run's peak
#     memory (of its largest process) and the cores it used;
#  3. as root, over a LINK_RATE link between two network namespaces, one process each, staleness
#     0 against 1 (REPEAT times interleaved), on the same graph and on a smaller one
#     (LINK_VERTICES, LINK_EDGES), whose exchanges weigh more against its computation; skipped
#     when not root.
#
# Usage: gnn_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (3), SEEDS (10), VERTICES (1000000), EDGES (20000000), EPOCHS (6),
#              TORCH_EPOCHS (3: PyTorch takes about 40 s an epoch on the default graph),
#              GAT_ARGS ("--hidden 64 --dropout 0.6 --lr 0.005"), LINK_RATE (1gbit),
#              LINK_VERTICES (300000), LINK_EDGES (6000000), PARTS ("cora big link": the
#              sections to run; the summary reads the CSVs of earlier runs for the others)
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
py=$bench_python
seeds=${SEEDS:-10}
vertices=${VERTICES:-1000000}
edges=${EDGES:-20000000}
epochs=${EPOCHS:-6}
torch_epochs=${TORCH_EPOCHS:-3}
read -r -a gat_args <<< "${GAT_ARGS:---hidden 64 --dropout 0.6 --lr 0.005}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
echo "# $(date -u) $(uptime)" | tee "$out/gnn_machine.txt"

source "$here/gnn_common.sh"

parts=" ${PARTS:-cora big link} "
has() { [[ $parts == *" $1 "* ]]; }

csv="$out/gnn_cora.csv"
stale="$out/gnn_stale.csv"
if has cora; then
  echo "model,system,seed,test_accuracy,median_epoch_ms" > "$csv"
  for model in gcn gat; do
    args=(--model "$model")
    [ "$model" = gat ] && args+=("${gat_args[@]}")
    for s in $(seq "$seeds"); do
      "$parasol" gnn --graph "$root/data/cora" --seed "$s" "${args[@]}" --metrics "$out/gnn_m.csv" \
        > "$out/gnn_p.log"
      echo "$model,parasol,$s,$(test_acc "$out/gnn_p.log"),$(median_epoch_ms "$out/gnn_m.csv")" >> "$csv"
      "$py" "$here/gnn_torch.py" "$root/data/cora" --seed "$s" "${args[@]}" > "$out/gnn_t.log"
      t="$out/gnn_t.log"
      echo "$model,pytorch,$s,$(field "$t" test_accuracy),$(field "$t" median_epoch_ms)" >> "$csv"
    done
  done

  echo "staleness,patience,seed,test_accuracy" > "$stale"
  for s in $(seq "$seeds"); do
    for bound in 0 1; do
      for patience in 0 20; do
        "$mpirun" -np 2 "$parasol" gnn --graph "$root/data/cora" --seed "$s" --staleness "$bound" \
          --patience "$patience" > "$out/gnn_p.log"
        echo "$bound,$patience,$s,$(test_acc "$out/gnn_p.log")" >> "$stale"
      done
    done
  done
fi

graph="$out/gnn_graph_${vertices}_${edges}"
[ -s "$graph/synthetic.edges" ] ||
  "$parasol" make-graph --vertices "$vertices" --edges "$edges" --output "$graph" | tee "$out/gnn_graph.txt"
big="$out/gnn_big.csv"
if has big; then
  echo "system,run,median_epoch_ms,peak_rss_mb,test_accuracy,cores" > "$big"
  rss() { awk 'END { printf "%.0f", $1 / 1024 }' "$1"; }  # /usr/bin/time -f %M: KB of the largest process
  # run_big NAME CORES LAUNCHER...: one parasol run on the big graph, a row of gnn_big.csv.
  run_big() {
    local name=$1 cores=$2
    shift 2
    /usr/bin/time -f %M -o "$out/gnn_rss" "$@" gnn --graph "$graph" --epochs "$epochs" \
      --metrics "$out/gnn_m.csv" "${extra[@]}" > "$out/gnn_p.log"
    echo "$name,$r,$(median_epoch_ms "$out/gnn_m.csv"),$(rss "$out/gnn_rss"),$(test_acc "$out/gnn_p.log"),$cores" \
      >> "$big"
  }
  for r in $(seq "$repeat"); do
    extra=(); run_big parasol-1 1 "$parasol"
    extra=(); run_big parasol-2 2 "$mpirun" -np 2 "$parasol"
    extra=(--tensor-threads 1); run_big parasol-1-tensor-thread 2 "$parasol"
    extra=(--tensor-workers 1 --tensor-threads 1)
    run_big parasol-1-tensor-worker 2 "$mpirun" -np 2 "$parasol"
    /usr/bin/time -f %M -o "$out/gnn_rss" "$py" "$here/gnn_torch.py" "$graph" --epochs "$torch_epochs" \
      > "$out/gnn_t.log"
    t="$out/gnn_t.log"
    echo "pytorch,$r,$(field "$t" median_epoch_ms),$(rss "$out/gnn_rss"),$(field "$t" test_accuracy),1" >> "$big"
  done
fi

link="$out/gnn_link.csv"
if has link; then
  echo "graph,rate,staleness,run,median_epoch_ms,mb_sent_per_epoch" > "$link"
fi
if has link && [ "$(id -u)" = 0 ]; then
    rate=${LINK_RATE:-1gbit}
    small="$out/gnn_graph_${LINK_VERTICES:-300000}_${LINK_EDGES:-6000000}"
    [ -s "$small/synthetic.edges" ] ||
      "$parasol" make-graph --vertices "${LINK_VERTICES:-300000}" --edges "${LINK_EDGES:-6000000}" \
        --output "$small"
    prefix=gnb
    netns_hosts_up "$prefix" "$rate"
    for g in "$small" "$graph"; do
      for r in $(seq "$repeat"); do
        for bound in 0 1; do
          netns_mpirun "$prefix" \
            "$parasol" gnn --graph "$g" --epochs "$epochs" --staleness "$bound" --metrics "$out/gnn_m.csv" \
            > "$out/gnn_p.log"
          mb=$(awk -F, 'NR > 1 { e = $1; b = $8 } END { printf "%.1f", b / e / 1e6 }' "$out/gnn_m.csv")
          echo "$(basename "$g"),$rate,$bound,$r,$(median_epoch_ms "$out/gnn_m.csv"),$mb" | tee -a "$link"
        done
      done
    done
fi
echo "# finished $(date -u) $(uptime)" | tee -a "$out/gnn_machine.txt"
"$py" "$here/summarize_gnn.py" "$csv" "$big" "$stale" "$link" "$out/gnn.png" | tee "$out/gnn_summary.txt"
