#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS NAME...: run each libFuzzer target
# tests/fuzz/fuzz-NAME for SECONDS, starting from its committed corpus
# tests/fuzz/corpus/NAME (read, never written: new inputs go to a scratch
# directory that is removed).  A crash, a failed check, a leak or an input
# that runs longer than 10 s stops that target; its input is kept as
# tests/logs/fuzz/NAME-crash-* (or -leak-, -timeout-), to be fixed and then
# added to the corpus as a regression input.
# The last line is "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
secs=$1; shift
mkdir -p tests/logs/fuzz
scratch=$(mktemp -d /tmp/cfq-fuzz.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

pass=0 fail=0
for name in "$@"; do
  mkdir -p "$scratch/$name"
  log=tests/logs/fuzz/$name.log
  echo "fuzz-$name: ${secs}s from tests/fuzz/corpus/$name ($(find "tests/fuzz/corpus/$name" -type f | wc -l) inputs)"
  if "tests/fuzz/fuzz-$name" -max_total_time="$secs" -timeout=10 \
       -max_len=4096 -print_final_stats=1 \
       -artifact_prefix="tests/logs/fuzz/$name-" \
       "$scratch/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    echo "PASS: fuzz-$name ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs," \
      "$(find "$scratch/$name" -type f | wc -l) new inputs)"
    pass=$((pass + 1))
  else
    echo "FAIL: fuzz-$name (log: $log)"
    grep -E '^(==[0-9]+==|SUMMARY|.*check failed|artifact_prefix|Test unit written)' "$log" |
      head -20 | sed 's/^/    | /'
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
