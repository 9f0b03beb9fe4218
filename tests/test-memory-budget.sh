#!/usr/bin/env bash
# test-memory-budget.sh: the memory budget holds whatever the clients do,
# and a client that reads no reply is cut off.
#
#  1. A budget smaller than its fixed parts is refused at start, from the
#     command line and at its config line, naming the parts; cfqconf says
#     the same.
#  2. memory=1G, no reply timeout: 4 clients each send 32 reads of 32 MiB
#     and read no reply (tests/nbdhangup.py stall), pinning nbdkit's
#     request buffers.  The server's RSS stays under 1 GiB; stats show
#     nbdkit's buffers within the request budget and growths refused; a
#     fresh client's 4k reads are served meanwhile (the last quarter of the
#     budget is kept for requests of 1 MiB or less).
#  3. reply_timeout=2s: the same client is cut off by the server within
#     10 s, stats count it, and the buffers are given back.
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
PYTHON=/usr/bin/python3
HANGUP=$top/tests/nbdhangup.py

make_sparse "$TESTDIR/disk.img" $((1 << 30))
aligned=$(nbdkit "$CFQ_PLUGIN" --dump-plugin | sed -n 's/^cfq_aligned_buffers=//p')
[ "$aligned" = yes ] ||
  fail "the plugin cannot count nbdkit's request buffers on nbdkit $(nbdkit --version)"

# ---- 1. refused at start ----------------------------------------------------
rc=0
out=$(nbdkit -f -U "$TESTDIR/bad.sock" "$CFQ_PLUGIN" file="$TESTDIR/disk.img" \
  memory=512M --run 'echo SERVED' 2>&1) || rc=$?
echo "$out"
[ "$rc" != 0 ] && ! grep -q SERVED <<<"$out" || fail "memory=512M was accepted"
grep -q 'memory = 512M is less than its parts: buffer_pool 256M + max_connections 1024 x 256K' <<<"$out" ||
  fail "memory=512M: the message does not name the parts"
cat >"$TESTDIR/small.conf" <<EOC
[device]
file = $TESTDIR/disk.img
buffer_pool = 64M
max_connections = 64
memory = 200M

[export a]
EOC
rc=0
out=$(nbdkit -f -U "$TESTDIR/bad.sock" "$CFQ_PLUGIN" config="$TESTDIR/small.conf" \
  --run 'echo SERVED' 2>&1) || rc=$?
echo "$out"
[ "$rc" != 0 ] || fail "memory = 200M with a 64M pool and 64 connections was accepted"
grep -q "small.conf:5: memory = 200M is less than its parts" <<<"$out" ||
  fail "the error does not point at memory's line"
out=$("$top/tools/cfqconf" "$TESTDIR/small.conf" 2>&1) && fail "cfqconf accepted memory = 200M"
grep -q "small.conf:5: memory = 200M is less than its parts" <<<"$out" ||
  fail "cfqconf does not report memory's line: $out"
sed -i 's/^memory = 200M/memory = 300M/' "$TESTDIR/small.conf"
"$top/tools/cfqconf" "$TESTDIR/small.conf" >/dev/null ||
  fail "memory = 300M (64M + 64 x 256K + 64M + 64M fits) was refused"

# ---- 2. non-reading clients against memory=1G --------------------------------
control_start mem -- file="$TESTDIR/disk.img" memory=1G reply_timeout=0
pid=${NBDKIT_PID[mem]}
pids=()
for i in 1 2 3 4; do
  "$PYTHON" "$HANGUP" --span $((1 << 30)) --hold 12 "${NBDKIT_SOCK[mem]}" "" \
    stall 32 $((32 << 20)) >/dev/null &
  pids+=($!)
done
peak=0
for (( t = 0; t < 8; t++ )); do
  sleep 1
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  [ "$rss" -gt "$peak" ] && peak=$rss
done
# A fresh client meanwhile: 200 reads of 4 KiB.
"$PYTHON" - "${NBDKIT_SOCK[mem]}" <<'PY' || fail "a fresh client was not served while the budget was full"
import nbd, sys
h = nbd.NBD()
h.connect_unix(sys.argv[1])
for i in range(200):
    h.pread(4096, (1 << 29) + i * 4096)
h.shutdown()
print("a fresh client: 200 reads of 4 KiB served")
PY
stats_json mem >"$TESTDIR/mem.json"
# With no reply timeout none of them may be cut off: each holds on to
# the end (nbdhangup.py stall exits 3).
for p in "${pids[@]}"; do
  rc=0
  wait "$p" || rc=$?
  [ "$rc" = 3 ] || fail "a stalled client ended with $rc (3: held to the end) with reply_timeout=0"
done
echo "RSS peak: $((peak / 1024)) MiB with memory=1G"
"$PYTHON" - "$TESTDIR/mem.json" "$peak" <<'PY' || fail "the budget did not hold"
import json, sys
m = json.load(open(sys.argv[1]))["device"]["memory"]
peak_kib = int(sys.argv[2])
r = m["requests"]
print("memory:", m)
assert m["budget"] == 1 << 30, m["budget"]
assert r["limit"] == m["budget"] - m["pool"] - m["connections"] - m["base"], r
assert r["peak"] >= r["limit"] // 2, "the stalled clients pinned only %d" % r["peak"]
assert r["refused"] > 0, "no growth was refused: the budget did not bind"
assert peak_kib * 1024 < m["budget"], "RSS %d KiB over the budget" % peak_kib
PY
stop_nbdkit mem

# ---- 3. the reply timeout ------------------------------------------------------
control_start to -- file="$TESTDIR/disk.img" reply_timeout=2s
rc=0
"$PYTHON" "$HANGUP" --span $((1 << 30)) --hold 10 "${NBDKIT_SOCK[to]}" "" \
  stall 32 $((32 << 20)) || rc=$?
[ "$rc" = 0 ] || fail "a client that read no reply was not cut off within 10 s (rc $rc)"
# Its workers end and give their buffers back: wait up to 10 s.
for (( i = 0; i < 20; i++ )); do
  stats_json to >"$TESTDIR/to.json"
  "$PYTHON" -c '
import json, sys
m = json.load(open(sys.argv[1]))["device"]["memory"]
sys.exit(0 if m["requests"]["in_use"] <= 16 << 20 else 1)' "$TESTDIR/to.json" && break
  sleep 0.5
done
"$PYTHON" -c '
import json, sys
m = json.load(open(sys.argv[1]))["device"]["memory"]
print("memory:", m)
assert m["reply_timeout_ms"] == 2000, m
assert m["reply_timeouts"] >= 1, "no timeout counted"
assert m["requests"]["in_use"] <= 16 << 20, "buffers not given back: %d" % m["requests"]["in_use"]
' "$TESTDIR/to.json" || fail "stats after the cut-off"
grep -q 'took no reply for 2000 ms' "$TESTDIR/to.log" || fail "the cut-off was not logged"
stop_nbdkit to
echo "== the memory budget held and the silent client was cut off"
