#!/usr/bin/env bash
# test-config-valgrind.sh: the config model frees everything it allocates
# and reads nothing uninitialised, on good files, bad files and overrides.
# timeout: 240
. "$(dirname "$0")/functions.sh"
cd "$top" || exit 1
[ -x tools/cfqconf ] && [ -x tests/unit/test-config ] ||
  fail "cfqconf or test-config not built (run make)"
requires_valgrind tools/cfqconf tests/unit/test-config
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all)
failed=0
run () {
  local want=$1 rc=0; shift
  "${vg[@]}" "$@" >/dev/null 2>"$TESTDIR/err" || rc=$?
  if [ $rc != "$want" ]; then
    echo "FAIL ($rc, want $want): $*"; cat "$TESTDIR/err"; failed=1
  fi
}

run 0 tests/unit/test-config
for f in configs/*.conf tests/config/good.conf; do
  run 0 tools/cfqconf --size 4G "$f" slice_idle=1ms model.rpm=5400
done
run 1 tools/cfqconf --size 4G tests/config/bad.conf quantum=0 weight=1
run 1 tools/cfqconf --size 1G
[ $failed = 0 ] || fail "valgrind found errors or leaks (above)"
echo ok
