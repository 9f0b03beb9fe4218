#!/usr/bin/env bash
# test-config-startup.sh: nbdkit with our plugin refuses to start on each
# malformed config, before serving anyone, with exit status 1 and the
# config model's own "FILE:LINE: what is wrong" message; and every example
# in configs/ starts (on a test image, via a file= override) and lists
# exactly its [export] sections to `nbdinfo --list`.  Reservations adding
# up to more than the emulated device gives are a warning at start, with
# FILE:LINE, and the server serves.
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_cmd nbdinfo

make_sparse "$TESTDIR/disk.img" 1G
mkdir -p "$TESTDIR/mark"
failures=0

# refuse NAME LINE MESSAGE: $TESTDIR/NAME.conf (already written) must be
# refused at start-up with "$TESTDIR/NAME.conf:LINE: MESSAGE".
refuse ()
{
  local name=$1 line=$2 msg=$3 conf=$TESTDIR/$1.conf out=$TESTDIR/$1.out rc=0
  rm -f "$TESTDIR/mark/ran"
  timeout 60 nbdkit -U - "$CFQ_PLUGIN" config="$conf" \
    --run "touch $TESTDIR/mark/ran" >"$out" 2>&1 </dev/null || rc=$?
  echo "-- $name: exit $rc: $(tr '\n' ' ' <"$out")"
  if [ -e "$TESTDIR/mark/ran" ]; then
    echo "   WRONG: the server started"; failures=$((failures + 1)); return
  fi
  if [ "$rc" != 1 ]; then
    echo "   WRONG: exit status $rc, want 1"; failures=$((failures + 1))
  fi
  if ! grep -qF -- "$conf:$line: $msg" "$out"; then
    echo "   WRONG: no line \"$conf:$line: $msg\""; failures=$((failures + 1))
  fi
}

# Each file has one mistake; the device is the 1G test image ("disk.img"
# is relative to the config's directory).
cat >"$TESTDIR/section.conf" <<'EOF'
[device]
file = disk.img
[volume x]
weight = 100
[export a]
EOF
refuse section 3 "unknown section [volume] (want [device], [scheduler], [group NAME], [export NAME], [tenant NAME], [event NAME] or [sim])"

cat >"$TESTDIR/key.conf" <<'EOF'
[device]
file = disk.img
[group g]
wieght = 200
[export a]
group = g
EOF
refuse key 4 "unknown key 'wieght' in [group NAME]"

cat >"$TESTDIR/devkey.conf" <<'EOF'
[device]
file = disk.img
spindles = 2
[export a]
EOF
refuse devkey 3 "unknown key 'spindles' in [device]"

cat >"$TESTDIR/weight.conf" <<'EOF'
[device]
file = disk.img

[group g]
weight = 1001
[export a]
group = g
EOF
refuse weight 5 "weight = 1001: out of range 100..1000"

cat >"$TESTDIR/weight0.conf" <<'EOF'
[device]
file = disk.img
[group g]
weight = 99
[export a]
group = g
EOF
refuse weight0 4 "weight = 99: out of range 100..1000"

cat >"$TESTDIR/class.conf" <<'EOF'
[device]
file = disk.img
[group g]
class = gold
[export a]
group = g
EOF
refuse class 4 "class = gold: want rt, be or idle"

cat >"$TESTDIR/overlap.conf" <<'EOF'
[device]
file = disk.img
[export a]
size = 2M
[export b]
offset = 1M
size = 1M
EOF
refuse overlap 6 'export "b" [1M, 2M) overlaps export "a" [0, 2M) (line 3); overlapping exports must both be readonly'

cat >"$TESTDIR/beyond.conf" <<'EOF'
[device]
file = disk.img
[export a]
size = 512M
[export b]
offset = 512M
size = 768M
EOF
refuse beyond 7 'export "b" [512M, 1280M) runs past the end of the device (size 1G)'

cat >"$TESTDIR/offbeyond.conf" <<'EOF'
[device]
file = disk.img
[export a]
offset = 2G
EOF
refuse offbeyond 4 'export "a": offset 2G is at or beyond the end of the device (size 1G)'

cat >"$TESTDIR/group.conf" <<'EOF'
[device]
file = disk.img
[group gold]
weight = 800
[export a]
group = silver
EOF
refuse group 6 "group = silver: no [group silver] section"

cat >"$TESTDIR/time.conf" <<'EOF'
[device]
file = disk.img
[scheduler]
slice_idle = 8x
[export a]
EOF
refuse time 4 "slice_idle = 8x: not a time (want a number with ns, us, ms or s; a bare number is ms)"

# A time other tenants would wait for, past its bound: refused with the range.
cat >"$TESTDIR/idle.conf" <<'EOF'
[device]
file = disk.img
[scheduler]
slice_idle = 1000ms
[export a]
EOF
refuse idle 4 "slice_idle = 1000ms: out of range 0ns..100ms"

# Too big for 64 bits: out of range, not a syntax error; a region whose
# end is past 2^64 is shown as written.
cat >"$TESTDIR/huge.conf" <<'EOF'
[device]
file = disk.img
[export a]
size = 16E
[export b]
offset = 15E
size = 15E
EOF
refuse huge 4 "size = 16E: out of range (a size is less than 16E)"
refuse huge 7 'export "b" [15E, 30E) runs past the end of the device (size 1G)'

# Caps and reservations: a cap below a reservation of the same
# unit can never give it, refused at the reservation's line.
cat >"$TESTDIR/capres.conf" <<'EOF'
[device]
file = disk.img
[group g]
iops_max = 100
iops_min = 150
[export a]
group = g
EOF
refuse capres 5 "iops_min = 150, iops_max = 100 (line 4): a cap below a reservation can never give it"

# The config model's own reference file: every one of its errors, as the
# model reports them (tests/config/bad.err, minus cfqconf's summary line).
# Its device is 4G: point the override at a 4G sparse image.
make_sparse "$TESTDIR/bad4g.img" 4G
cp "$top/tests/config/bad.conf" "$TESTDIR/bad.conf"
rc=0
timeout 60 nbdkit -U - "$CFQ_PLUGIN" config="$TESTDIR/bad.conf" \
  file="$TESTDIR/bad4g.img" --run "touch $TESTDIR/mark/ran" \
  >"$TESTDIR/bad.out" 2>&1 </dev/null || rc=$?
[ "$rc" = 1 ] || { echo "WRONG: bad.conf: exit $rc"; failures=$((failures + 1)); }
# (bad.conf's device line is overridden: the override is not an error.)
while IFS= read -r want; do
  case "$want" in cfqconf:*) continue ;; esac
  want=${want/tests\/config\/bad.conf/$TESTDIR/bad.conf}
  grep -qF -- "$want" "$TESTDIR/bad.out" ||
    { echo "WRONG: bad.conf: missing \"$want\""; failures=$((failures + 1)); }
done <"$top/tests/config/bad.err"

# An override with a bad value is refused too, as "command line: ...".
cat >"$TESTDIR/ok.conf" <<'EOF'
[device]
file = disk.img
[export a]
EOF
rc=0
timeout 60 nbdkit -U - "$CFQ_PLUGIN" config="$TESTDIR/ok.conf" slice_idle=9x \
  --run "touch $TESTDIR/mark/ran" >"$TESTDIR/ovr.out" 2>&1 </dev/null || rc=$?
[ "$rc" = 1 ] && [ ! -e "$TESTDIR/mark/ran" ] ||
  { echo "WRONG: slice_idle=9x override: exit $rc"; failures=$((failures + 1)); }
grep -qF "command line: slice_idle=9x: not a time" "$TESTDIR/ovr.out" ||
  { echo "WRONG: override message: $(cat "$TESTDIR/ovr.out")"; failures=$((failures + 1)); }

[ "$failures" = 0 ] || fail "$failures wrong refusals"
echo "== every malformed config refused with its FILE:LINE message"

# ---- reservations beyond the emulated device: a warning at start, still served ---------
# A one-channel SSD of 2 ms reads gives about 500 requests/s; reservations
# adding up to 600 are said at start, at the line of the last one counted,
# and the server serves anyway.  At 400 nothing is said.
for sum in 600 400; do
  cat >"$TESTDIR/overres$sum.conf" <<EOF
[device]
file = disk.img
emulate = ssd
model.channels = 1
model.read = 2ms
[group g1]
iops_min = 300
[group g2]
iops_min = $((sum - 300))
[export a]
group = g1
size = 512M
[export b]
group = g2
offset = 512M
EOF
  rm -f "$TESTDIR/mark/ran"
  rc=0
  timeout 60 nbdkit -U - "$CFQ_PLUGIN" config="$TESTDIR/overres$sum.conf" \
    --run "touch $TESTDIR/mark/ran" >"$TESTDIR/overres$sum.out" 2>&1 </dev/null || rc=$?
  echo "-- reservations adding up to $sum: exit $rc: $(tr '\n' ' ' <"$TESTDIR/overres$sum.out")"
  [ "$rc" = 0 ] && [ -e "$TESTDIR/mark/ran" ] ||
    fail "reservations adding up to $sum: the server did not serve (exit $rc)"
  want="$TESTDIR/overres$sum.conf:9: warning: the reservations add up to $sum requests/s (iops_min), more than the emulated ssd gives"
  if [ "$sum" = 600 ]; then
    grep -qF -- "$want" "$TESTDIR/overres$sum.out" ||
      fail "reservations adding up to 600: no \"$want\""
  else
    ! grep -q "warning" "$TESTDIR/overres$sum.out" ||
      fail "reservations adding up to 400 (under 500): warned"
  fi
done
echo "== reservations beyond the emulated device: warned at start with FILE:LINE, served"

# ---- every example config starts and lists its exports ----------------------
n=0
for f in "$top"/configs/*.conf; do
  base=$(basename "$f" .conf)
  id=c_$base
  cp "$f" "$TESTDIR/$base.conf"
  start_nbdkit "$id" config="$TESTDIR/$base.conf" file="$TESTDIR/disk.img"
  nbdinfo --list --json "${NBDKIT_URI[$id]}" >"$TESTDIR/$base.json" ||
    fail "$base.conf: nbdinfo --list failed"
  want=$(sed -n 's/^\[export *"\{0,1\}\([^]"]*\)"\{0,1\} *\]$/\1/p' "$f" | sort | tr '\n' ,)
  got=$("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(sorted(e["export-name"] for e in d["exports"])) + ",")
' "$TESTDIR/$base.json")
  echo "$base.conf: exports [$got] (want [$want])"
  [ "$want" = "$got" ] || fail "$base.conf lists [$got], want [$want]"
  stop_nbdkit "$id"
  [ "${NBDKIT_STATUS[$id]}" = 0 ] ||
    fail "$base.conf: nbdkit exited with ${NBDKIT_STATUS[$id]}"
  n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "only $n example configs"
echo "== $n example configs serve and list their exports"

# ---- no config: file= alone serves one export "" -----------------------------------
start_nbdkit plain file="$TESTDIR/disk.img"
nbdinfo --list --json "${NBDKIT_URI[plain]}" >"$TESTDIR/plain.json" ||
  fail "file= alone: nbdinfo --list failed"
got=$("$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(repr(e["export-name"]) for e in d["exports"]))
' "$TESTDIR/plain.json")
[ "$got" = "''" ] || fail "file= alone lists exports [$got], want ['']"
[ "$(nbdinfo --size "${NBDKIT_URI[plain]}")" = $((1 << 30)) ] ||
  fail "file= alone: the export is not the whole device"
stop_nbdkit plain
echo '== file= alone serves the one export "" over the whole device'

# ---- the scheduler: cfq by default, with or without config=; fifo by name --------
printf '[device]\nfile = disk.img\n[export]\n' >"$TESTDIR/nosched.conf"
printf '[device]\nfile = disk.img\n[export]\n[scheduler]\nscheduler = fifo\n' \
  >"$TESTDIR/fifo.conf"
# sched_is NAME WANT PARAMS...: serve with PARAMS and a control socket; the
# server must say it runs scheduler WANT.
sched_is ()
{
  local name=$1 want=$2 got; shift 2
  control_start "$name" "$@"
  got=$(ctl "$name" get scheduler) || fail "$name: cfqctl get scheduler failed"
  stop_nbdkit "$name"
  [ "$got" = "scheduler=$want" ] || fail "$name ($*): $got, want scheduler=$want"
  echo "== $*: scheduler=$want"
}
sched_is d_file cfq file="$TESTDIR/disk.img"
sched_is d_file_fifo fifo file="$TESTDIR/disk.img" scheduler=fifo
sched_is d_conf cfq config="$TESTDIR/nosched.conf"
sched_is d_conf_fifo fifo config="$TESTDIR/fifo.conf"
sched_is d_conf_over cfq config="$TESTDIR/fifo.conf" scheduler=cfq
