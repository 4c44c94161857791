#!/usr/bin/env bash
# Configures a checked build (CMakePresets.json: asan or tsan) for scripts/sanitize.sh and fuzz.sh.
# A folder configured earlier with another generator or compiler (Makefiles, or gcc for asan) is
# configured afresh; what else it holds (the fuzzers' corpus) stays.
# Usage: scripts/checked-preset.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:?usage: scripts/checked-preset.sh asan|tsan}
cache="build-$preset/CMakeCache.txt"
compiler=$([ "$preset" = asan ] && echo 'clang\+\+' || echo 'g\+\+')
if [ -f "$cache" ] && { ! grep -qsx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache" ||
                        ! grep -qsE "^CMAKE_CXX_COMPILER:[A-Z]*=(.*/)?$compiler\$" "$cache"; }; then
  rm -rf "$cache" "build-$preset/CMakeFiles"
fi
cmake --preset "$preset" > /dev/null
