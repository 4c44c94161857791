#!/usr/bin/env bash
# `pip install .` as a PyTorch user does it: a fresh virtual environment with torch in it, then
# this source tree installed with pip (built against that torch). Nothing is downloaded: pip takes
# every wheel (the packages torch imports, scikit-build-core in pip's isolated build environment)
# from the project's .venv/wheels (scripts/install-deps.sh).
# From that environment alone (no PYTHONPATH, no build tree): the command starts, `parasol train`
# finds its module in the package, a 2-rank DDP job over the "parasol" backend ends with one
# process's parameters.
# One difference from a user's environment: torch's wheel (requirements.txt's pin) and the CUDA
# libraries it names (the nvidia-* packages, 3.2 GB, which nothing here runs) are not installed
# again but linked from the project's .venv, and this tree is installed with --no-deps. The build
# names torch by its real path (cmake/ParasolTorch.cmake) and runs in a folder beside the main
# build's (BUILD_DIR-pip), so ccache (CMakeLists.txt: base_dir) serves every object the main build
# compiled alike and only what differs is compiled. With less than 2 GB free in TMPDIR or beside
# the build the test is skipped (exit 77) and says so.
# Usage: pip_install_test.sh SOURCE_DIR MPIRUN PYTHON BUILD_DIR
set -euo pipefail
src=$1 mpirun=$2 python=$3 build=$4
pip_build="$build-pip"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$pip_build"' EXIT
rm -rf "$pip_build"
unset PYTHONPATH
fail() { echo "FAIL: $*" >&2; exit 1; }

wheels="$src/.venv/wheels"
[ -d "$wheels" ] || fail "no $wheels: run scripts/install-deps.sh"
export PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels"  # also for pip's isolated build environment
for dir in "$tmp" "$(dirname "$pip_build")"; do
  free_kb=$(df -Pk "$dir" | awk 'NR == 2 {print $4}')
  if [ "$free_kb" -lt $((2 * 1024 * 1024)) ]; then
    echo "SKIP: $((free_kb / 1024)) MB free in $dir; the environment and build need 2 GB"
    exit 77
  fi
done
"$python" -m venv "$tmp/env"
env="$tmp/env/bin"
site=$("$env/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
venv_site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# torch's wheel: the folders its RECORD names (torch, torchgen, functorch, its .dist-info)
for top in nvidia $(cut -d, -f1 "$venv_site"/torch-*.dist-info/RECORD | cut -d/ -f1 | grep -v '^\.\.$' | sort -u); do
  ln -s "$venv_site/$top" "$site/$top"
done
# the packages torch imports, each at requirements.txt's pin
pins=()
for p in filelock typing_extensions sympy mpmath networkx jinja2 markupsafe fsspec numpy; do
  pins+=("$(grep -iE "^${p//_/[-_]}==" "$src/requirements.txt")") || fail "no pin for $p in requirements.txt"
done
"$env/pip" install --disable-pip-version-check -q --no-deps "${pins[@]}"
start=$(date +%s)
# As the main build (CMake's default compiler names, warnings as errors, Ninja, a folder beside it),
# so that ccache serves its objects. (scikit-build-core would name Python's compiler, g++, and nproc
# follows OMP_NUM_THREADS, which the tests set to 1.)
CC=cc CXX=c++ CMAKE_GENERATOR=Ninja CMAKE_BUILD_PARALLEL_LEVEL=$(getconf _NPROCESSORS_ONLN) "$env/pip" install \
  --disable-pip-version-check -q --no-deps -C cmake.define.PARASOL_WERROR=ON -C build-dir="$pip_build" "$src" \
  > "$tmp/pip.log" 2>&1 ||
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
