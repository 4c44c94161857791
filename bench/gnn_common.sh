# Sourced by the GNN benchmarks (gnn_bench.sh, gnn_pyg_bench.sh): reading parasol gnn's and the
# Python twins' results.

# median_epoch_ms METRICS_CSV: the median of the epochs after the first.
median_epoch_ms() {
  awk -F, 'NR > 1 { if (NR > 2) print 1000 * ($2 - prev); prev = $2 }' "$1" | sort -g |
    awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
# test_acc LOG: parasol gnn's final test accuracy.
test_acc() { grep '^final:' "$1" | sed 's/.*test accuracy \([0-9.]*\).*/\1/'; }
# field LOG NAME: a value of the Python twins' one line (gnn_torch.py's run_epochs).
field() { sed "s/.* $2 \([0-9.]*\).*/\1/" "$1"; }
