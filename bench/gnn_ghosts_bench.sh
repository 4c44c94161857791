#!/usr/bin/env bash
# The GNN's ghost rows two-sided (owners send them: an alltoallv) against one-sided (each process
# reads them from the owners' registered memory: parasol gnn --ghosts one-sided), GCN at staleness
# 0, on a generated graph (VERTICES, EDGES), REPEAT times interleaved, in one run:
#  1. shared memory: 2 processes on this machine (MPI's osc component for the one-sided reads:
#     scripts/mpirun.sh's sm,ucx,rdma,pt2pt);
#  2. as root, a RATE link between two network namespaces, one process each: two-sided over
#     btl tcp, one-sided through osc ucx held to its TCP transport (UCX_TLS=tcp: otherwise it would
#     use shared memory between the namespaces, which are one machine, and bypass the link; osc
#     pt2pt refuses MPI_THREAD_MULTIPLE); skipped when not root.
# Prints the median epoch (the first left out) of each, the ratio, the bytes of rows per epoch and,
# over the link, the bytes the hosts put on it per epoch.
#
# Usage: gnn_ghosts_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (3), VERTICES (300000), EDGES (6000000), EPOCHS (6), RATE (1gbit).
source "$(dirname "$0")/common.sh" "$@"
source "$here/gnn_common.sh"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
vertices=${VERTICES:-300000}
edges=${EDGES:-6000000}
epochs=${EPOCHS:-6}
rate=${RATE:-1gbit}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
graph="$out/gnn_graph_${vertices}_${edges}"
[ -s "$graph/synthetic.edges" ] ||
  "$parasol" make-graph --vertices "$vertices" --edges "$edges" --output "$graph" > /dev/null
csv="$out/gnn_ghosts.csv"
echo "where,ghosts,run,median_epoch_ms,mb_rows_per_epoch,link_mb_per_epoch" > "$csv"
echo "# $(date -u) $(uptime); graph $vertices vertices, $edges edges; $epochs epochs" | tee "$out/gnn_ghosts.txt"

record() {  # record WHERE GHOSTS RUN [LINK_BYTES]
  local mb link=""
  mb=$(awk -F, 'NR > 1 { e = $1; b = $8 } END { printf "%.1f", b / e / 1e6 }' "$out/gnn_gm.csv")
  [ -n "${4:-}" ] && link=$(awk -v b="$4" -v e="$epochs" 'BEGIN { printf "%.1f", b / e / 1e6 }')
  echo "$1,$2,$3,$(median_epoch_ms "$out/gnn_gm.csv"),$mb,$link" | tee -a "$csv"
}

for r in $(seq "$repeat"); do
  for ghosts in two-sided one-sided; do
    "$mpirun" -np 2 "$parasol" gnn --graph "$graph" --epochs "$epochs" --ghosts "$ghosts" \
      --metrics "$out/gnn_gm.csv" > "$out/gnn_g.log"
    record shared-memory "$ghosts" "$r"
  done
done

if [ "$(id -u)" = 0 ]; then
  prefix=ggb
  netns_hosts_up "$prefix" "$rate"
  for r in $(seq "$repeat"); do
    for ghosts in two-sided one-sided; do
      before=$(netns_tx_bytes "$prefix")
      netns_mpirun "$prefix" --mca pml ob1 --mca osc ucx -x UCX_TLS=tcp \
        "$parasol" gnn --graph "$graph" --epochs "$epochs" --ghosts "$ghosts" --metrics "$out/gnn_gm.csv" \
        > "$out/gnn_g.log"
      record "$rate-link" "$ghosts" "$r" $(($(netns_tx_bytes "$prefix") - before))
    done
  done
fi

"$bench_python" - "$csv" <<'EOF' | tee -a "$out/gnn_ghosts.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| where | two-sided epoch (ms) | one-sided epoch (ms) | one-sided / two-sided | rows per epoch (MB) "
      "| on the link per epoch, two-sided / one-sided (MB) |")
print("|---|---|---|---|---|---|")
for where in dict.fromkeys(r["where"] for r in rows):
    t = {g: [float(r["median_epoch_ms"]) for r in rows if r["where"] == where and r["ghosts"] == g]
         for g in ("two-sided", "one-sided")}
    mb = next(r["mb_rows_per_epoch"] for r in rows if r["where"] == where)
    link = {g: [float(r["link_mb_per_epoch"]) for r in rows
                if r["where"] == where and r["ghosts"] == g and r["link_mb_per_epoch"]] for g in t}
    on_link = " / ".join(f"{statistics.median(link[g]):.1f}" for g in t) if link["two-sided"] else "-"
    two, one = statistics.median(t["two-sided"]), statistics.median(t["one-sided"])
    spread = lambda v: f"{min(v):.0f}-{max(v):.0f}"
    print(f"| {where} | {two:.0f} ({spread(t['two-sided'])}) | {one:.0f} ({spread(t['one-sided'])}) | "
          f"{one / two:.2f}x | {mb} | {on_link} |")
EOF
