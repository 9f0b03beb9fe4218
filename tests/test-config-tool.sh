#!/usr/bin/env bash
# test-config-tool.sh: tools/cfqconf end to end: exact errors for a bad
# file, overrides from the command line, relative paths, the device size
# read from the device itself, the no-file default, exit codes.
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

# Every error of bad.conf, exactly, and exit 1.
$conf --size 4G tests/config/bad.conf >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || die "bad.conf: exit $rc, want 1"
[ -s "$tmp/out" ] && die "bad.conf: printed a model"
diff -u tests/config/bad.err "$tmp/err" || die "bad.conf: errors differ"

# good.conf: valid, relative device path resolved against the file's dir.
out=$($conf --size 4G tests/config/good.conf) || die "good.conf refused"
grep -qx 'device: tests/config/disk.img, size 4G (4294967296 bytes)' <<<"$out" \
  || die "good.conf: device line: $out"
grep -qE '^  slice_idle +4ms +\(set\)$' <<<"$out" || die "good.conf: slice_idle"
grep -qE '^  quantum +8 +\(default\)$' <<<"$out" || die "good.conf: quantum"
grep -qx '  "b" group=default region=\[1G, 4G) size=3G rw writes=auto allow=anyone' \
  <<<"$out" || die "good.conf: export b: $out"

# Overrides win over the file, whatever their position.
out=$($conf --size 4G slice_idle=0 tests/config/good.conf quantum=2 \
      file=/dev/null/x) || die "overrides refused"
grep -qE '^  slice_idle +0ns +\(set\)$' <<<"$out" || die "override slice_idle"
grep -qE '^  quantum +2 +\(set\)$' <<<"$out" || die "override quantum"
grep -q '^device: /dev/null/x,' <<<"$out" || die "override file"
$conf --size 4G tests/config/good.conf slice_idle=9x 2>"$tmp/err" >/dev/null \
  && die "bad override accepted"
grep -qx 'command line: slice_idle=9x: not a time (want a number with ns, us, ms or s; a bare number is ms)' \
  "$tmp/err" || die "bad override message: $(cat "$tmp/err")"
$conf --size 4G tests/config/good.conf weight=200 2>"$tmp/err" >/dev/null \
  && die "group key accepted as an override"
grep -qx 'command line: weight=200: not a \[device\] or \[scheduler\] key' \
  "$tmp/err" || die "weight override message: $(cat "$tmp/err")"

# The device's own size, when --size is not given.
truncate -s 3G "$tmp/disk.img"
cp tests/config/good.conf "$tmp/t.conf"
out=$($conf "$tmp/t.conf") || die "size from the device"
grep -q "region=\[1G, 3G) size=2G" <<<"$out" || die "device size not used: $out"
rm "$tmp/disk.img"
$conf "$tmp/t.conf" >/dev/null 2>"$tmp/err" && die "missing device accepted"
grep -q "disk.img: No such file or directory" "$tmp/err" \
  || die "missing device message: $(cat "$tmp/err")"

# rotational as the server would set it: from the device model, the
# page cache, or as set (with what the device says beside it).
rot () { $conf --size 1G file=/dev/zero "$@" | grep -E '^  rotational '; }
[ "$(rot emulate=ssd)" = "  rotational         0        (device model; set 1 to override)" ] ||
  die "rotational, emulate=ssd: $(rot emulate=ssd)"
[ "$(rot emulate=hdd)" = "  rotational         1        (device model; set 0 to override)" ] ||
  die "rotational, emulate=hdd: $(rot emulate=hdd)"
[ "$(rot cache=page)" = "  rotational         0        (cache = page; set 1 to override)" ] ||
  die "rotational, cache=page: $(rot cache=page)"
[ "$(rot emulate=ssd rotational=1)" = "  rotational         1        (set; detected 0)" ] ||
  die "rotational set against the model: $(rot emulate=ssd rotational=1)"
[ "$(rot emulate=ssd rotational=0)" = "  rotational         0        (set)" ] ||
  die "rotational set as the model: $(rot emulate=ssd rotational=0)"

# No config file: one export "" over the whole device.
out=$($conf --size 1G file=/dev/zero) || die "file= alone refused"
grep -qx '  "" group=default region=\[0, 1G) size=1G rw writes=auto allow=anyone' \
  <<<"$out" || die "default export: $out"
$conf --size 1G 2>"$tmp/err" && die "nothing at all accepted"
grep -qx 'command line: no device: give file=PATH or config=FILE' "$tmp/err" \
  || die "no device message: $(cat "$tmp/err")"

# Every [device] and [export] key the server takes shows in --json, with
# the value given (a key printed from the wrong field would show).
printf '%s\n' '[device]' 'file = disk.img' 'queue_depth = 7' 'cache = page' \
  'max_connections = 13' 'buffer_pool = 99M' '[group g]' '[export e]' \
  'group = g' 'size = 1G' 'tls = require' 'max_connections = 3' >"$tmp/keys.conf"
$conf --json --size 4G "$tmp/keys.conf" >"$tmp/keys.json" || die "keys.conf refused"
/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d, e = j["device"], j["exports"][0]
want = [(d["queue_depth"], 7), (d["cache"], "page"), (d["max_connections"], 13),
        (d["buffer_pool"], 99 << 20), (e["tls"], "require"), (e["max_connections"], 3)]
bad = [w for w in want if w[0] != w[1]]
sys.exit("keys.conf: %s" % bad if bad else 0)' "$tmp/keys.json" ||
  die "keys.conf: --json lacks a key or a value"

# --check is quiet; usage errors exit 2.
[ -z "$($conf --check --size 4G tests/config/good.conf)" ] || die "--check printed"
$conf --size 4G a.conf b.conf 2>/dev/null; [ $? = 2 ] || die "two files: not 2"
$conf --size 4Q tests/config/good.conf 2>/dev/null; [ $? = 2 ] || die "bad --size: not 2"
$conf --size 4G "$tmp/nonesuch.conf" 2>/dev/null; [ $? = 1 ] || die "missing file: not 1"

[ $fail = 0 ] && echo ok
exit $fail
