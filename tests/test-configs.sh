#!/usr/bin/env bash
# test-configs.sh: every example in configs/ validates, and is really
# checked against the device size (each refuses an empty one).
# timeout: 60
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
conf=tools/cfqconf
[ -x $conf ] || { echo "tools/cfqconf not built"; exit 77; }

fail=0
n=0
for f in configs/*.conf; do
  n=$((n+1))
  for size in 1G 1T; do
    if ! out=$($conf --check --size $size "$f" 2>&1) || [ -n "$out" ]; then
      echo "FAIL: $f with a $size device:"; echo "$out"; fail=1
    fi
  done
  # The full listing names every export of the file.
  want=$(grep -c '^\[export' "$f")
  got=$($conf --size 1G "$f" | sed -n '/^exports:/,$p' | grep -c '^  "')
  if [ "$want" != "$got" ]; then
    echo "FAIL: $f: $want [export] sections but $got exports listed"; fail=1
  fi
  if out=$($conf --check --size 0 "$f" 2>&1); then
    echo "FAIL: $f accepted an empty device"; fail=1
  elif ! grep -qE "^$f:[0-9]+: export \"[^\"]*\"[ :]" <<<"$out"; then
    echo "FAIL: $f: unexpected error for an empty device:"; echo "$out"; fail=1
  fi
done
[ $n -ge 5 ] || { echo "FAIL: only $n configs"; fail=1; }
[ $fail = 0 ] && echo "$n configs ok"
exit $fail
