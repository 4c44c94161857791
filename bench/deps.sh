# Sourced by benchmark scripts: bench_python, the project's environment (.venv: PyTorch,
# torchvision, numpy, scikit-learn, matplotlib, pinned in requirements.txt), and
# ensure_debian_packages, which installs the Debian packages a benchmark needs (peers) when
# missing. Benchmarks only; `make run` and `make test` use scripts/install-deps.sh.
bench_python="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.venv/bin/python"
[ -x "$bench_python" ] || { echo "bench: no $bench_python: run scripts/install-deps.sh (make) first" >&2; exit 1; }
ensure_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "bench: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
}
