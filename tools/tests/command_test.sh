# The prelude of the command tests, sourced first with the test's own arguments:
#   source "$(dirname "$0")/command_test.sh" "$@"      # PARASOL MPIRUN [DATA_DIR]
# sets $parasol, $mpirun and $data (DATA_DIR, or the project's data/), a scratch folder $tmp
# removed at exit and the count $failures, and gives the checks below. A test ends with `finish`.
set -u
parasol=$1
mpirun=${2:-}
data=${3:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../data" && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# `fail WHAT`: reports a failed check (adding to $failures).
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# `runs OUT WHAT command...`: runs the command, its output into OUT and its stderr into $tmp/err,
# and where it fails reports "FAIL: WHAT" with that stderr (adding to $failures).
runs() {
  local out=$1 what=$2
  shift 2
  "$@" >"$out" 2>"$tmp/err" && return 0
  echo "FAIL: $what"
  cat "$tmp/err"
  failures=$((failures + 1))
  return 1
}

# `finish`: the summary line, and the exit code ctest reads.
finish() {
  [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
  echo "all passed"
}

# `expect CODE PATTERN -- command...` runs the command and checks it exits with CODE and prints
# PATTERN on stderr.
expect() {
  local code=$1 pattern=$2
  shift 3
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$pattern" "$tmp/err"; then
    echo "FAIL: $* -> exit $got (want $code), stderr:"; sed 's/^/    /' "$tmp/err"
    echo "    (wanted: $pattern)"
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

# `label="what holds"; check command...`: runs the command and reports ok or FAIL with the label
# (adding to $failures).
check() {
  if "$@"; then echo "ok: ${label}"; else echo "FAIL: ${label}"; failures=$((failures + 1)); fi
}

# `mapfile -t ARGS < <(without OPTION "${args[@]}")`: the arguments without OPTION and its value
# (a command line that sets it again: options are taken once).
without() {
  local drop=$1 skip=0 a
  shift
  for a in "$@"; do
    if [ $skip = 1 ]; then skip=0; elif [ "$a" = "$drop" ]; then skip=1; else printf '%s\n' "$a"; fi
  done
}

# `close A B T`: A and B are numbers within T of each other (either empty: not close).
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= t && -d <= t) }'; }
