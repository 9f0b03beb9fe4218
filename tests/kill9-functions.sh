# shellcheck shell=bash
# tests/kill9-functions.sh: a server killed with SIGKILL while clients
# write, and restarted: every acknowledged write must be there after
# (tests/nbd/durable).  For tests/stress/test-kill9.sh and
# tests/ceph/test-rbd-kill9.sh; source it after tests/functions.sh.
#
#   KILL9_PARAMS=(KEY=VALUE...)   the server's parameters (the test's)
#   kill9_serve N              start server "srv" for round N (scheduler
#                              cfq in odd rounds, fifo in even ones)
#   kill9_requires             tests/nbd/durable is built, or fail
#   kill9_control LOST SECS    the negative control: durable -L LOST
#                              pretends its LOST-th write was acknowledged
#                              and drops it; srv is killed after SECS s and
#                              restarted; the write must be reported lost
#   kill9_rounds N MIN_MS      N rounds of durable -c 8, srv killed after a
#                              random MIN_MS to MIN_MS + 1.5 s, restarted;
#                              every byte checked

DURABLE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/nbd/durable

kill9_requires ()
{
  [ -x "$DURABLE" ] || fail "$DURABLE is not built (run make)"
}

kill9_serve ()
{
  local sch=fifo
  [ $(($1 % 2)) = 1 ] && sch=cfq
  start_nbdkit srv "${KILL9_PARAMS[@]}" scheduler=$sch
}

# _kill9_restart N: kill srv with SIGKILL, reap it, kill9_serve N.
_kill9_restart ()
{
  kill -KILL "${NBDKIT_PID[srv]}"
  wait "${NBDKIT_PID[srv]}" 2>/dev/null || true
  kill9_serve "$1"
}

kill9_control ()
{
  local lost=$1 secs=$2 rc=0 dpid
  "$DURABLE" -s 99 -c 2 -L "$lost" "${NBDKIT_URI[srv]}" >"$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
  dpid=$!
  wait_for "the negative control's writers" 60 grep -q writing "$TESTDIR/d.out"
  sleep "$secs"
  _kill9_restart 1
  wait "$dpid" || rc=$?
  [ "$rc" = 1 ] && grep -q "DATA INTEGRITY ERROR.*lost a durable" "$TESTDIR/d.err" ||
    fail "the negative control (a lost FUA write) was not caught: exit $rc, $(cat "$TESTDIR/d.out" "$TESTDIR/d.err")"
  echo "negative control: $(head -1 "$TESTDIR/d.err")"
}

kill9_rounds ()
{
  local rounds=$1 min=$2 r ms rc dpid
  for (( r = 1; r <= rounds; r++ )); do
    rm -f "$TESTDIR/d.out"
    "$DURABLE" -s "$r" -c 8 "${NBDKIT_URI[srv]}" >"$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
    dpid=$!
    cleanup_fn kill "$dpid"
    wait_for "round $r: the writers" 60 grep -q writing "$TESTDIR/d.out"
    ms=$((min + RANDOM % 1500))
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
    _kill9_restart $((r + 1))
    rc=0
    wait "$dpid" || rc=$?
    echo "round $r: killed after $ms ms: $(tail -1 "$TESTDIR/d.out")"
    [ "$rc" = 0 ] || fail "round $r: durable exit $rc: $(head -20 "$TESTDIR/d.err")"
    grep -q "bad bytes" "$TESTDIR/d.out" || fail "round $r: no summary"
  done
}
