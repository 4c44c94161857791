#!/usr/bin/env bash
# `pip install .` as a PyTorch user does it: a fresh virtual environment, torch installed into it
# with pip (requirements.txt's pin), then this source tree installed with pip (built against that
# torch). Nothing is downloaded: pip takes every wheel, torch's and the build's (scikit-build-core
# in pip's isolated build environment), from the project's .venv/wheels (scripts/install-deps.sh).
# From that environment alone (no PYTHONPATH, no build tree): the command starts, `parasol train`
# finds its module in the package, a 2-rank DDP job over the "parasol" backend ends with one
# process's parameters.
# One difference from a user's environment, for the disk: torch's CUDA libraries (the nvidia-*
# packages, 3.2 GB installed, which nothing here runs) are not installed again but linked from
# .venv, so torch and this tree are installed with --no-deps (pip would otherwise install the CUDA
# packages torch names). The environment then takes about 1.5 GB; with less than 3 GB free in
# TMPDIR the test is skipped (exit 77) and says so.
# Usage: pip_install_test.sh SOURCE_DIR MPIRUN PYTHON
set -euo pipefail
src=$1 mpirun=$2 python=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset PYTHONPATH
fail() { echo "FAIL: $*" >&2; exit 1; }

wheels="$src/.venv/wheels"
[ -d "$wheels" ] || fail "no $wheels: run scripts/install-deps.sh"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels"  # also for pip's isolated build environment
free_kb=$(df -Pk "$tmp" | awk 'NR == 2 {print $4}')
if [ "$free_kb" -lt $((3 * 1024 * 1024)) ]; then
  echo "SKIP: $((free_kb / 1024)) MB free in $(dirname "$tmp"); the environment and build need 3 GB"
  exit 77
fi
"$python" -m venv "$tmp/env"
env="$tmp/env/bin"
site=$("$env/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
ln -s "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/nvidia" "$site/nvidia"
# torch and the packages it imports, each at requirements.txt's pin
pins=()
for p in torch filelock typing_extensions sympy mpmath networkx jinja2 markupsafe fsspec numpy; do
  pins+=("$(grep -iE "^${p//_/[-_]}==" "$src/requirements.txt")") || fail "no pin for $p in requirements.txt"
done
"$env/pip" install --disable-pip-version-check -q --no-deps "${pins[@]}"
start=$(date +%s)
# As the main build (CMake's default compiler names, warnings as errors, Ninja): ccache then
# serves every object compiled without torch's headers; those with them are compiled again against
# this environment's torch. (scikit-build-core would name Python's compiler, g++, and nproc follows
# OMP_NUM_THREADS, which the tests set to 1.)
CC=cc CXX=c++ CMAKE_GENERATOR=Ninja CMAKE_BUILD_PARALLEL_LEVEL=$(getconf _NPROCESSORS_ONLN) "$env/pip" install \
  --disable-pip-version-check -q --no-deps -C cmake.define.PARASOL_WERROR=ON "$src" > "$tmp/pip.log" 2>&1 ||
  { tail -30 "$tmp/pip.log"; fail "pip install of the source tree"; }
echo "ok: pip install . ($(( $(date +%s) - start )) s)"

[ "$("$env/parasol" --version)" = "parasol 0.1.0" ] || fail "parasol --version from the environment's bin/"
echo "ok: $env/parasol --version"

"$mpirun" -np 2 "$env/parasol" train --model mlp --dataset synthetic --samples 256 --steps 4 --batch 8 \
  --no-eval --no-progress > "$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "parasol train from the installed command"; }
grep -q "2 ranks x batch 8" "$tmp/train.log" || { cat "$tmp/train.log"; fail "parasol train did not run on 2 ranks"; }
echo "ok: parasol train under mpirun -np 2 (its module from the package)"

cd "$tmp"  # not the source tree: the installed package must be the one imported
"$env/python" -c "import parasol, torch; assert parasol.__file__.startswith('$tmp'), parasol.__file__" ||
  fail "import parasol does not find the installed package"
"$mpirun" -np 2 "$env/python" "$src/python/tests/c10d_worker.py" ddp parasol > "$tmp/ddp.log" 2>&1 ||
  { cat "$tmp/ddp.log"; fail "DDP over the parasol backend from the installed package"; }
"$env/python" - "$tmp/ddp.log" <<'PY' || fail "DDP's parameters differ from one process's"
import json, sys
line = next(json.loads(l) for l in open(sys.argv[1]) if l.startswith("{"))
assert line["diff"] < 2e-5 and line["spread"] == 0.0, line
print(f"ok: 2-rank DDP over the parasol backend, largest difference from one process {line['diff']:.2e}")
PY
