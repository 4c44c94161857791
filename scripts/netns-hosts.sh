#!/usr/bin/env bash
# Several "hosts" on one machine for tests and benchmarks that cross a network: network
# namespaces PREFIX1 .. PREFIXN, each with a veth link to a bridge in PREFIX-sw, addresses
# 10.77.0.1 .. 10.77.0.N/24, every link shaped to RATE (tc tbf) and optionally delayed or lossy
# (tc netem). Root only; traffic stays inside the namespaces this script made.
#
#   netns-hosts.sh up PREFIX N [RATE] [NETEM...]   e.g. up ph 2 1gbit    up ph 3 1gbit delay 5ms loss 1%
#   netns-hosts.sh netem PREFIX N NETEM...          change the links' delay/loss while running
#   netns-hosts.sh down PREFIX N                    removes them (also what a failed test's trap calls)
#   netns-hosts.sh usable PREFIX                    exits 0 where namespaces can be made (root, a kernel
#                                                   that has them): tests skip otherwise
#
# Launch across them with mpirun from inside the first host and scripts/netns-rsh as the agent:
#   ip netns exec PREFIX1 scripts/mpirun.sh --host 10.77.0.1:1,10.77.0.2:1 \
#     --mca plm_rsh_agent "$PWD/scripts/netns-rsh" --mca btl tcp,self \
#     --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 -np 2 CMD...
# netns-rsh maps 10.77.0.K to namespace PREFIXK through NETNS_PREFIX (exported by the caller).
set -euo pipefail
cmd=${1:?usage: netns-hosts.sh up|netem|down|usable PREFIX N [RATE] [NETEM...]}
prefix=${2:?prefix}
if [ "$cmd" = usable ]; then
  [ "$(id -u)" -eq 0 ] && ip netns add "$prefix-probe" 2>/dev/null && ip netns del "$prefix-probe"
  exit
fi
n=${3:?number of hosts}
shift 3

shape() {  # shape NS DEV RATE [NETEM...]
  local ns=$1 dev=$2 rate=$3
  shift 3
  ip -n "$ns" link set "$dev" up
  tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
  if [ $# -gt 0 ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: netem "$@" rate "$rate"
  else
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$rate" burst 256kb latency 100ms
  fi
}

case $cmd in
  up)
    rate=${1:-1gbit}
    [ $# -gt 0 ] && shift
    ip netns add "$prefix-sw"
    ip -n "$prefix-sw" link add br0 type bridge
    ip -n "$prefix-sw" link set br0 up
    for i in $(seq 1 "$n"); do
      ns=$prefix$i
      ip netns add "$ns"
      ip link add "$prefix-h$i" type veth peer name "$prefix-s$i"
      ip link set "$prefix-h$i" netns "$ns"
      ip link set "$prefix-s$i" netns "$prefix-sw"
      ip -n "$prefix-sw" link set "$prefix-s$i" master br0
      ip -n "$prefix-sw" link set "$prefix-s$i" up
      ip -n "$ns" addr add "10.77.0.$i/24" dev "$prefix-h$i"
      ip -n "$ns" link set lo up
      shape "$ns" "$prefix-h$i" "$rate" "$@"
    done
    ;;
  netem)
    for i in $(seq 1 "$n"); do shape "$prefix$i" "$prefix-h$i" "${RATE:-1gbit}" "$@"; done
    ;;
  down)
    for i in $(seq 1 "$n"); do
      ip netns pids "$prefix$i" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
      ip netns del "$prefix$i" 2>/dev/null || true
    done
    ip netns del "$prefix-sw" 2>/dev/null || true
    ;;
  *) echo "netns-hosts.sh: unknown command $cmd" >&2; exit 2 ;;
esac
