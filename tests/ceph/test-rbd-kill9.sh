#!/usr/bin/env bash
# test-rbd-kill9.sh: a backend=rbd server killed with SIGKILL at random
# moments while clients write: every acknowledged write is on the image
# after the restart (librbd's cache off, the default: a write is
# acknowledged once the OSD has it).
#
# CFQ_CEPH_ROUNDS rounds (default 6), alternating cfq and fifo.  In each,
# tests/nbd/durable reads the export (what the last round left), writes on
# 8 connections (random parts of 1000-byte blocks, 30% FUA, a flush every
# 16 writes), the server is killed after a random 0.3 to 1.8 s, restarted
# on the same socket and image, and durable checks every byte against
# what it was told (see tests/nbd/durable.c).  First the negative control:
# a write the client pretends was acknowledged must be reported missing.
# timeout: 300
. "$(dirname "$0")/ceph-functions.sh"
requires_ceph
DURABLE=$top/tests/nbd/durable
[ -x "$DURABLE" ] || fail "$DURABLE is not built (run make)"

rounds=${CFQ_CEPH_ROUNDS:-6}
img=$(rbd_image k9 16M)

serve ()
{
  local sch=fifo
  [ $(($1 % 2)) = 1 ] && sch=cfq
  start_nbdkit srv backend=rbd image="$img" scheduler=$sch
}

serve 1
rc=0
# A write to a cluster takes milliseconds: the 10th of connection 0 is
# long past after 1.5 s.
"$DURABLE" -s 99 -c 2 -L 10 "${NBDKIT_URI[srv]}" >"$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
dpid=$!
wait_for "the negative control's writers" 60 grep -q writing "$TESTDIR/d.out"
sleep 1.5
kill -KILL "${NBDKIT_PID[srv]}"
wait "${NBDKIT_PID[srv]}" 2>/dev/null || true
serve 1
wait "$dpid" || rc=$?
[ "$rc" = 1 ] && grep -q "DATA INTEGRITY ERROR.*lost a durable" "$TESTDIR/d.err" ||
  fail "the negative control (a lost FUA write) was not caught: exit $rc, $(cat "$TESTDIR/d.out" "$TESTDIR/d.err")"
echo "negative control: $(head -1 "$TESTDIR/d.err")"

for (( r = 1; r <= rounds; r++ )); do
  rm -f "$TESTDIR/d.out"
  "$DURABLE" -s "$r" -c 8 "${NBDKIT_URI[srv]}" >"$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
  dpid=$!
  cleanup_fn kill "$dpid"
  wait_for "round $r: the writers" 60 grep -q writing "$TESTDIR/d.out"
  ms=$((300 + RANDOM % 1500))
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  kill -KILL "${NBDKIT_PID[srv]}"
  wait "${NBDKIT_PID[srv]}" 2>/dev/null || true
  serve $((r + 1))
  rc=0
  wait "$dpid" || rc=$?
  echo "round $r: killed after $ms ms: $(tail -1 "$TESTDIR/d.out")"
  [ "$rc" = 0 ] || fail "round $r: durable exit $rc: $(head -20 "$TESTDIR/d.err")"
  grep -q "bad bytes" "$TESTDIR/d.out" || fail "round $r: no summary"
done
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with ${NBDKIT_STATUS[srv]}"
echo ok
