#!/usr/bin/env bash
# test-config-valgrind.sh: the config model frees everything it allocates
# and reads nothing uninitialised, on good files, bad files and overrides.
# timeout: 240
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
[ -x tools/cfqconf ] && [ -x tests/unit/test-config ] \
  || { echo "cfqconf or test-config not built"; exit 77; }
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all"
fail=0
run () {
  want=$1; shift
  $vg "$@" >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc != "$want" ]; then
    echo "FAIL ($rc, want $want): $*"; cat "$tmp/err"; fail=1
  fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run 0 tests/unit/test-config
for f in configs/*.conf tests/config/good.conf; do
  run 0 tools/cfqconf --size 4G "$f" slice_idle=1ms model.rpm=5400
done
run 1 tools/cfqconf --size 4G tests/config/bad.conf quantum=0 weight=1
run 1 tools/cfqconf --size 1G
[ $fail = 0 ] && echo ok
exit $fail
