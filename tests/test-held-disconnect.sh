#!/usr/bin/env bash
# test-held-disconnect.sh: requests the scheduler holds back end with their
# client, and with the server.
#
# Two tenants; "capped" has a cap at its floor (bps_max = 1M), so of its
# 8 MiB reads the first goes at once and each next one waits about 8 s
# for tokens (plugin/engine.c, "held requests").
#  1. A client sends four 8 MiB reads to "capped", reads the first one's
#     answer and is killed (SIGKILL): its connection leaves the stats JSON
#     within 5 s (the target is 1 s; the time is printed), the device's
#     "cancelled" count says its held requests were taken back, the
#     server is alive, and a client of "other" is served meanwhile and
#     after, each read within 5 s.  Were they not taken back, the
#     connection would stay until the last hold ends, about 25 s.
#  2. A client that sends NBD_CMD_DISC after its reads (libnbd's
#     aio_disconnect; the protocol asks clients to wait for their answers
#     first) is answered at once: its held reads fail with ESHUTDOWN
#     (nbdkit 1.32 tells a plugin of NBD_CMD_DISC, of a half-close and of
#     a hang-up alike), and its connection goes.
#  3. A cap below the floor is refused: in a config file, at its line,
#     with the reason; by the control socket, with the reason, the cap
#     left as it was.
#  4. A live client of "capped" with reads held, and SIGTERM: the held
#     reads fail (the client gets errors, not data), the client then hangs
#     up, and nbdkit exits with status 0 within 10 s (the target is 2 s;
#     the time is printed).  (nbdkit 1.32 itself waits for every connected
#     client to hang up after SIGTERM; the plugin's part is to fail what
#     it holds.)
#  5. Writes taken back are not write-back errors: a client sends FUA
#     writes of 8 MiB to "capped" (the first goes, the rest are held; each
#     through the buffer pool) and is killed; once its writes are taken back, a client of
#     "other" (the same file) writes with FUA and flushes, successfully.
#     Were a taken-back write counted as a failed write-back, every other
#     connection's next flush would report EIO.
# With nbdkit's default worker threads (CFQ_HELD_THREADS=1: --threads=1,
# one request of a connection in the plugin at a time).  nbdkit 1.32.4 -
# 1.33.9 may abort when a client hangs up with two or more requests in
# worker threads (RHBZ#2173054, see test-disconnect.sh): if the server
# dies with that assertion, the test says so.
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd

case "${CFQ_HELD_THREADS:-default}" in
  default) thr=() ;;
  *) thr=(--threads="$CFQ_HELD_THREADS") ;;
esac
echo "nbdkit $(nbdkit --version | awk '{print $2}'), worker threads:" \
  "${thr[*]:-the default}"

make_sparse "$TESTDIR/disk.img" 512M
cat >"$TESTDIR/held.conf" <<'EOF'
[device]
file = disk.img

[group capped]
weight = 500
bps_max = 1M

[group other]
weight = 500

[export capped]
group = capped
size = 256M

[export other]
group = other
offset = 256M
EOF

# The clients.  holder SOCK N WAIT: N 8 MiB reads of "capped" at once,
# the first one's answer read (the others are held), "sent" on stdout;
# WAIT=sleep: then sleep (to be killed); WAIT=replies: read the replies
# until every read has its answer, print "ok N failed M" and hang up;
# WAIT=disc: send NBD_CMD_DISC first, then the same, and the errors.
# reader SOCK: one 1 MiB read of "other", its time in ms.
cat >"$TESTDIR/holder.py" <<'EOF'
import sys, time
import nbd
sock, n, wait = sys.argv[1], int(sys.argv[2]), sys.argv[3]
h = nbd.NBD()
h.set_export_name("capped")
h.connect_unix(sock)
bufs = [nbd.Buffer(8 << 20) for _ in range(n)]
cookies = [h.aio_pread(b, i * (8 << 20)) for i, b in enumerate(bufs)]
# The first goes at once: its answer read, the others are held.
while not h.aio_command_completed(cookies[0]):
    h.poll(-1)
print("sent", flush=True)
if wait == "sleep":
    time.sleep(600)
    sys.exit(0)
if wait == "disc":
    h.aio_disconnect(0)
ok, failed, errs = 1, 0, set()
pending = cookies[1:]
while pending:
    try:
        h.poll(-1)
    except nbd.Error:           # the server hung up: the rest is lost
        failed += len(pending)
        break
    for c in list(pending):
        try:
            if h.aio_command_completed(c):
                ok += 1
                pending.remove(c)
        except nbd.Error as e:
            failed += 1
            errs.add(e.errno)
            pending.remove(c)
print("ok %d failed %d %s" % (ok, failed, " ".join(sorted(map(str, errs)))),
      flush=True)
EOF
cat >"$TESTDIR/reader.py" <<'EOF'
import sys, time
import nbd
h = nbd.NBD()
h.set_export_name("other")
h.connect_unix(sys.argv[1])
t = time.monotonic()
h.pread(1 << 20, 0)
print("%.0f" % ((time.monotonic() - t) * 1000))
h.shutdown()
EOF

# cancelled SRV: the device's count of requests taken back.
cancelled ()
{
  stats_json "$1" | "$PYTHON" -c '
import json, sys
print(json.load(sys.stdin)["device"]["cancelled"])'
}

# other_served SRV WHEN: a read of "other" answered within 5 s.
other_served ()
{
  local ms
  ms=$(timeout 30 "$PYTHON" "$TESTDIR/reader.py" "${NBDKIT_SOCK[$1]}") ||
    fail "$2: the other tenant's read failed"
  echo "$2: the other tenant's 1 MiB read took $ms ms"
  [ "$ms" -lt 5000 ] || fail "$2: the other tenant waited $ms ms"
}

# died SRV: fail, naming nbdkit's abort if that is why.
died ()
{
  if grep -q "raw_send_socket: Assertion" "$TESTDIR/$1.log"; then
    fail "nbdkit aborted: the nbdkit 1.32.4-1.33.9 bug RHBZ#2173054 (a" \
      "client hanging up with requests in worker threads), not the plugin's"
  fi
  fail "the server died: $(tail -5 "$TESTDIR/$1.log")"
}

now_ms () { echo $(( $(date +%s%N) / 1000000 )); }

control_start srv "${thr[@]}" -- config="$TESTDIR/held.conf"

# fresh SRV: the cap's bucket empty, so a holder's first read goes at once.
fresh ()
{
  ctl "$1" qos capped bps_max 1M >/dev/null || fail "qos capped bps_max 1M"
}

# ---- 1. SIGKILL with reads held ----------------------------------------------------------
fresh srv
"$PYTHON" "$TESTDIR/holder.py" "${NBDKIT_SOCK[srv]}" 4 sleep \
  >"$TESTDIR/holder.out" 2>&1 &
hpid=$!
cleanup_fn kill -KILL "$hpid"
wait_for "the holder's reads sent" 30 grep -q sent "$TESTDIR/holder.out"
wait_for "the holder's connection in the stats" 30 conns_are srv 1 capped
sleep 1                                 # its reads reach the scheduler
other_served srv "while reads are held"
c0=$(cancelled srv)
kill -KILL "$hpid"
t0=$(now_ms)
gone=
while [ $(( $(now_ms) - t0 )) -lt 10000 ]; do
  if [ "$(conns srv capped)" = 0 ]; then
    gone=$(( $(now_ms) - t0 ))
    break
  fi
  sleep 0.02
done
kill -0 "${NBDKIT_PID[srv]}" 2>/dev/null || died srv
[ -n "$gone" ] || fail "the killed client's connection is still in the stats after 10 s"
c1=$(cancelled srv)
echo "SIGKILL: the connection left the stats $gone ms after the kill;" \
  "requests taken back: $((c1 - c0))"
[ "$gone" -le 5000 ] || fail "the connection left the stats after $gone ms (> 5 s)"
[ "$((c1 - c0))" -ge 1 ] || fail "no request was taken back (cancelled $c0 -> $c1)"
other_served srv "after the kill"

# ---- 2. NBD_CMD_DISC with reads held -------------------------------------------------------
fresh srv
c0=$(cancelled srv)
t0=$(now_ms)
timeout 60 "$PYTHON" "$TESTDIR/holder.py" "${NBDKIT_SOCK[srv]}" 3 disc \
  >"$TESTDIR/disc.out" 2>&1 || fail "the DISC client failed: $(cat "$TESTDIR/disc.out")"
took=$(( $(now_ms) - t0 ))
c1=$(cancelled srv)
echo "NBD_CMD_DISC: $(tail -1 "$TESTDIR/disc.out") in $took ms; taken back: $((c1 - c0))"
# (A read nbdkit takes from the socket just as another worker takes the
# NBD_CMD_DISC after it is failed by nbdkit itself, never reaching the
# plugin: so one or both are taken back.)
grep -qx "ok 1 failed 2 ESHUTDOWN" "$TESTDIR/disc.out" ||
  fail "the held reads of a client that sent NBD_CMD_DISC: not answered with ESHUTDOWN"
[ "$((c1 - c0))" -ge 1 ] || fail "taken back: $((c1 - c0)), want 1 or 2"
wait_for "the DISC client's connection to go" 5 conns_are srv 0 capped

# ---- 3. the floor --------------------------------------------------------------------------
rc=0
ctl srv qos capped bps_max 999999 >"$TESTDIR/o" 2>"$TESTDIR/e" || rc=$?
echo "cfqctl qos capped bps_max 999999: exit $rc: $(cat "$TESTDIR/e" "$TESTDIR/o")"
[ "$rc" != 0 ] || fail "a cap below the floor was taken by the control socket"
grep -qF "bps_max 999999: below the floor of 1M: at the floor one request of the largest size (32 MiB) waits up to 34 s" \
  "$TESTDIR/e" || fail "the control socket's refusal does not give the reason"
v=$(ctl srv qos capped)
[ "$v" = "bps_max=1M" ] || fail "qos capped after the refusal: '$v', want bps_max=1M"
sed 's/^bps_max = 1M/bps_max = 512KiB\/s/' "$TESTDIR/held.conf" >"$TESTDIR/low.conf"
rc=0
timeout 60 nbdkit -U - "$CFQ_PLUGIN" config="$TESTDIR/low.conf" --run true \
  >"$TESTDIR/low.out" 2>&1 </dev/null || rc=$?
echo "a config with bps_max = 512KiB/s: exit $rc: $(cat "$TESTDIR/low.out")"
[ "$rc" = 1 ] || fail "a config below the floor: exit $rc, want 1"
grep -qF "$TESTDIR/low.conf:6: bps_max = 512KiB/s: below the floor of 1M: at the floor one request of the largest size (32 MiB) waits up to 34 s for its tokens, under a lower cap longer (0: no cap)" \
  "$TESTDIR/low.out" || fail "a config below the floor: not refused at its line with the reason"

# ---- 4. SIGTERM with reads held ------------------------------------------------------------
fresh srv
"$PYTHON" "$TESTDIR/holder.py" "${NBDKIT_SOCK[srv]}" 3 replies \
  >"$TESTDIR/live.out" 2>&1 &
lpid=$!
cleanup_fn kill -KILL "$lpid"
wait_for "the live client's reads sent" 30 grep -q sent "$TESTDIR/live.out"
sleep 1
[ "$(conns srv capped)" = 1 ] || fail "the live client is not connected"
c0=$(cancelled srv)
t0=$(now_ms)
kill -TERM "${NBDKIT_PID[srv]}"
for (( i = 0; i < 500; i++ )); do
  kill -0 "${NBDKIT_PID[srv]}" 2>/dev/null || break
  sleep 0.02
done
took=$(( $(now_ms) - t0 ))
if kill -0 "${NBDKIT_PID[srv]}" 2>/dev/null; then
  fail "nbdkit still runs $took ms after SIGTERM"
fi
st=0
wait "${NBDKIT_PID[srv]}" || st=$?
echo "SIGTERM: nbdkit exited $took ms after it, status $st"
grep -q "raw_send_socket: Assertion" "$TESTDIR/srv.log" && died srv
[ "$st" = 0 ] || fail "nbdkit exited with status $st after SIGTERM"
[ "$took" -le 10000 ] || fail "nbdkit took $took ms to exit after SIGTERM (> 10 s)"
wait "$lpid" || fail "the live client failed: $(cat "$TESTDIR/live.out")"
cat "$TESTDIR/live.out"
grep -qE '^ok [0-9]+ failed [1-9]' "$TESTDIR/live.out" ||
  fail "the live client's held reads did not fail"
grep -q "aborting sleep because of server shut down" "$TESTDIR/srv.log" ||
  fail "the server's log does not say the held reads were failed for the shutdown"
# ---- 5. writes taken back are not write-back errors ----------------------------------------
# With nbdkit's default threads only: its workers hold the next writes
# while the first is answered (part 1 covers the hang-up with --threads=1).
if [ ${#thr[@]} -eq 0 ]; then
# nbdkit's own buffers as glibc aligns them (-D cfq.aligned_buffers=0):
# the aligned writes below then go through the pool, the path where a
# write taken back was counted (an unaligned one is held at its edge
# reads, before the write).
control_start w "${thr[@]}" -D cfq.aligned_buffers=0 -- config="$TESTDIR/held.conf"
cat >"$TESTDIR/wholder.py" <<'EOF'
import sys, time
import nbd
h = nbd.NBD()
h.set_export_name("capped")
h.connect_unix(sys.argv[1])
data = bytearray(b"w" * (8 << 20))
cookies = [h.aio_pwrite(nbd.Buffer.from_bytearray(data), i * (8 << 20),
                        flags=nbd.CMD_FLAG_FUA) for i in range(4)]
while not h.aio_command_completed(cookies[0]):
    h.poll(-1)
# Every write on the socket, so nbdkit's workers have them whole.
while h.aio_get_direction() & nbd.AIO_DIRECTION_WRITE:
    h.poll(1)
print("sent", flush=True)
time.sleep(600)
EOF
# The other tenant connects first: a connection counts write-back errors
# from the time it opens.
cat >"$TESTDIR/wother.py" <<'EOF'
import os, sys
import nbd
h = nbd.NBD()
h.set_export_name("other")
h.connect_unix(sys.argv[1])
h.flush()
print("connected", flush=True)
sys.stdin.readline()                    # until the writes are taken back
h.pwrite(b"o" * 4096, 0, flags=nbd.CMD_FLAG_FUA)
h.flush()
h.shutdown()
print("other: a FUA write and a flush after the writes were taken back: ok")
EOF
mkfifo "$TESTDIR/wgo"
"$PYTHON" "$TESTDIR/wother.py" "${NBDKIT_SOCK[w]}" <"$TESTDIR/wgo" \
  >"$TESTDIR/wother.out" 2>&1 &
opid=$!
cleanup_fn kill -KILL "$opid"
exec 7>"$TESTDIR/wgo"
wait_for "the other tenant's connection" 30 grep -q connected "$TESTDIR/wother.out"
c0=$(cancelled w)
"$PYTHON" "$TESTDIR/wholder.py" "${NBDKIT_SOCK[w]}" >"$TESTDIR/wholder.out" 2>&1 &
wpid=$!
cleanup_fn kill -KILL "$wpid"
wait_for "the write holder's first write" 30 grep -q sent "$TESTDIR/wholder.out"
# The next writes reach the plugin (nbdkit's other workers read them
# while the first is answered), where the cap holds them.
sleep 1
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null || true
for (( i = 0; i < 50; i++ )); do
  c1=$(cancelled w)
  [ "$c1" -gt "$c0" ] && break
  sleep 0.2
done
[ "$c1" -gt "$c0" ] || fail "the killed client's held writes were not taken back"
echo go >&7
exec 7>&-
wait "$opid" || fail "another tenant's FUA write or flush failed after the writes were taken back: $(cat "$TESTDIR/wother.out")"
cat "$TESTDIR/wother.out"
kill -0 "${NBDKIT_PID[w]}" 2>/dev/null || died w
stop_nbdkit w
fi
echo "== held requests end with their client and with the server"
