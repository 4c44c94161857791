#!/usr/bin/env bash
# Configures a checked build (CMakePresets.json: asan or tsan) for scripts/sanitize.sh and fuzz.sh.
# A folder configured earlier with another generator or another compiler than the preset names
# (Makefiles, or gcc for asan) is configured afresh; what else it holds (the fuzzers' corpus) stays.
# Usage: scripts/checked-preset.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:?usage: scripts/checked-preset.sh asan|tsan}
cache="build-$preset/CMakeCache.txt"
# The C++ compiler the preset names, through the presets it inherits from.
compiler=$(python3 - "$preset" <<'PY'
import json, sys
presets = {p["name"]: p for p in json.load(open("CMakePresets.json"))["configurePresets"]}
p = presets[sys.argv[1]]
while "CMAKE_CXX_COMPILER" not in p.get("cacheVariables", {}) and "inherits" in p:
    p = presets[p["inherits"]]
print(p.get("cacheVariables", {}).get("CMAKE_CXX_COMPILER", ""))
PY
)
if [ -f "$cache" ]; then
  cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
  if ! grep -qsx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache" || [ "$(basename "$cached")" != "$compiler" ]; then
    rm -rf "$cache" "build-$preset/CMakeFiles"
  fi
fi
cmake --preset "$preset" > /dev/null
