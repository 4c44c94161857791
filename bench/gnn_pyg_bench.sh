#!/usr/bin/env bash
# parasol gnn against PyTorch Geometric (PyPI's torch-geometric, pinned, in this benchmark's own
# environment; bench/gnn_pyg.py: GCNConv and GATConv as PyG's examples use them), side by side in
# one run, the same models and hyper-parameters (GCN: hidden 16, dropout 0.5, lr 0.01, weight decay
# 5e-4 on the first layer; GAT: one head, GAT_ARGS), sparse input features in both:
#  1. Cora (bundled), 200 epochs, seeds 1..SEEDS, interleaved: test accuracy after the same epochs,
#     the median epoch (a training step and an evaluation of every vertex, the first left out) and
#     the whole command's seconds (the process, start to exit: reading, setup, training, exit);
#  2. the generated graph of gnn_bench.sh (parasol make-graph: VERTICES, EDGES), GCN, REPEAT times
#     interleaved: parasol on 1 process against PyG on 1 thread, then parasol on 2 processes
#     against PyG on 2 threads; the median epoch, the whole command and the peak memory.
# PyG gets PyTorch from the project's .venv (a .pth file), so both run the same PyTorch build.
# One thread per process for parasol (OMP_NUM_THREADS=1), --threads for PyG.
#
# Usage: gnn_pyg_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (3), SEEDS (5), VERTICES (1000000), EDGES (20000000), EPOCHS (4),
#              PYG_EPOCHS (4), GAT_ARGS ("--hidden 64 --dropout 0.6 --lr 0.005"),
#              PARTS ("cora big": the sections to run; the summary reads the CSVs of earlier runs)
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
seeds=${SEEDS:-5}
vertices=${VERTICES:-1000000}
edges=${EDGES:-20000000}
epochs=${EPOCHS:-4}
pyg_epochs=${PYG_EPOCHS:-4}
read -r -a gat_args <<< "${GAT_ARGS:---hidden 64 --dropout 0.6 --lr 0.005}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

env="$out/gnn_pyg_venv"
site=$("$root/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if [ ! -x "$env/bin/python" ] || ! "$env/bin/python" -c 'import torch_geometric' 2>/dev/null; then
  "$root/.venv/bin/python" -m venv "$env"
  echo "$site" > "$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/parasol_torch.pth"
  "$env/bin/pip" install --disable-pip-version-check -q torch-geometric==2.8.1
fi
py="$env/bin/python"
echo "# $(date -u) $(uptime)" | tee "$out/gnn_pyg_machine.txt"
"$py" -c 'import torch, torch_geometric; print("# torch", torch.__version__, "torch_geometric", torch_geometric.__version__)' |
  tee -a "$out/gnn_pyg_machine.txt"

source "$here/gnn_common.sh"
# timed LOG -- COMMAND...: runs it with /usr/bin/time; whole seconds and peak KB in $out/gnn_pyg_time.
timed() {
  local log=$1
  shift 2
  /usr/bin/time -f "%e %M" -o "$out/gnn_pyg_time" "$@" > "$log"
}
whole() { awk '{ print $1 }' "$out/gnn_pyg_time"; }
rss_mb() { awk '{ printf "%.0f", $2 / 1024 }' "$out/gnn_pyg_time"; }

parts=" ${PARTS:-cora big} "
has() { [[ $parts == *" $1 "* ]]; }

cora="$out/gnn_pyg_cora.csv"
if has cora; then
  echo "model,system,seed,test_accuracy,median_epoch_ms,whole_s" > "$cora"
  for s in $(seq "$seeds"); do
    for model in gcn gat; do
      args=(--model "$model")
      [ "$model" = gat ] && args+=("${gat_args[@]}")
      timed "$out/gnn_pyg_p.log" -- "$parasol" gnn --graph "$root/data/cora" --seed "$s" "${args[@]}" \
        --metrics "$out/gnn_pyg_m.csv"
      echo "$model,parasol,$s,$(test_acc "$out/gnn_pyg_p.log"),$(median_epoch_ms "$out/gnn_pyg_m.csv"),$(whole)" >> "$cora"
      timed "$out/gnn_pyg_t.log" -- "$py" "$here/gnn_pyg.py" "$root/data/cora" --seed "$s" "${args[@]}"
      t="$out/gnn_pyg_t.log"
      echo "$model,pyg,$s,$(field "$t" test_accuracy),$(field "$t" median_epoch_ms),$(whole)" >> "$cora"
    done
  done
fi

graph="$out/gnn_graph_${vertices}_${edges}"
[ -s "$graph/synthetic.edges" ] ||
  "$parasol" make-graph --vertices "$vertices" --edges "$edges" --output "$graph" | tee "$out/gnn_graph.txt"
big="$out/gnn_pyg_big.csv"
if has big; then
  echo "system,cores,run,median_epoch_ms,whole_s,peak_rss_mb,test_accuracy" > "$big"
  for r in $(seq "$repeat"); do
    for cores in 1 2; do
      launch=("$parasol")
      [ "$cores" = 2 ] && launch=("$mpirun" -np 2 "$parasol")
      timed "$out/gnn_pyg_p.log" -- "${launch[@]}" gnn --graph "$graph" --epochs "$epochs" \
        --metrics "$out/gnn_pyg_m.csv"
      echo "parasol,$cores,$r,$(median_epoch_ms "$out/gnn_pyg_m.csv"),$(whole),$(rss_mb),$(test_acc "$out/gnn_pyg_p.log")" >> "$big"
      timed "$out/gnn_pyg_t.log" -- "$py" "$here/gnn_pyg.py" "$graph" --epochs "$pyg_epochs" --threads "$cores"
      t="$out/gnn_pyg_t.log"
      echo "pyg,$cores,$r,$(field "$t" median_epoch_ms),$(whole),$(rss_mb),$(field "$t" test_accuracy)" >> "$big"
      tail -2 "$big"
    done
  done
fi
echo "# finished $(date -u) $(uptime)" | tee -a "$out/gnn_pyg_machine.txt"
"$py" "$here/summarize_gnn_pyg.py" "$cora" "$big" "$out/gnn_pyg.png" | tee "$out/gnn_pyg_summary.txt"
