#!/usr/bin/env bash
# test-disconnect.sh: clients that vanish with requests in flight must not
# hurt the server or its other clients.
#
# The export is split in two halves.  A checker (tests/nbd/shadow, 4
# connections) verifies the upper half while, in the lower half, clients
#  - _exit() after issuing a few hundred requests, up to 128 in flight
#    (shadow --abort-after: no NBD_CMD_DISC, replies unread), and
#  - are killed with SIGKILL in the middle of a run.
# Then: the checker passed, the server is still alive and serves a fresh
# client, and it stops cleanly on SIGTERM.
#
#  A. the product configuration (nbdkit's default worker threads), for
#     every scheduler the build has (--dump-plugin cfq_schedulers);
#  C. SIGTERM while clients have requests in flight: nbdkit exits, no hang;
#  B. the vanishing clients under valgrind (memcheck, --leak-check=full): no invalid
#     access, no use of uninitialised data, no definite or indirect leak, and
#     no "possibly lost" block allocated by our plugin.  No suppressions: none
#     were needed with nbdkit's file plugin.
#
# Two configurations: this test runs nbdkit with --threads=1 (one request
# of each connection in the plugin at a time; the client still has many
# pipelined on the socket), and test-disconnect-mt.sh runs this same file
# with nbdkit's default worker threads (CFQ_DISCONNECT_THREADS=default).
#
# nbdkit 1.32.4 - 1.33.9 (Debian 12 ships 1.32.5) abort the whole server
# ("raw_send_socket: Assertion `sock >= 0' failed") when a client hangs up
# while two or more of its requests are in flight in worker threads: one
# worker's failed send closes the socket under the other.  It happens with
# any plugin (nbdkit's file plugin too); ours turns those assertions into
# error returns at load (plugin/hangup.c), so test-disconnect-mt.sh runs
# wherever that guard is on.  With --threads=1, 1.32.x could also abort
# when a client hung up during a block-status reply of several
# descriptors; the plugin answers one extent per reply so that this
# cannot happen without the guard either: this test caught it.
# timeout: 1800
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_shadow

size=$((64 << 20))
half=$((size / 2))
failures=()

nbdkit_version=$(nbdkit --version | awk '{print $2}')

# Worker threads per connection: 1 here, nbdkit's default for the -mt test.
case "${CFQ_DISCONNECT_THREADS:-1}" in
  default) thr=() ;;
  *) thr=(--threads="${CFQ_DISCONNECT_THREADS:-1}") ;;
esac
echo "nbdkit $nbdkit_version, worker threads: ${thr[*]:-the default}"

# bg_kill PID: kill a background client we started, if still there.
bg_kill ()
{
  kill -KILL "$1" 2>/dev/null || true
}

# abuse NAME CHECKER-OPS: run the checker on the upper half and the
# vanishing clients on the lower half of server NAME; append to failures.
abuse ()
{
  local name=$1 ops=$2 i rc cpid kpid
  local sock=${NBDKIT_SOCK[$1]} pid=${NBDKIT_PID[$1]}

  "$SHADOW" -u -s 31 -n "$ops" -c 4 -r "$half:$half" "$sock" \
    >"$TESTDIR/$name.checker" 2>&1 &
  cpid=$!
  cleanup_fn bg_kill "$cpid"

  for i in 1 2 3 4 5 6; do
    rc=0
    "$SHADOW" -u -q -s "$i" -c 4 -d 32 -r "0:$half" \
      --abort-after $((150 + 50 * i)) "$sock" >/dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] || echo "$name: vanishing client $i: exit $rc"
    kill -0 "$pid" 2>/dev/null || break
  done
  for i in 1 2; do
    kill -0 "$pid" 2>/dev/null || break
    "$SHADOW" -u -q -s $((100 + i)) -n 100000000 -r "0:$half" "$sock" \
      >/dev/null 2>&1 &
    kpid=$!
    cleanup_fn bg_kill "$kpid"
    sleep 2
    kill -KILL "$kpid" 2>/dev/null || true
    wait "$kpid" 2>/dev/null || true
  done

  rc=0
  wait "$cpid" || rc=$?
  cat "$TESTDIR/$name.checker"
  [ "$rc" = 0 ] ||
    failures+=("$name: the checker on the other half failed (exit $rc)")

  if ! kill -0 "$pid" 2>/dev/null; then
    failures+=("$name: the server died")
    if grep -q "raw_send_socket: Assertion" "$TESTDIR/$name.log"; then
      failures+=("$name: nbdkit $nbdkit_version's send assertion: a vanishing client aborted nbdkit (plugin/hangup.c guards it)")
    fi
    return
  fi
  rc=0
  "$SHADOW" -u -q -s 41 -n 2000 -c 2 "$sock" || rc=$?
  [ "$rc" = 0 ] ||
    failures+=("$name: a fresh client after the disconnects failed (exit $rc)")
}

# Schedulers to run: every one the build has (nbdkit's plugins: none).
scheds=("")
if plugin_is_ours; then
  mapfile -t scheds < <(nbdkit "$CFQ_PLUGIN" --dump-plugin |
                         sed -n 's/^cfq_schedulers=//p' | tr ',' '\n')
  [ ${#scheds[@]} -gt 0 ] || fail "--dump-plugin lists no cfq_schedulers"
fi

# part_a NAME SCHED: the product configuration.
part_a ()
{
  local name=$1
  make_image "$TESTDIR/disk.img" $size
  start_nbdkit "$name" "${thr[@]}" -- file="$TESTDIR/disk.img" ${2:+scheduler=$2}
  abuse "$name" 20000
  if kill -0 "${NBDKIT_PID[$name]}" 2>/dev/null; then
    stop_nbdkit "$name"
    [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
      failures+=("$name: nbdkit exited with status ${NBDKIT_STATUS[$name]} on SIGTERM")
  else
    stop_nbdkit "$name"
  fi
}

# part_b NAME SCHED: under valgrind.
part_b ()
{
  local name=$1 ours f
  local -a vgopts=("${thr[@]}")
  make_image "$TESTDIR/disk.img" $size
  rm -f "$TESTDIR"/vg.*.txt
  NBDKIT_WRAPPER="valgrind --leak-check=full --show-leak-kinds=all
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
    --num-callers=30 --log-file=$TESTDIR/vg.%p.txt"
  start_nbdkit "$name" "${vgopts[@]}" -- file="$TESTDIR/disk.img" \
    ${2:+scheduler=$2}
  unset NBDKIT_WRAPPER
  abuse "$name" 3000
  if ! kill -0 "${NBDKIT_PID[$name]}" 2>/dev/null; then
    stop_nbdkit "$name"
    cat "$TESTDIR"/vg.*.txt
    return
  fi
  stop_nbdkit "$name"
  for f in "$TESTDIR"/vg.*.txt; do
    echo "---- $f"
    grep -E 'ERROR SUMMARY|definitely|indirectly|possibly|still reachable|All heap' \
      "$f" || true
  done
  case "${NBDKIT_STATUS[$name]}" in
    0) ;;
    99) failures+=("$name: valgrind: memcheck errors or definite/indirect leaks")
        cat "$TESTDIR"/vg.*.txt ;;
    *) failures+=("$name: valgrind: nbdkit exited with status ${NBDKIT_STATUS[$name]}") ;;
  esac
  # "Possibly lost" blocks are nbdkit's business unless our code
  # allocated them: match frames in our plugin's sources or its .so.
  ours=$(shopt -s nullglob; for f in "$top"/plugin/*.c "$top"/core/*.c; do
           basename "$f" | sed 's/\./\\./g'; done | paste -sd'|')
  ours="nbdkit-cfq-plugin${ours:+|\\(($ours):}"
  if RE=$ours awk '
      /are possibly lost in loss record/ { inrec = 1; rec = $0; next }
      inrec && /^==[0-9]+== *$/ { if (rec ~ ENVIRON["RE"]) { print rec; bad = 1 }
                                   inrec = 0; next }
      inrec { rec = rec "\n" $0 }
      END { exit bad ? 0 : 1 }' "$TESTDIR"/vg.*.txt; then
    failures+=("$name: valgrind: blocks possibly lost in our plugin (above)")
  fi
}

# ---- A. product configuration -----------------------------------------------
for sch in "${scheds[@]}"; do
  part_a "prod${sch:+_$sch}" "$sch"
done
echo "== A done: ${#failures[@]} failures so far"

# ---- C. SIGTERM with clients in flight -------------------------------------
# The engine must stop with requests queued and at the device: nbdkit exits
# within the bound of stop_nbdkit (120 s), with status 0, no hang.
for sch in "${scheds[@]}"; do
  name=term${sch:+_$sch}
  make_image "$TESTDIR/disk.img" $size
  start_nbdkit "$name" "${thr[@]}" -- file="$TESTDIR/disk.img" ${sch:+scheduler=$sch}
  "$SHADOW" -u -q -s 51 -n 100000000 "${NBDKIT_SOCK[$name]}" >/dev/null 2>&1 &
  spid=$!
  cleanup_fn bg_kill "$spid"
  sleep 3
  t0=$(date +%s)
  stop_nbdkit "$name"
  wait "$spid" 2>/dev/null || true
  st=${NBDKIT_STATUS[$name]}
  echo "$name: nbdkit exited with $st $(( $(date +%s) - t0 )) s after SIGTERM"
  if [ "$st" != 0 ]; then
    failures+=("$name: nbdkit exited with status $st on SIGTERM under load")
    grep -q "raw_send_socket: Assertion" "$TESTDIR/$name.log" &&
      failures+=("$name: nbdkit $nbdkit_version's send assertion again")
  fi
done

# ---- B. under valgrind ----------------------------------------------------------
if ! command -v valgrind >/dev/null; then
  echo "NOTE: no valgrind: part B skipped"
elif [ -n "$CFQ_SAN_RUNTIME" ]; then
  echo "NOTE: a sanitizer build, which valgrind cannot run: part B skipped"
else
  for sch in "${scheds[@]}"; do
    part_b "vg${sch:+_$sch}" "$sch"
  done
fi

if [ ${#failures[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${failures[@]}"
  fail "${#failures[@]} problems"
fi
echo "== the server survived vanishing clients, and valgrind is clean"
