#!/usr/bin/env bash
# test-fuzz-corpus.sh: every input of the committed fuzzing corpora
# (tests/fuzz/corpus/NAME) still passes its target's checks, run through
# tests/fuzz/replay-NAME: the ordinary build, or the sanitizer build under
# make SANITIZE=...  Each crash fuzzing ever found keeps its input in the
# corpus, so this is the regression test for all of them, also where clang
# is not installed.
# timeout: 300
. "$(dirname "$0")/functions.sh"

n=0
for dir in "$top"/tests/fuzz/corpus/*/; do
  name=$(basename "$dir")
  replay=$top/tests/fuzz/replay-$name
  [ -x "$replay" ] || fail "$replay is not built (run make)"
  inputs=$(find "$dir" -type f | wc -l)
  [ "$inputs" -gt 0 ] || fail "the corpus $dir is empty"
  out=$("$replay" "$dir") || fail "replay-$name failed on its corpus (above)"
  echo "$out"
  [ "$out" = "$replay: $inputs inputs replayed" ] ||
    fail "replay-$name replayed a different number of inputs than $inputs"
  n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n corpora in tests/fuzz/corpus"
echo "ok: $n corpora"
