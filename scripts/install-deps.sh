#!/usr/bin/env bash
# Installs what parasol builds and runs with: Debian's packages (system libraries, MPI, test and
# command-line tools), then the project's Python environment .venv (PyTorch 2 from PyPI and the
# Python packages the tests and benchmarks use, pinned in requirements.txt). Idempotent: apt is not
# touched when every package is there, pip not when .venv already holds requirements.txt.
#   PARASOL_PYTHON   the interpreter .venv is made from (default: python3 on PATH, 3.10 or newer)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  build-essential cmake ninja-build pkg-config
  ccache                            # rebuilds and `pip install .` reuse objects compiled alike
  libopenmpi-dev openmpi-bin        # launcher, transport, one-sided windows
  libgtest-dev libgmock-dev         # tests
  libbenchmark-dev                  # micro-benchmarks
  libcli11-dev                      # command line
  libfmt-dev                        # formatting
  nlohmann-json3-dev                # JSON output
  zlib1g-dev                        # gzipped IDX files
  libarchive-dev                    # corpora in .tar(.gz|.xz|.bz2) and .zip archives
  clang libclang-rt-dev             # fuzz/: libFuzzer targets (scripts/fuzz.sh)
  clang-format                      # make lint, make format (.clang-format)
  python3 python3-venv python3-dev  # .venv when Debian's python3 makes it; the extension's headers
  libsvm-tools                      # tests and bench/: LIBSVM's svm-train beside parasol svm
  libeigen3-dev                     # parasol mtrl: symmetric eigen decomposition (header-only)
  libmetis-dev                      # parasol gnn: graph partitions that cut few edges
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python="${PARASOL_PYTHON:-python3}"
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "install-deps: $python is $("$python" --version 2>&1); parasol's environment needs Python 3.10 or newer" \
         "(name one with PARASOL_PYTHON=...)" >&2
    exit 1
  fi
  echo "install-deps: making $venv from $("$python" --version 2>&1)"
  "$python" -m venv "$venv"
fi
# The wheels are kept in .venv/wheels: tools/tests/pip_install_test.sh installs torch into a fresh
# environment from there, so no test downloads anything. It links torch's CUDA libraries from .venv
# instead of installing them, so their wheels (2.3 GB) are deleted once installed.
if ! cmp -s "$root/requirements.txt" "$venv/parasol-requirements.txt"; then
  echo "install-deps: installing requirements.txt into .venv (PyTorch's first download is about 3 GB)"
  # The download peaks at about 10 GB on disk (the wheels, then what they install); pip's own cache
  # would hold a second copy of the wheels, so it is not used.
  free_gb=$(df -P -BG "$root" | awk 'NR == 2 { sub("G", "", $4); print $4 }')
  if [ "${free_gb:-0}" -lt 12 ]; then
    echo "install-deps: warning: $root has ${free_gb} GB free; .venv and the builds take about 12 GB" >&2
  fi
  "$venv/bin/python" -m pip download --disable-pip-version-check --no-cache-dir -q -d "$venv/wheels" \
    -r "$root/requirements.txt"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-cache-dir -q --no-index \
    --find-links "$venv/wheels" -r "$root/requirements.txt"
  rm -f "$venv"/wheels/{nvidia_,triton-,cuda_}*.whl
  cp "$root/requirements.txt" "$venv/parasol-requirements.txt"
fi
