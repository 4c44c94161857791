#!/usr/bin/env bash
# parasol across "hosts": three network namespaces joined by veth through a bridge
# (scripts/netns-hosts.sh, 1 Gbit/s links), mpirun started in the first and reaching the others
# through scripts/netns-rsh, every byte between ranks over TCP between namespaces.
#  - allreduce-bench over 3 hosts; MF on the parameter server over 2 hosts ends within 1% of 2
#    processes on one host; LDA over 2 hosts within 1% of one process;
#  - LDA on 10 M tokens under a memory cap a host (a cgroup) that kills one process: over 2 hosts
#    it finishes within 1% of one uncapped process;
#  - every process of one host killed mid-run: the job ends well within the deadline, with a
#    non-zero exit naming the lost rank; resumed from its last checkpoint it ends where an
#    uninterrupted run ends;
#  - one host cut off (its link down, its processes alive): the surviving rank ends by the deadline
#    with an error naming itself and the lost rank (mpirun itself cannot tear down a host it cannot
#    reach and waits for it: the test ends it);
#  - 5 ms latency and 1% loss on every link (tc netem, where the kernel has it): the job ends with
#    the same result, slower.
# Needs root (network namespaces); skipped otherwise (exit 77). The namespaces are removed at the
# end, also on failure. Usage: multihost_test.sh PARASOL DATA_DIR PYTHON (with numpy)
set -u
parasol=$1
data=$2
python=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
hosts=$root/scripts/netns-hosts.sh
prefix=pmh$(($$ % 100000))
export NETNS_PREFIX=$prefix
bash "$hosts" usable "$prefix" || { echo "skipped: needs root and network namespaces"; exit 77; }
tmp=$(mktemp -d)
# A memory cgroup for each of hosts 1 and 2 (cgroup v1's memory controller, mounted again outside
# /sys, which `ip netns exec` replaces with the namespace's own); a process joins its host's
# through $in_host_memcg (the host is the rank's: one process a host).
memcg=/run/parasol-memcg-$prefix
memcg_up() {
  mkdir -p "$memcg" && { mountpoint -q "$memcg" || mount -t cgroup -o memory none "$memcg" 2>/dev/null; } &&
    mkdir -p "$memcg/${prefix}1" "$memcg/${prefix}2"
}
memcg_cap() {  # memcg_cap BYTES|-1; no swap either, where the kernel counts it
  local i
  for i in 1 2; do
    if [ "$1" = -1 ]; then
      [ -e "$memcg/$prefix$i/memory.memsw.limit_in_bytes" ] && echo -1 > "$memcg/$prefix$i/memory.memsw.limit_in_bytes"
      echo -1 > "$memcg/$prefix$i/memory.limit_in_bytes"
    else
      echo "$1" > "$memcg/$prefix$i/memory.limit_in_bytes"
      [ -e "$memcg/$prefix$i/memory.memsw.limit_in_bytes" ] && echo "$1" > "$memcg/$prefix$i/memory.memsw.limit_in_bytes"
    fi
  done
  return 0
}
memcg_reset_peak() { local i; for i in 1 2; do echo 0 > "$memcg/$prefix$i/memory.max_usage_in_bytes"; done; }
memcg_peak_mb() { echo $(($(cat "$memcg/$prefix$1/memory.max_usage_in_bytes") / 1048576)); }
in_host_memcg='echo $$ > '"$memcg/$prefix"'$((${OMPI_COMM_WORLD_RANK:-0} + 1))/cgroup.procs || exit 99; exec "$@"'
memcg_down() {
  [ -d "$memcg" ] || return 0
  rmdir "$memcg/${prefix}1" "$memcg/${prefix}2" 2>/dev/null
  umount "$memcg" 2>/dev/null
  rmdir "$memcg" 2>/dev/null
  return 0
}
cleanup() { memcg_down; bash "$hosts" down "$prefix" 3; rm -rf "$tmp"; }
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
bash "$hosts" up "$prefix" 3 1gbit || { echo "FAIL: netns-hosts.sh up"; exit 1; }

# across NP COMMAND...: one rank on each of hosts 1..NP, mpirun on host 1, at most LIMIT seconds.
across() {
  local np=$1
  shift
  timeout -k 5 "${LIMIT:-180}" ip netns exec "${prefix}1" "$root/scripts/mpirun.sh" \
    --host "$(seq -s, -f '10.77.0.%g:1' 1 "$np")" -np "$np" \
    --mca plm_rsh_agent "$root/scripts/netns-rsh" --mca btl tcp,self \
    --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "$@" < /dev/null
}
final() { grep '^final objective' "$1" | awk '{print $3}'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# The clock of the checkpoint in DIR, once it is at least MIN (at most 120 s).
wait_for_checkpoint() {
  local i
  for i in $(seq 1200); do
    local c
    c=$(awk '$1 == "clock" { print $2 }' "$1/MANIFEST" 2>/dev/null)
    if [ -n "$c" ] && [ "$c" -ge "$2" ]; then echo "$c"; return 0; fi
    sleep 0.1
  done
  return 1
}

# Collectives over three hosts.
across 3 "$parasol" allreduce-bench --sizes 8,1M --iters 3 --algos ring,halving-doubling,mpi \
  --csv "$tmp/ar.csv" > "$tmp/out" 2>&1 || { fail "allreduce-bench over 3 hosts"; cat "$tmp/out"; }
if [ "$(wc -l < "$tmp/ar.csv" 2>/dev/null)" = 7 ] &&
   [ "$(cut -d, -f2 "$tmp/ar.csv" | sort -u | head -1)" = 3 ]; then
  echo "ok: allreduce-bench over 3 hosts"
else
  fail "allreduce-bench CSV"; cat "$tmp/ar.csv" 2>/dev/null
fi

# MF on the parameter server (BSP: the result does not depend on timing) over 2 hosts and on one.
mf=("$parasol" mf --data synthetic --workers 1 --consistency bsp --seed 3)
across 2 "${mf[@]}" --clocks 30 > "$tmp/mf2.txt" 2>&1 || { fail "mf over 2 hosts"; cat "$tmp/mf2.txt"; }
"$root/scripts/mpirun.sh" -np 2 "${mf[@]}" --clocks 30 > "$tmp/mf1.txt" 2>&1 \
  || fail "mf, 2 processes on one host"
# Not bit for bit: MF's second table has no staleness bound, so reads depend on timing (a loaded
# machine moves the 4th digit); within 1%.
close() {  # close TOLERANCE A B: |A - B| <= TOLERANCE * |A|
  python3 -c "import sys; t, a, b = map(float, sys.argv[1:]); sys.exit(abs(a - b) > t * abs(a))" "$@" 2>/dev/null
}
if close 0.01 "$(final "$tmp/mf1.txt")" "$(final "$tmp/mf2.txt")"; then
  echo "ok: mf over 2 hosts within 1% of 2 processes on one host ($(final "$tmp/mf2.txt"), $(final "$tmp/mf1.txt"))"
else
  fail "mf over 2 hosts: '$(final "$tmp/mf2.txt")' vs '$(final "$tmp/mf1.txt")'"
fi

# LDA over 2 hosts (word blocks rotating between them) against one process.
lda=("$parasol" lda --corpus "$data/ap/ap.dat" --topics 20 --seed 3 --iterations 40 --eval-every 0)
across 2 "${lda[@]}" --metrics "$tmp/lda2.csv" > "$tmp/out" 2>&1 \
  || { fail "lda over 2 hosts"; cat "$tmp/out"; }
"${lda[@]}" --metrics "$tmp/lda1.csv" > /dev/null 2>&1 || fail "lda, one process"
python3 -c "
import sys
a, b = (float(open(f).read().split()[-1].split(',')[3]) for f in sys.argv[1:3])
print(f'   loglik per token: 2 hosts {b:.4f}, one process {a:.4f}')
sys.exit(abs(a - b) > 0.01 * abs(a))" "$tmp/lda1.csv" "$tmp/lda2.csv" \
  && echo "ok: lda over 2 hosts within 1% of one process" || fail "lda over 2 hosts not within 1%"

# LDA under a memory cap a host that one process exceeds (a memory cgroup a host, as a machine of
# that size): 10 M tokens drawn from an LDA model (bench/lda_synthetic.py), K = 1,000. One process
# holds about 340 MB while it trains, each of two hosts about 210-260 MB: the tokens' topics and the
# word-topic counts are split between the hosts, the corpus read whole by each.
cap_mb=300
if memcg_up; then
  "$python" "$root/bench/lda_synthetic.py" "$tmp/synth.lines" 10000000 > /dev/null || fail "lda_synthetic.py"
  big=("$parasol" lda --corpus "$tmp/synth.lines" --topics 1000 --seed 3 --iterations 6 --eval-every 0
    --coherence-words 0)
  "${big[@]}" --metrics "$tmp/big1.csv" > "$tmp/big1.txt" 2>&1 || fail "lda on 10 M tokens, one process"
  memcg_cap $((cap_mb * 1024 * 1024))
  code=0
  ip netns exec "${prefix}1" bash -c "$in_host_memcg" in-host-memcg "${big[@]}" > "$tmp/capped1.txt" 2>&1 || code=$?
  # 137: killed (SIGKILL) by the cgroup's out-of-memory killer.
  [ "$code" = 137 ] && echo "ok: one process under a $cap_mb MB cap is killed" \
    || { fail "one process under a $cap_mb MB cap: exit $code, expected 137"; tail -5 "$tmp/capped1.txt"; }
  memcg_reset_peak
  across 2 bash -c "$in_host_memcg" in-host-memcg "${big[@]}" --metrics "$tmp/big2.csv" > "$tmp/capped2.txt" 2>&1 \
    || { fail "lda over 2 hosts under a $cap_mb MB cap a host"; tail -20 "$tmp/capped2.txt"; }
  echo "   peak memory: host 1 $(memcg_peak_mb 1) MB, host 2 $(memcg_peak_mb 2) MB (cap $cap_mb MB)"
  memcg_cap -1
  python3 -c "
import sys
a, b = (float(open(f).read().split()[-1].split(',')[3]) for f in sys.argv[1:3])
print(f'   loglik per token: 2 capped hosts {b:.4f}, one uncapped process {a:.4f}')
sys.exit(abs(a - b) > 0.01 * abs(a))" "$tmp/big1.csv" "$tmp/big2.csv" \
    && echo "ok: lda over 2 hosts under the cap within 1% of one uncapped process" \
    || fail "lda over 2 capped hosts not within 1% of one process"
else
  echo "skipped: lda under a memory cap (no cgroup v1 memory controller to mount)"
fi

# Every process of host 2 killed mid-run; then resumed from the last checkpoint.
long=("${mf[@]}" --clocks 400 --timeout-ms 20000)
across 2 "${long[@]}" > "$tmp/straight.txt" 2>&1 || { fail "uninterrupted mf"; cat "$tmp/straight.txt"; }
across 2 "${long[@]}" --checkpoint "$tmp/ckpt" --checkpoint-every 25 > "$tmp/killed.txt" 2>&1 &
job=$!
if clock=$(wait_for_checkpoint "$tmp/ckpt" 100); then
  t0=$(now_ms)
  # The rank first, then everything else of the host (its MPI daemon): mpirun names the rank it
  # saw die; when the daemon goes first, OpenMPI reports only a lost daemon.
  ip netns pids "${prefix}2" | xargs -r ps -o pid=,args= -p | awk -v p="$parasol" '$2 == p { print $1 }' \
    | xargs -r kill -9
  sleep 0.5
  ip netns pids "${prefix}2" | xargs -r kill -9
  wait "$job"
  code=$?
  ms=$(($(now_ms) - t0))
  echo "   host 2 killed after the checkpoint of clock $clock: mpirun exit $code after $ms ms"
  if [ "$code" -ne 0 ] && [ "$code" -ne 124 ] && [ "$ms" -lt 20000 ] &&
     grep -q "process rank 1 .* exited on signal 9" "$tmp/killed.txt"; then
    echo "ok: a lost host ends the job within the deadline, naming the lost rank"
  else
    fail "lost host: exit $code after $ms ms"; tail -20 "$tmp/killed.txt"
  fi
  across 2 "${long[@]}" --resume "$tmp/ckpt" > "$tmp/resumed.txt" 2>&1 \
    || { fail "resume"; cat "$tmp/resumed.txt"; }
  # Within 0.5%, not bit for bit (docs/reliability.md: 0.12% seen on a loaded machine).
  if close 0.005 "$(final "$tmp/straight.txt")" "$(final "$tmp/resumed.txt")"; then
    echo "ok: resumed after the loss, ends where the uninterrupted run ends" \
      "($(final "$tmp/resumed.txt") and $(final "$tmp/straight.txt"))"
  else
    fail "resumed '$(final "$tmp/resumed.txt")' vs uninterrupted '$(final "$tmp/straight.txt")'"
  fi
else
  fail "no checkpoint of clock 100 within 120 s"; kill "$job"; wait "$job"
fi

# Host 2 cut off: its link down, its processes alive. Rank 0 must end by the deadline (5 s), naming
# rank 1 either as the shard that did not answer or as what holds rank 0's own shard back (which
# one depends on whose row rank 0 read first).
across 2 "${mf[@]}" --clocks 100000 --timeout-ms 5000 --checkpoint "$tmp/cut" --checkpoint-every 25 \
  > "$tmp/cut.txt" 2>&1 &
job=$!
if wait_for_checkpoint "$tmp/cut" 50 > /dev/null; then
  t0=$(now_ms)
  ip -n "${prefix}2" link set "$prefix-h2" down
  gone=
  for i in $(seq 300); do  # 30 s
    if ! ip netns pids "${prefix}1" | xargs -r ps -o args= -p | grep -q "^$parasol mf"; then
      gone=$(($(now_ms) - t0))
      break
    fi
    sleep 0.1
  done
  echo "   rank 0 ended ${gone:-(not)} ms after host 2 was cut off"
  if [ -n "$gone" ] && [ "$gone" -lt 15000 ] &&
     grep -qE "rank 0: .*(shard 1 \(rank 1\) did not answer by the deadline|held back by rank 1\))" \
       "$tmp/cut.txt"; then
    echo "ok: a host cut off ends the surviving rank by the deadline, naming both ranks"
  else
    fail "host cut off"; grep -v '^ *[0-9]' "$tmp/cut.txt" | head -20
  fi
else
  fail "no checkpoint of clock 50 within 120 s"
fi
ip netns pids "${prefix}1" | xargs -r kill -9  # mpirun waits for host 2's daemon
wait "$job" 2>/dev/null
ip -n "${prefix}2" link set "$prefix-h2" up

# Latency and loss on every link: the same result, slower. (Some kernels, e.g. minimal VM ones,
# have no netem qdisc: then this part says it is skipped.)
if ip netns exec "${prefix}3" tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
  ip netns exec "${prefix}3" tc qdisc del dev lo root
  bash "$hosts" netem "$prefix" 3 delay 5ms loss 1% || fail "netem"
  across 2 "${mf[@]}" --clocks 30 > "$tmp/netem.txt" 2>&1 || { fail "mf under netem"; cat "$tmp/netem.txt"; }
  echo "   mf over 2 hosts, 30 clocks: $(grep -o '[0-9.]* s$' "$tmp/mf2.txt") clean," \
    "$(grep -o '[0-9.]* s$' "$tmp/netem.txt") with 5 ms and 1% loss"
  close 0.01 "$(final "$tmp/mf2.txt")" "$(final "$tmp/netem.txt")" \
    && echo "ok: mf under latency and loss ends with the same result" \
    || fail "mf under netem: '$(final "$tmp/netem.txt")' vs '$(final "$tmp/mf2.txt")'"
else
  echo "skipped: latency and loss (this kernel has no netem qdisc)"
fi

[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
