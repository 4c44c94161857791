#!/usr/bin/env bash
# Topic models on hosts joined by a real link (issue 44): `parasol lda` on two network-namespace
# hosts of one process and one thread each, joined by RATE (1 Gbit/s) links, the word blocks
# rotating over the wire, against one such process alone, on a corpus of SYNTH_TOKENS (200 M)
# tokens drawn from the LDA model (bench/lda_synthetic.py, shared with lda_million_bench.sh) at
# K topics (10,000), ITERATIONS iterations each, interleaved REPEAT times. Per run: the median
# tokens/s after the first iteration, the log-likelihood per token at the end, the bytes the hosts
# put on their links and where an iteration's time went (parasol's own split: sampling, waiting
# for a word block, summing the topic totals). Then the memory cap: each host's memory limited to
# CAP_MB (a cgroup per host, as a machine of that size), which one process exceeds and each of
# the two does not: one process alone must be stopped, the two hosts must finish within 1% of the
# one-process run's log-likelihood. Root only (network namespaces, cgroups).
# Usage: lda_link_bench.sh BUILD_DIR OUT_DIR
# Environment: SYNTH_TOKENS, K, ITERATIONS (3), REPEAT (3), RATE (1gbit), CAP_MB (5000), BLOCKS (4,
# parasol's default of two word blocks a process: each 100 MB handoff (2 bytes a topic) hides behind a step.
# Eight, as this benchmark ran until 2026-11-29, halve the handoffs but split every document into
# eight pieces a process recounts once each: 1.1 s more sampling an iteration for 0.3 s less waiting).
source "$(dirname "$0")/common.sh" "$@"
[ "$(id -u)" = 0 ] || { echo "lda_link_bench: network namespaces need root: skipped" >&2; exit 0; }
parasol="$build/tools/parasol"
data="$out/lda_link_data"
mkdir -p "$data"
corpus="$data/synth.lines"
tokens=${SYNTH_TOKENS:-200000000}
k=${K:-10000}
iterations=${ITERATIONS:-3}
rate=${RATE:-1gbit}
cap_mb=${CAP_MB:-5000}
# The memory controller (cgroup v1, as this machine mounts it) mounted again outside /sys, which
# `ip netns exec` replaces with the namespace's own sysfs.
cgroups=/run/parasol-memcg-plk
prefix=plk
raw="$out/lda_link_runs.csv"
if [ ! -s "$corpus" ]; then "$bench_python" "$here/lda_synthetic.py" "$corpus" "$tokens" > /dev/null; fi
echo "setup,run,exit,seconds,peak_rss_mb,link_bytes,log" > "$raw"
echo "# $(date -u) $(uptime); K $k, $iterations iterations, $rate links" | tee "$out/lda_link_machine.txt"
netns_hosts_up "$prefix" "$rate"
# A memory cgroup per host; a process joins its host's.
mkdir -p "$cgroups"
mountpoint -q "$cgroups" || mount -t cgroup -o memory none "$cgroups"
for i in 1 2; do
  rmdir "$cgroups/$prefix$i" 2>/dev/null || true
  mkdir "$cgroups/$prefix$i"
done
trap 'for i in 1 2; do rmdir "$cgroups/$prefix$i" 2>/dev/null || true; done; umount "$cgroups"
  bash "$root/scripts/netns-hosts.sh" down "$prefix" 2' EXIT
cap_hosts() {  # cap_hosts BYTES|-1
  local i
  for i in 1 2; do echo "$1" > "$cgroups/$prefix$i/memory.limit_in_bytes"; done
}
# mpirun's processes are not time's children: each process times itself, into LOG.rss.RANK, from
# inside its host's cgroup (the host is the rank's: one process a host).
timed='r=${OMPI_COMM_WORLD_RANK:-0}; echo $$ > '"$cgroups/$prefix"'$((r + 1))/cgroup.procs || exit 99
exec /usr/bin/time -f %M -o "$0.rss.$r" "$@"'
lda_args=(lda --corpus "$corpus" --topics "$k" --iterations "$iterations" --threads 1 --eval-every 0
  --coherence-words 0 --blocks "${BLOCKS:-4}")  # one process holds no blocks: --blocks changes nothing

run() {  # run SETUP R: one process on host 1, or mpirun over both hosts
  local setup=$1 r=$2 log="$data/$1.$2" before after start end code=0
  rm -f "$log".rss.*
  before=$(netns_tx_bytes "$prefix")
  start=$(date +%s.%N)
  if [ "${setup%%-*}" = one ]; then
    ip netns exec "${prefix}1" bash -c "$timed" "$log" "$parasol" "${lda_args[@]}" \
      --metrics "$log.csv" > "$log.out" 2>&1 || code=$?
  else
    netns_mpirun "$prefix" bash -c "$timed" "$log" "$parasol" "${lda_args[@]}" \
      --metrics "$log.csv" > "$log.out" 2>&1 || code=$?
  fi
  end=$(date +%s.%N)
  after=$(netns_tx_bytes "$prefix")
  local rss
  rss=$(cat "$log".rss.* 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1)
  echo "$setup,$r,$code,$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }'),$((${rss:-0} / 1024)),$((after - before)),$log" |
    tee -a "$raw"
}

for r in $(seq 1 "$repeat"); do
  run one "$r"
  run two-hosts "$r"
done
cap_hosts $((cap_mb * 1024 * 1024))
run one-capped 1
run two-hosts-capped 1
cap_hosts -1
echo "# end: $(date -u) $(uptime)" | tee -a "$out/lda_link_machine.txt"
"$bench_python" "$here/summarize_lda_link.py" "$raw" "$out/lda_link.png" "$cap_mb" | tee "$out/lda_link_summary.md"
