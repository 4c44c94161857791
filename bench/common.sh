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
