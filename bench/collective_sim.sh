#!/usr/bin/env bash
# Simulated targets: torus2d on a 32x32 torus against the bandwidth bound; tree packing against a
# single ring on the DGX-1-like topology; ft-mesh on 16x16 and 32x32 meshes with 1 to 4 failed nodes
# against the same mesh without failures. Usage: collective_sim.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:-build}
out=${2:-bench/results}
mkdir -p "$out"
sim="$build/tools/parasol collective-sim"
source "$(dirname "$0")/deps.sh"
{
  echo "## torus2d, torus:32x32, 256 MiB, 50 GB/s links, 1 us"
  $sim --topology torus:32x32 --algo torus2d --bytes 256M --link-gbps 50 --latency-us 1
  echo
  echo "## DGX-1-like (NVLink 20 GB/s), 256 MiB"
  $sim --topology dgx1 --algo all --bytes 256M
  echo
  echo "## ft-mesh, mesh:16x16 and mesh:32x32, 256 MiB, 25 GB/s links"
  "$bench_python" "$(dirname "$0")/ft_mesh_failures.py" "$build/tools/parasol" "$out"
} | tee "$out/collective_sim.txt"
