#!/usr/bin/env bash
# test-buffers.sh: the request buffer pool and the request size limit.
#
# - A read or write larger than the 32 MiB maximum we advertise is refused
#   with EINVAL (nbdkit 1.32 does not enforce the maximum itself).
# - With buffer_pool=33M (the least allowed), 4 connections each reading
#   32 MiB at an unaligned offset at once (each needs a 33 MiB buffer: one
#   fits) all get the right data: a request waits for a buffer, it does not
#   fail.  The stats at exit
#   show it: waits > 0, the peak within the cap, nothing left in use, and
#   the request limit (max_request).
# - buffer_pool values outside its range are refused at start-up, naming
#   the key.
# - buffer_pool is a [device] key of the config file too (the plugin's
#   buffer_pool= overrides it): the pool's cap in stats is the file's, or
#   the command line's when both are given; a bad value in the file is
#   refused naming its line.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd
plugin_is_ours || skip "buffer_pool= and the size limit are our plugin's"

size=$((64 << 20))
make_image "$TESTDIR/disk.img" $size
start_nbdkit srv --threads 16 -- file="$TESTDIR/disk.img" buffer_pool=33M \
  stats="$TESTDIR/stats.json"

"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$TESTDIR/disk.img" <<'PY' || fail "client checks failed"
import errno, sys
import nbd

sock, img = sys.argv[1], sys.argv[2]
with open(img, "rb") as f:
    disk = f.read()

h = nbd.NBD()
h.set_strict_mode(0)            # send what the server advertises it refuses
h.connect_unix(sock)
big = 40 << 20
for what, f in (("read", lambda: h.pread(big, 1)),
                ("write", lambda: h.pwrite(b"\0" * big, 1))):
    try:
        f()
    except nbd.Error as e:
        if e.errnum != errno.EINVAL:
            sys.exit("FAIL: 40 MiB %s: %s, want EINVAL" % (what, e.string))
        print("40 MiB %s: EINVAL, as it should" % what)
        continue
    sys.exit("FAIL: a 40 MiB %s succeeded" % what)
# The connection still serves.
assert h.pread(4096, 0) == disk[:4096], "read after the refusals differs"

import threading
n, per, ln = 4, 3, 32 << 20
bad = []

def reader(i):
    c = nbd.NBD()
    c.set_strict_mode(0)        # unaligned on purpose
    c.connect_unix(sock)
    for j in range(per):
        off = 1 + (i * per + j) * 4099
        if c.pread(ln, off) != disk[off:off + ln]:
            bad.append(off)
    c.shutdown()

ts = [threading.Thread(target=reader, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
if bad:
    sys.exit("FAIL: unaligned 32 MiB reads at %s returned wrong data" % bad)
print("%d unaligned 32 MiB reads on %d connections at once: all right" %
      (n * per, n))
h.shutdown()
PY

stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with ${NBDKIT_STATUS[srv]}"
"$PYTHON" - "$TESTDIR/stats.json" <<'PY' || fail "buffer pool stats wrong"
import json, sys
d = json.load(open(sys.argv[1]))["device"]
assert d["max_request"] == 32 << 20, "max_request %r, want 32 MiB" % d.get("max_request")
b = d["buffers"]
print("max_request:", d["max_request"], "buffers:", b)
cap = 33 << 20
assert b["cap"] == cap, "cap %d, want %d" % (b["cap"], cap)
assert b["peak"] <= cap, "peak %d over the cap" % b["peak"]
assert b["peak"] >= 32 << 20, "peak %d: the big reads took no buffer" % b["peak"]
assert b["in_use"] == 0, "%d bytes still in use" % b["in_use"]
assert b["waits"] > 0, "no request waited: the cap did not bind"
assert b["gets"] >= 12, "only %d buffers handed out" % b["gets"]
PY

for v in 1M 32M 65G nonsense; do  # 32M: less than a 32 MiB span needs
  rc=0
  out=$(nbdkit -f -U "$TESTDIR/bad.sock" "$CFQ_PLUGIN" file="$TESTDIR/disk.img" \
    buffer_pool=$v --run 'echo SERVED' 2>&1) || rc=$?
  if [ "$rc" = 0 ] || grep -q SERVED <<<"$out" || ! grep -qi "buffer_pool" <<<"$out"; then
    echo "$out" >&2
    fail "buffer_pool=$v: not refused at start-up with a message naming it (rc $rc)"
  fi
  echo "buffer_pool=$v refused: $(grep -i buffer_pool <<<"$out" | head -n1)"
done
# [device] buffer_pool: the config file's value, or the command line's.
pool_cap ()
{
  "$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["device"]["buffers"]["cap"])' "$1"
}
printf '[device]\nfile = %s\nbuffer_pool = 40M\n[export]\n' "$TESTDIR/disk.img" \
  >"$TESTDIR/pool.conf"
for ovr in "" 48M; do
  rm -f "$TESTDIR/pool.json"
  rm -f "$TESTDIR/pool.sock"
  nbdkit -f -U "$TESTDIR/pool.sock" "$CFQ_PLUGIN" config="$TESTDIR/pool.conf" \
    ${ovr:+buffer_pool=$ovr} stats="$TESTDIR/pool.json" --run 'true' ||
    fail "config with buffer_pool = 40M${ovr:+ and buffer_pool=$ovr}: not served"
  want=40
  [ -z "$ovr" ] || want=${ovr%M}
  got=$(pool_cap "$TESTDIR/pool.json")
  [ "$got" = $((want << 20)) ] ||
    fail "buffer_pool = 40M in the file${ovr:+, $ovr on the command line}: cap $got, want $((want << 20))"
  echo "[device] buffer_pool = 40M${ovr:+, buffer_pool=$ovr}: cap $got"
done
printf '[device]\nfile = %s\nbuffer_pool = 1M\n[export]\n' "$TESTDIR/disk.img" \
  >"$TESTDIR/pool.conf"
rc=0
rm -f "$TESTDIR/pool.sock"
out=$(nbdkit -f -U "$TESTDIR/pool.sock" "$CFQ_PLUGIN" config="$TESTDIR/pool.conf" \
  --run 'echo SERVED' 2>&1) || rc=$?
if [ "$rc" = 0 ] || grep -q SERVED <<<"$out" || ! grep -q "pool.conf:3: buffer_pool = 1M" <<<"$out"; then
  echo "$out" >&2
  fail "buffer_pool = 1M in the file: not refused naming its line (rc $rc)"
fi
echo "buffer_pool = 1M in the file refused: $(grep -i buffer_pool <<<"$out" | head -n1)"
echo "== buffers: the size limit holds, the pool caps and waits"
