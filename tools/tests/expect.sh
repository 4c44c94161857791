# Shared by the command tests: `expect CODE PATTERN -- command...` runs the command and checks it
# exits with CODE and prints PATTERN on stderr. The caller sets $tmp (a scratch folder) and
# $failures (a count this adds to).
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

# `close A B T`: A and B are numbers within T of each other (either empty: not close).
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= t && -d <= t) }'; }
