#!/usr/bin/env bash
# test-config-no-cascade.sh: one mistake in a config gives cfqconf one
# error, not one per export: the regions are still checked against the
# device's real size, and with a device that cannot be measured they are
# not checked at all (a size of 0 would put every region past the end).
# timeout: 60
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
conf=tools/cfqconf
[ -x $conf ] || { echo "tools/cfqconf not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die () { echo "FAIL: $*"; fail=1; }

truncate -s 2G "$tmp/disk.img"
# $1: the group gold section's body line, $2: an extra [scheduler] line
write_conf () {
  cat > "$tmp/t.conf" <<CONF
[device]
file = ${3:-disk.img}

[scheduler]
$2

[group gold]
$1

[group bronze]
weight = 200

[export db]
group = gold
size = 1G

[export scratch]
group = bronze
offset = 1G
CONF
}

# ERRORS: exactly these lines, exit 1.
expect () {
  local what=$1 want=$2
  "$conf" "$tmp/t.conf" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc = 1 ] || die "$what: exit $rc, want 1"
  printf '%s\n' "$want" | diff -u - "$tmp/err" || die "$what: errors differ"
}

write_conf 'wieght = 800' ''
expect typo "$tmp/t.conf:8: unknown key 'wieght' in [group NAME] (did you mean 'weight'?)
cfqconf: 1 error"
write_conf 'weight = 0' ''
expect weight0 "$tmp/t.conf:8: weight = 0: out of range 100..1000
cfqconf: 1 error"
write_conf 'weight = 800' 'slice_idle = 10 ms'
expect 'time with a space' "$tmp/t.conf:5: slice_idle = 10 ms: not a time (want a number with ns, us, ms or s; a bare number is ms)
cfqconf: 1 error"

# A real region error is still found beside another mistake.
sed -i 's/^size = 1G/size = 3G/' "$tmp/t.conf"
expect 'real region error' "$tmp/t.conf:5: slice_idle = 10 ms: not a time (want a number with ns, us, ms or s; a bare number is ms)
$tmp/t.conf:15: export \"db\" [0, 3G) runs past the end of the device (size 2G)
cfqconf: 2 errors"

# A device that cannot be opened beside a mistake: the mistake only.
write_conf 'wieght = 800' '' missing.img
expect 'missing device' "$tmp/t.conf:8: unknown key 'wieght' in [group NAME] (did you mean 'weight'?)
cfqconf: 1 error"

# ... and alone, still an error of its own.
write_conf 'weight = 800' '' missing.img
"$conf" "$tmp/t.conf" >/dev/null 2>"$tmp/err" && die "missing device accepted"
grep -q "missing.img: No such file or directory" "$tmp/err" \
  || die "missing device message: $(cat "$tmp/err")"

exit $fail
