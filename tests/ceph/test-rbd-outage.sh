#!/usr/bin/env bash
# test-rbd-outage.sh: a cluster that stops answering gives the client a
# clear error, not a hang.  The OSD is stopped (SIGSTOP) under a
# backend=rbd server with rbd_timeout=3s: a read and a write must each fail
# with EIO within 20 s, and the log name the image and the timeout, once
# for each failure; once the OSD runs again (SIGCONT), the same connection
# reads and writes again.
#
# Needs the OSD's pid: the cluster must be one tests/ceph/cluster.sh
# started (its run/osd.0.pid next to ceph.conf); skips otherwise.
# timeout: 180
. "$(dirname "$0")/ceph-functions.sh"
requires_ceph
requires_python_nbd
pidf=$(dirname "$CEPH_CONF")/run/osd.0.pid
[ -s "$pidf" ] || skip "no $pidf: not a cluster of tests/ceph/cluster.sh"
osd=$(cat "$pidf")
kill -0 "$osd" || fail "the OSD ($osd) is not running"

img=$(rbd_image out 16M)
start_nbdkit srv backend=rbd image="$img" rbd_timeout=3s
cleanup_fn kill -CONT "$osd"

"$PYTHON" - "${NBDKIT_URI[srv]}" "$osd" <<'EOF' || fail "the outage was not reported as it must be"
import errno, os, signal, sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
osd = int(sys.argv[2])
h.pwrite(b"a" * 4096, 8192)
assert h.pread(4096, 8192) == b"a" * 4096
os.kill(osd, signal.SIGSTOP)
try:
    for what, call in (("read", lambda: h.pread(4096, 1 << 20)),
                       ("write", lambda: h.pwrite(b"b" * 4096, 2 << 20))):
        t = time.monotonic()
        try:
            call()
            sys.exit("%s: succeeded with the OSD stopped" % what)
        except nbd.Error as e:
            took = time.monotonic() - t
            print("%s: %s after %.1f s" % (what, e, took))
            assert e.errnum == errno.EIO, "%s: errno %s, want EIO" % (what, e.errnum)
            assert took < 20, "%s: took %.1f s" % (what, took)
finally:
    os.kill(osd, signal.SIGCONT)
# The cluster is back: the same connection works again.
for i in range(60):
    try:
        h.pwrite(b"c" * 4096, 8192)
        break
    except nbd.Error:
        time.sleep(1)
assert h.pread(4096, 8192) == b"c" * 4096
print("after SIGCONT: read and write work again")
EOF
stop_nbdkit srv
grep -q "cfq: rbd rbd/$img: read of 4096 bytes at 1048576: Connection timed out" \
  "$TESTDIR/srv.log" || fail "the log does not say which image timed out"
# Each failure is logged once, by the backend (what librbd said); the
# plugin's edge does not add a line of its own for it.
if grep -E "error: cfq: (pread|pwrite): " "$TESTDIR/srv.log"; then
  fail "a failed request was logged twice (the backend's line and another)"
fi
echo "== an outage gives EIO within rbd_timeout, and the server serves again after it"
