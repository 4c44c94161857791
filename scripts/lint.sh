#!/usr/bin/env bash
# The style gate (make lint; CI runs it first): every tracked C++ file as .clang-format formats it,
# no line over 110 columns, and the layer rule (scripts/check_layers.py). Tools from Debian's
# packages (clang-format, python3). `make format` applies the formatter.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=0
mapfile -t files < <(git ls-files '*.cc' '*.h')
if ! command -v clang-format > /dev/null; then
  echo "lint: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2> /tmp/parasol-lint.$$; then
  grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning)' /tmp/parasol-lint.$$ | sed 's/: error: /: /' | head -50
  echo "lint: $(grep -c 'error:' /tmp/parasol-lint.$$) places not formatted (make format fixes them)"
  failed=1
fi
rm -f /tmp/parasol-lint.$$
if awk 'length > 110 { printf "%s:%d: %d columns (at most 110)\n", FILENAME, FNR, length; bad = 1 } END { exit bad }' \
    "${files[@]}"; then :; else failed=1; fi
python3 scripts/check_layers.py . || failed=1
[ "$failed" -eq 0 ] && echo "lint: clean (${#files[@]} files)"
exit "$failed"
