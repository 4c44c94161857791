#!/bin/bash
# The README runs as written: every `parasol` command line in its code blocks (alone or under
# scripts/mpirun.sh, continuation lines joined) still parses and passes its option checks
# (PARASOL_CHECK_ONLY stops each after them), every file under data/ it names is bundled, and
# every line on bundled, synthetic or generated data runs to the end, scaled down.
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

# Every line then runs, in order (later lines read what earlier ones wrote), scaled down: 2 steps,
# epochs, clocks or iterations, generated inputs a thousandth of the size. The files a user fetches
# are stood in for by small ones in the same layout: 20 Newsgroups' archives (3 groups of 6 posts,
# cut from Tiny Shakespeare) and a folder of the user's own documents. Left to the parse check: the
# cluster scheduler's example, minutes of jobs (cluster_test runs the scheduler).
text=$root/data/tinyshakespeare/input.txt
for split in train test; do
  for group in alt.atheism rec.autos sci.space; do
    mkdir -p "20news-bydate-$split/$group"
    for i in 1 2 3 4 5 6; do
      offset=$(( ($(cksum <<<"$split$group$i" | cut -d' ' -f1) % 1000) * 1000 + 1 ))
      tail -c +"$offset" "$text" | head -c 1500 >"20news-bydate-$split/$group/$((100 + i))"
    done
  done
  tar czf "20news-bydate-$split.tar.gz" "20news-bydate-$split"
done
mkdir -p new-docs && cp 20news-bydate-test/sci.space/* new-docs/
scaled() {
  local line=$1
  case $line in *'parasol train '*) line=$(sed -E 's/--epochs [0-9]+/--steps 2/' <<<"$line") ;; esac
  case $line in *'parasol train '*'--steps'*) ;; *'parasol train '*) line="$line --steps 2" ;; esac
  case $line in *'parasol gnn '*'--epochs'* | *'&&'*) ;; *'parasol gnn '*) line="$line --epochs 2" ;; esac
  case $line in *'parasol lda '*'--iterations'*) ;; *'parasol lda '*) line="$line --iterations 2" ;; esac
  sed -E -e 's/--(steps|clocks|iterations) [0-9]+/--\1 2/g; s/--epochs [0-9]+/--epochs 2/g' \
    -e 's/--warmup-steps [0-9]+/--warmup-steps 1/; s/--checkpoint-every [0-9]+/--checkpoint-every 1/' \
    -e 's/--rows 100000 --cols 1000000/--rows 1000 --cols 10000/' \
    -e 's/--vertices 1000000 --edges 20000000/--vertices 1000 --edges 20000/; s#/tmp/big#big#g' <<<"$line"
}
ran=0
while IFS= read -r line; do
  case $line in *'['* | *' cluster '*) continue ;; esac
  run=$(scaled "$line")
  cmd=$(sed -E -e 's#(^|&& )parasol #\1"$parasol" #g; s#build/tools/parasol#"$parasol"#g' \
    -e 's#scripts/mpirun.sh#"$mpirun"#g' <<<"$run")
  if [ -z "$mpirun" ] && [[ $cmd == *mpirun* ]]; then continue; fi
  start=$(date +%s%N)
  if ! eval "timeout 300 $cmd" </dev/null >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: README, run scaled down: $run"
    tail -5 "$tmp/err" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
  echo "ran ($(( ($(date +%s%N) - start) / 1000000 )) ms): $run"
  ran=$((ran + 1))
done <"$tmp/lines"
label="$ran README command lines run to the end, scaled down"
check [ "$ran" -ge "$([ -n "$mpirun" ] && echo 32 || echo 14)" ]

finish
