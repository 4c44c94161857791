#!/usr/bin/env bash
# Installs the Debian packages parasol builds and runs with. Idempotent: packages already
# installed are skipped, and apt is not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libopenmpi-dev openmpi-bin        # launcher, transport, one-sided windows
  libgtest-dev libgmock-dev         # tests
  libbenchmark-dev                  # micro-benchmarks
  libcli11-dev                      # command line
  libfmt-dev                        # formatting
  nlohmann-json3-dev                # JSON output
  zlib1g-dev                        # gzipped IDX files
  libarchive-dev                    # corpora in .tar(.gz|.xz|.bz2) and .zip archives
  clang libclang-rt-dev             # fuzz/: libFuzzer targets (scripts/fuzz.sh)
  python3                           # benchmark summaries (bench/)
  libtorch-dev libopenblas0-pthread # parasol train: libtorch compute; OpenBLAS (reference BLAS is 30x slower)
  python3-torch                     # `import parasol` (parasol.torch) and bench/: PyTorch DDP beside parasol
  pybind11-dev python3-dev          # the Python extension
  libsvm-tools                      # tests and bench/: LIBSVM's svm-train beside parasol svm
  liblapack-dev                     # parasol mtrl: symmetric eigen decomposition (dsyevd)
  libmetis-dev                      # parasol gnn: graph partitions that cut few edges
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
