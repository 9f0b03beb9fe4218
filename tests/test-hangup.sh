#!/usr/bin/env bash
# test-hangup.sh: a client that hangs up with requests in flight cannot
# abort the server, with nbdkit's default worker threads.
#
# nbdkit 1.32.4 - 1.33.9 abort when a client goes away with two or more
# replies still to send (plugin/hangup.c says how, and how the plugin
# guards nbdkit against it).  Three ways to hit it, each raced
# CFQ_HANGUP_RUNS times (50) against one server (tests/nbdhangup.py):
#   close-reads   the handshake, 64 reads of 4 KiB, close unread;
#   close-writes  the same with 64 writes of 4 KiB;
#   kill          a libnbd client with 16 reads of 1 MiB in flight,
#                 killed with SIGKILL.
# Asserted: the server is alive after every run; another client's reads
# and writes (tests/nbd/shadow on the other half of the export, round
# after round) go on meanwhile, every round verified; a fresh client is
# served at the end; SIGTERM stops the server with status 0.  On an
# nbdkit with the bug, --dump-plugin must report the guard on.
# Then, to show the runs can fail: the same kill runs without the guard
# (-D cfq.hangup_guard=0) abort such an nbdkit (reported, not asserted:
# it is nbdkit's race, and may take more runs).
# timeout: 600
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_shadow
plugin_is_ours || { echo "the guard is our plugin's"; exit 77; }

runs=${CFQ_HANGUP_RUNS:-50}
size=$((128 << 20))
half=$((size / 2))
HANGUP=$top/tests/nbdhangup.py
PY=/usr/bin/python3
failures=()

v=$(nbdkit --version | awk '{print $2}')
guard=$(nbdkit "$CFQ_PLUGIN" --dump-plugin | sed -n 's/^cfq_hangup_guard=//p')
echo "nbdkit $v, hang-up guard: $guard"
if why=$(nbdkit_hangup_safe); then
  :
else
  fail "$why: plugin/hangup.c no longer recognises this nbdkit's build"
fi

# checker SOCK OUT: shadow rounds on the upper half until OUT.stop
# exists; each round's exit status appended to OUT.  It is stopped between
# rounds, never killed in one: a killed round's writes still in the server
# would land under the next round's feet.
checker ()
{
  local i=0 rc
  while [ ! -e "$2.stop" ]; do
    i=$((i + 1))
    rc=0
    "$SHADOW" -u -q -s "$i" -n 400 -c 2 -d 8 -r "$half:$half" "$1" \
      >"$2.round" 2>&1 || rc=$?
    [ "$rc" = 0 ] || cp "$2.round" "$2.failed.$i"
    echo "$rc" >>"$2"
  done
}

# kill_checker PID: stop a checker loop and the round it runs.
kill_checker ()
{
  pkill -P "$1" 2>/dev/null || true
  kill "$1" 2>/dev/null || true
}

make_image "$TESTDIR/disk.img" $size
start_nbdkit hup -- file="$TESTDIR/disk.img"
sock=${NBDKIT_SOCK[hup]}
pid=${NBDKIT_PID[hup]}

for mode in "close-reads 64 4096" "close-writes 64 4096" "kill 16 1048576"; do
  read -r m n sz <<<"$mode"
  : >"$TESTDIR/rounds.$m"
  checker "$sock" "$TESTDIR/rounds.$m" &
  cpid=$!
  cleanup_fn kill_checker "$cpid"
  died=0 cfail=0
  for (( i = 1; i <= runs; i++ )); do
    "$PY" "$HANGUP" --span "$half" "$sock" "" "$m" "$n" "$sz" ||
      cfail=$((cfail + 1))
    if ! kill -0 "$pid" 2>/dev/null; then
      died=$i
      break
    fi
  done
  # Let the round in progress finish, then stop the checker.
  touch "$TESTDIR/rounds.$m.stop"
  wait "$cpid" 2>/dev/null || true
  ok=$(grep -cx 0 "$TESTDIR/rounds.$m" || true)
  bad=$(grep -cvx 0 "$TESTDIR/rounds.$m" || true)
  echo "$m: $((i > runs ? runs : i)) runs, client failures $cfail, checker rounds passed $ok, failed $bad"
  if [ "$died" != 0 ]; then
    failures+=("$m: the server died at run $died")
    grep -m1 'Assertion' "$TESTDIR/hup.log" || true
    break
  fi
  [ "$cfail" = 0 ] || failures+=("$m: $cfail runs could not send their requests")
  [ "$ok" -ge 1 ] || failures+=("$m: the other client completed no round meanwhile")
  if [ "$bad" != 0 ]; then
    failures+=("$m: $bad rounds of the other client failed")
    tail -n 5 "$TESTDIR/rounds.$m".failed.* 2>/dev/null || true
  fi
done

if kill -0 "$pid" 2>/dev/null; then
  rc=0
  "$SHADOW" -u -q -s 99 -n 2000 -c 2 "$sock" || rc=$?
  [ "$rc" = 0 ] || failures+=("a fresh client after the hang-ups failed (exit $rc)")
  stop_nbdkit hup
  [ "${NBDKIT_STATUS[hup]}" = 0 ] ||
    failures+=("nbdkit exited with status ${NBDKIT_STATUS[hup]} on SIGTERM")
elif [ ${#failures[@]} = 0 ]; then
  failures+=("the server is gone after the last run")
fi

# Without the guard, on an nbdkit with the bug: the same runs abort it.
if [ "$guard" = on ]; then
  start_nbdkit noguard -D cfq.hangup_guard=0 -- file="$TESTDIR/disk.img"
  for (( i = 1; i <= 20; i++ )); do
    "$PY" "$HANGUP" --span "$half" "${NBDKIT_SOCK[noguard]}" "" kill 16 1048576 ||
      true
    kill -0 "${NBDKIT_PID[noguard]}" 2>/dev/null || break
  done
  if kill -0 "${NBDKIT_PID[noguard]}" 2>/dev/null; then
    echo "without the guard: nbdkit survived 20 kill runs this time"
    stop_nbdkit noguard
  else
    echo "without the guard: nbdkit aborted at kill run $i:"
    grep -m1 'Assertion' "$TESTDIR/noguard.log" || true
    stop_nbdkit noguard || true
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${failures[@]}"
  fail "${#failures[@]} problems"
fi
echo "== $runs hang-ups of each kind: the server survived, the other client was served"
