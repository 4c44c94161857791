#!/usr/bin/env bash
# `make bench`: every benchmark, results under bench/results/. Usage: run_all.sh BUILD_DIR
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/results"
bash "$here/startup_bench.sh" "$build" "$here/results"
bash "$here/allreduce.sh" "$build" "$here/results"
bash "$here/collective_sim.sh" "$build" "$here/results"
bash "$here/ps_bench.sh" "$build" "$here/results"
bash "$here/lda_bench.sh" "$build" "$here/results"
bash "$here/lda_optimize_bench.sh" "$build" "$here/results"
bash "$here/lda_peers_bench.sh" "$build" "$here/results"
bash "$here/lda_million_bench.sh" "$build" "$here/results"
bash "$here/dl_bench.sh" "$build" "$here/results"
bash "$here/spatial_bench.sh" "$build" "$here/results"
bash "$here/torch_plugin_bench.sh" "$build" "$here/results"
bash "$here/cluster_bench.sh" "$build" "$here/results"
bash "$here/lasso_bench.sh" "$build" "$here/results"
bash "$here/lasso_peers_bench.sh" "$build" "$here/results"
bash "$here/mf_ccd_bench.sh" "$build" "$here/results"
bash "$here/mf_peers_bench.sh" "$build" "$here/results"
bash "$here/gnn_pyg_bench.sh" "$build" "$here/results"
bash "$here/gnn_ghosts_bench.sh" "$build" "$here/results"
bash "$here/svm_bench.sh" "$build" "$here/results"
bash "$here/svm_peers_bench.sh" "$build" "$here/results"
bash "$here/mlr_bench.sh" "$build" "$here/results"
bash "$here/mlr_peers_bench.sh" "$build" "$here/results"
bash "$here/mtrl_bench.sh" "$build" "$here/results"
