#!/usr/bin/env bash
# test-kill9.sh: the server killed with SIGKILL at random moments while
# clients write: every acknowledged write, and so every FUA-written or
# flushed byte, is there after the restart (make check-stress).
#
# CFQ_STRESS_ROUNDS rounds (default 20), alternating cfq and fifo.  In
# each, tests/nbd/durable reads the export (what the last round left),
# writes on 8 connections (random parts of 1000-byte blocks, so
# neighbours share sectors and pages; 30% FUA; a flush every 16 writes;
# the export ends 1234 bytes into a page, so the buffered tail path is
# written too), the server is killed with SIGKILL after a random 0.2 to
# 1.7 s, restarted on the same socket, and durable checks every byte
# against what it was told (see tests/nbd/durable.c).
# timeout: 1200
. "$(dirname "$0")/../tenant-functions.sh"
tenant_requires
DURABLE=$top/tests/nbd/durable
[ -x "$DURABLE" ] || fail "$DURABLE is not built (run make)"

rounds=${CFQ_STRESS_ROUNDS:-20}
make_image "$TESTDIR/disk.img" $(((16 << 20) + 1234))
cat >"$TESTDIR/k.conf" <<'EOC'
[device]
file = disk.img
[export]
EOC

serve ()
{
  local sch=fifo
  [ $(($1 % 2)) = 1 ] && sch=cfq
  start_nbdkit srv config="$TESTDIR/k.conf" scheduler=$sch
}

serve 1
# The negative control: a write the client pretends was acknowledged
# (durable -L) must be reported missing.
rc=0
"$DURABLE" -s 99 -c 2 -L 40 "${NBDKIT_URI[srv]}" >"$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
dpid=$!
wait_for "the negative control's writers" 60 grep -q writing "$TESTDIR/d.out"
sleep 0.5
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
  ms=$((200 + RANDOM % 1500))
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
echo ok
