#!/usr/bin/env bash
# tests/run.sh: run the test suite, each test under a timeout.
#
# A test is an executable: tests/unit/test-* (C, core only) or tests/test-*.sh.
# Exit 0 passes, 77 skips, anything else (or the timeout) fails.  Output goes
# to tests/logs/NAME.log; a failing test's log tail is printed.  A test may
# name its own limit with a line "# timeout: SECONDS" (default 300), which
# CFQ_TIMEOUT_SCALE multiplies (make check sets it for sanitizer builds).
#
# Sanitizers (make SANITIZE=...): every process of a test writes its
# reports to tests/logs/NAME.san.PID instead of stderr, and a test that
# leaves any report FAILS, whatever its exit status: a report in a server,
# or in a client whose exit status the test does not look at, still counts.
#
# Usage: tests/run.sh [TEST...]      (default: every test)
# The last line is "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
mkdir -p tests/logs

if [ $# -gt 0 ]; then
  tests=("$@")
else
  tests=()
  for t in tests/unit/test-*; do
    case "$t" in *.c|*.d|*.o) continue ;; esac
    [ -x "$t" ] && tests+=("$t")
  done
  for t in tests/test-*.sh; do
    [ -f "$t" ] && tests+=("$t")
  done
fi

pass=0 fail=0 skip=0
failed=()
for t in "${tests[@]}"; do
  name=$(basename "$t")
  log="tests/logs/$name.log"
  san="$top/tests/logs/$name.san"
  rm -f "$san".*
  limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$t" 2>/dev/null | head -1)
  [ -n "$limit" ] || limit=300
  limit=$(( limit * ${CFQ_TIMEOUT_SCALE:-1} ))
  start=$(date +%s)
  sanenv=(ASAN_OPTIONS="log_path=$san:${ASAN_OPTIONS:-}"
          UBSAN_OPTIONS="log_path=$san:print_stacktrace=1:${UBSAN_OPTIONS:-}"
          TSAN_OPTIONS="log_path=$san:${TSAN_OPTIONS:-}")
  case "$t" in
    *.sh) env "${sanenv[@]}" timeout -k 10 "$limit" bash "$t" >"$log" 2>&1 </dev/null ;;
    *)    env "${sanenv[@]}" timeout -k 10 "$limit" "$t" >"$log" 2>&1 </dev/null ;;
  esac
  rc=$?
  secs=$(( $(date +%s) - start ))
  reports=()
  for r in "$san".*; do [ -e "$r" ] && reports+=("$r"); done
  # UBSan in a gcc ASan build ignores log_path: its reports land in the
  # test's own output (functions.sh copies those in servers' logs there).
  if grep -q -E ': runtime error: ' "$log"; then
    grep -E ': runtime error: ' "$log" >"$san.stderr"
    reports+=("$san.stderr")
  fi
  if [ ${#reports[@]} -gt 0 ]; then
    echo "FAIL: $name (sanitizer report; exit $rc)"; fail=$((fail+1)); failed+=("$name")
    for r in "${reports[@]}"; do
      echo "    | ---- $r"
      head -40 "$r" | sed 's/^/    | /'
    done
    continue
  fi
  case $rc in
    0)  echo "PASS: $name (${secs}s)"; pass=$((pass+1)) ;;
    77) echo "SKIP: $name ($(tail -1 "$log"))"; skip=$((skip+1)) ;;
    124|137) echo "FAIL: $name (timeout after ${limit}s)"; fail=$((fail+1)); failed+=("$name") ;;
    *)  echo "FAIL: $name (exit $rc)"; fail=$((fail+1)); failed+=("$name") ;;
  esac
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    tail -20 "$log" | sed 's/^/    | /'
  fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
