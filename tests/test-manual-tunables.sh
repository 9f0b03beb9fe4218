#!/usr/bin/env bash
# test-manual-tunables.sh: the manual lists every CFQ tunable with the
# default the code has, in both of its tables: [scheduler]'s (every
# tunable but mode, which is [device] mode) and "Defaults and the kernel"
# (every one).  The defaults come from cfq_tunables[], as cfqconf prints
# them, so a row cannot drift from the table without this failing.
# timeout: 30
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
conf=tools/cfqconf
pod=plugin/nbdkit-cfq-plugin.pod
[ -x $conf ] || { echo "tools/cfqconf not built"; exit 1; }
fail=0
die () { echo "FAIL: $*"; fail=1; }

# NAME DEFAULT per tunable, from the code.
code=$($conf --size 1G file=/dev/zero | sed -n '/^scheduler:/,/^groups:/p' |
       awk '$3 == "(default)" { print $1, $2 }')
[ "$(wc -l <<<"$code")" -ge 19 ] || { echo "FAIL: cfqconf listed: $code"; exit 1; }

# rows HEADING: the "NAME DEFAULT" of each row of the table under HEADING
# (a verbatim table whose header line starts with " tunable").
rows ()
{
  awk -v h="$1" '
    /^=head/ { inside = ($0 == h); table = 0; next }
    inside && /^ tunable / { table = 1; next }
    inside && table && /^ [a-z_]+ / { print $1, $2 }
    inside && table && /^$/ { table = 0 }' "$pod"
}

check ()
{
  local heading=$1 skip=$2 got
  got=$(rows "$heading")
  [ -n "$got" ] || { die "no table under '$heading'"; return; }
  while read -r name def; do
    [ "$name" = "$skip" ] && continue
    grep -qx "$name $def" <<<"$got" ||
      die "'$heading': $name: want default $def, the manual has:" \
          "$(grep "^$name " <<<"$got" || echo nothing)"
  done <<<"$code"
  while read -r name _; do
    grep -q "^$name " <<<"$code" || die "'$heading': $name is not a tunable"
  done <<<"$got"
  echo "$heading: $(wc -l <<<"$got") rows agree with cfq_tunables[]"
}

check "=head2 [scheduler]" mode
check "=head2 Defaults and the kernel" ""
exit $fail
