#!/usr/bin/env bash
# The parameter server's row reads two-sided (a worker asks the shard's thread, which answers with
# the rows) against one-sided (the worker gets them from the shard's registered memory, checking
# each row's version word before and after: parasol mf --ps-reads one-sided), on matrix
# factorisation (SGD, MovieLens 100K u1.base, RANK factors, CLOCKS clocks, 2 processes of one
# worker), under BSP and SSP(3), REPEAT times interleaved, in one run:
#  1. shared memory: 2 processes on this machine (MPI's osc component for the gets:
#     scripts/mpirun.sh's sm,ucx,rdma,pt2pt);
#  2. as root, a RATE link between two network namespaces, one process each: two-sided over btl
#     tcp, one-sided through osc ucx held to its TCP transport (UCX_TLS=tcp, so it cannot reach
#     the other namespace through shared memory and bypass the link); skipped when not root.
# Prints per case the median training time (the solver's, as mf prints it) and the whole
# command's, each with its range, the paired ratio one-sided / two-sided and the final objective
# (under BSP equal both ways); draws bench/results/ps_reads.png.
#
# Usage: ps_reads_bench.sh BUILD_DIR OUT_DIR
# Environment: REPEAT (5), RANK (64), CLOCKS (30), RATE (1gbit).
source "$(dirname "$0")/common.sh" "$@"
parasol="$build/tools/parasol"
mpirun="$root/scripts/mpirun.sh"
rank=${RANK:-64}
clocks=${CLOCKS:-30}
rate=${RATE:-1gbit}
repeat=${REPEAT:-5}
data="$root/../shared/data/movielens-100k/u1.base"
[ -s "$data" ] || { echo "ps_reads_bench: no $data" >&2; exit 1; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
raw="$out/ps_reads.raw"
: > "$raw"
echo "# $(date -u) $(uptime); mf on $data, rank $rank, $clocks clocks, 2 processes x 1 worker" |
  tee "$out/ps_reads.txt"

run() {  # run WHERE READS CONSISTENCY RUN [mpirun arguments...]
  local where=$1 reads=$2 consistency=$3 r=$4 start end before=0 link=""
  shift 4
  [ "$where" = shared-memory ] || before=$(netns_tx_bytes "$prefix")
  start=$(date +%s.%N)
  "$@" "$parasol" mf --data "$data" --rank "$rank" --clocks "$clocks" --workers 1 \
    --consistency "$consistency" --ps-reads "$reads" > "$out/ps_reads.log" 2>&1 ||
    { echo "ps_reads_bench: $where $reads $consistency failed:"; tail -5 "$out/ps_reads.log"; exit 1; }
  end=$(date +%s.%N)
  [ "$where" = shared-memory ] || link=$(($(netns_tx_bytes "$prefix") - before))
  # "final objective 0.49962418 (every update applied); 0.351 s"
  sed -nE "s/^final objective ([0-9.e+-]+) .*; ([0-9.]+) s$/run $where $reads $consistency $r \2 \1/p" \
    "$out/ps_reads.log" | sed "s/\$/ $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }') ${link:-0}/" |
    tee -a "$raw"
}

for r in $(seq "$repeat"); do
  for consistency in bsp ssp:3; do
    for reads in two-sided one-sided; do
      run shared-memory "$reads" "$consistency" "$r" "$mpirun" -np 2
    done
  done
done

if [ "$(id -u)" = 0 ]; then
  prefix=prb
  netns_hosts_up "$prefix" "$rate"
  for r in $(seq "$repeat"); do
    for consistency in bsp ssp:3; do
      for reads in two-sided one-sided; do
        run "$rate-link" "$reads" "$consistency" "$r" netns_mpirun "$prefix" --mca pml ob1 --mca osc ucx \
          -x UCX_TLS=tcp
      done
    done
  done
fi

"$bench_python" "$here/summarize_ps_reads.py" "$raw" "$out/ps_reads.png" "$clocks" | tee -a "$out/ps_reads.txt"
