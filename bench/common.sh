# Sourced first by the benchmark scripts that take `BUILD_DIR OUT_DIR` (pass them "$@"): sets
# build, out (created), here (bench/), root (the repository) and repeat (REPEAT, default 3), and
# brings in ensure_debian_packages.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=$(mkdir -p "${2:-bench/results}" && cd "${2:-bench/results}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
repeat=${REPEAT:-3}
source "$here/deps.sh"
# netns_tx_bytes PREFIX: the bytes the two hosts of scripts/netns-hosts.sh PREFIX have put on their
# links so far.
netns_tx_bytes() {
  local sum=0 i
  for i in 1 2; do
    sum=$((sum + $(ip netns exec "$1$i" cat "/sys/class/net/$1-h$i/statistics/tx_bytes")))
  done
  echo "$sum"
}
# netns_hosts_up PREFIX RATE: the two hosts of scripts/netns-hosts.sh PREFIX joined by RATE links
# (any left by an earlier run taken down first), taken down again when the script exits.
netns_hosts_up() {
  export NETNS_PREFIX=$1
  # shellcheck disable=SC2064  # the prefix of this call, not of the exit
  trap "bash '$root/scripts/netns-hosts.sh' down '$1' 2" EXIT
  bash "$root/scripts/netns-hosts.sh" down "$1" 2 2>/dev/null || true
  bash "$root/scripts/netns-hosts.sh" up "$1" 2 "$2"
}
# netns_mpirun PREFIX ARGS...: mpirun started on host 1 of PREFIX, one process on each host, MPI's
# messages over btl tcp on the link; ARGS are mpirun's further options and the command.
netns_mpirun() {
  local prefix=$1
  shift
  ip netns exec "${prefix}1" "$root/scripts/mpirun.sh" --host 10.77.0.1:1,10.77.0.2:1 -np 2 \
    --mca plm_rsh_agent "$root/scripts/netns-rsh" --mca btl tcp,self \
    --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "$@"
}
