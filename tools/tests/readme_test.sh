#!/bin/bash
# The README runs as written: every `parasol` command line in its code blocks (alone or under
# scripts/mpirun.sh, continuation lines joined) still parses and passes its option checks
# (PARASOL_CHECK_ONLY stops each after them), every file under data/ it names is bundled, and the
# commands of the quick examples on bundled data run to the end.
source "$(dirname "$0")/command_test.sh" "$@"
root=$(cd "$(dirname "$0")/../.." && pwd)
readme=$root/README.md
parasol=$(readlink -f "$parasol")
# As the README writes it, after `make install`: `parasol` is the command under test.
parasol() { "$parasol" "$@"; }

# The command lines of the README's code blocks, one per line, continuations joined.
awk '/^```/ { inside = !inside; next }
     inside { line = (held == "" ? $0 : held " " $0); if (sub(/\\$/, "", line)) { held = line; next }
              held = ""; print line }' "$readme" |
  grep -E '^(scripts/mpirun\.sh -np [0-9]+ )?(build/tools/)?parasol ' | sed 's/  *#.*//' >"$tmp/lines"
label="the README shows $(wc -l <"$tmp/lines") parasol command lines"
check [ "$(wc -l <"$tmp/lines")" -ge 30 ]

cd "$tmp" || exit 1
ln -s "$root/data" data
ln -s "$root/scripts" scripts
checked=0
while IFS= read -r line; do
  # `[--option V]` in a synopsis line: not a command to run.
  case $line in *'['*) continue ;; esac
  cmd=${line#scripts/mpirun.sh -np * }
  cmd=${cmd#build/tools/}
  cmd=${cmd#parasol }
  # Files the user fetches (see the README's Data) are named relative to where they put them.
  if ! (export PARASOL_CHECK_ONLY=1; eval "parasol $cmd") >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: README: $line"
    sed 's/^/    /' "$tmp/err"
    failures=$((failures + 1))
  fi
  checked=$((checked + 1))
  for f in $(grep -o 'data/[A-Za-z0-9_./-]*' <<<"$line"); do
    [ -e "$root/$f" ] || fail "README: $line names $f, which data/ does not have"
  done
done <"$tmp/lines"
label="$checked README command lines parse and pass their checks"
check [ "$checked" -ge 25 ]

# The quick examples on bundled data, run: each ends with exit 0.
for example in \
  "lasso --data data/riboflavin/riboflavin-500.csv --lambda 0.05 --schedule-size 1" \
  "logreg --data data/libsvm/a9a-2000 --lambda 1e-3 --scheduler cyclic --schedule-size 1" \
  "svm --data data/libsvm/a9a-2000 --c 1 --gamma 0.05 --model a9a.model --test data/libsvm/a9a-2000" \
  "svm-predict data/libsvm/a9a-2000 a9a.model predictions.txt" \
  "mtrl --data data/school/school-20.csv --split 0.7 --relationships rel.csv" \
  "lda --corpus data/ap/ap.dat --topics 100 --iterations 20 --threads 2 --output ap-model"; do
  grep -qF -- "${example%% --iterations*}" "$readme" || fail "README no longer shows: parasol $example"
  label="README example runs: parasol $example"
  eval "check \"\$parasol\" $example >/dev/null 2>\"$tmp/err\""
done

finish
