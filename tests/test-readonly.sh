#!/usr/bin/env bash
# test-readonly.sh: "nbdkit -r" serves reads and refuses every kind of
# write: write, write+FUA, trim, zero (with and without may-trim, fast).
#
#  1. with libnbd's strict mode on (the client itself refuses), and off: then
#     the requests reach the server, which must answer EPERM (NBD has no
#     EROFS) and keep the connection usable;
#  2. the file's checksum is unchanged afterwards;
#  3. -r on a file the server could not open for writing (a read-only bind
#     mount): the plugin must open it read-only and serve it;
#  4. the same file WITHOUT -r: our plugin documents that it falls back to
#     read-only when opening read-write is refused, so the export must say
#     read-only and refuse writes (nbdkit's file plugin does not: skipped).
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd

size=$((16 << 20))
make_image "$TESTDIR/disk.img" $size
sum=$(sha256sum <"$TESTDIR/disk.img")

# check_ro SOCKET FILE: the assertions, in python (libnbd bindings).
check_ro ()
{
  "$PYTHON" - "$1" "$2" <<'EOF'
import errno, sys
import nbd

sock, path = sys.argv[1], sys.argv[2]
want = open(path, "rb").read()
size = len(want)

def refused(h, what, f):
    try:
        f()
    except nbd.Error as e:
        print("%-28s refused: %s" % (what, e.string))
        return e.errnum
    sys.exit("FAIL: %s on a read-only export succeeded" % what)

h = nbd.NBD()
# Our plugin advertises its O_DIRECT alignment as the minimum block size
# and documents that smaller requests are served (read-modify-write): let
# unaligned requests through libnbd's own alignment check.
h.set_strict_mode(nbd.STRICT_MASK & ~nbd.STRICT_ALIGN)
h.connect_unix(sock)
assert h.get_size() == size, "size %d, want %d" % (h.get_size(), size)
assert h.is_read_only() == 1, "the export does not say it is read-only"

# Reads work, unaligned ones too, and return the file's bytes.
for off, n in ((0, 4096), (12345, 6789), (size - 513, 513), (4 << 20, 1 << 20)):
    got = h.pread(n, off)
    assert got == want[off:off + n], "read [%d, +%d) differs" % (off, n)
print("reads: OK")

buf = b"\xa5" * 4096
for strict in (True, False):
    if not strict:
        # Send the requests anyway: now the server must refuse them.
        # (Before this, libnbd refuses them itself: the export is read-only.)
        h.set_strict_mode(0)
    tag = "client" if strict else "server"
    cases = [
        ("write", lambda: h.pwrite(buf, 8192)),
        ("write+fua", lambda: h.pwrite(buf, 8192, nbd.CMD_FLAG_FUA)),
        ("write unaligned", lambda: h.pwrite(buf[:100], 777)),
        ("trim", lambda: h.trim(65536, 0)),
        ("zero", lambda: h.zero(65536, 0)),
        ("zero no-hole", lambda: h.zero(65536, 0, nbd.CMD_FLAG_NO_HOLE)),
        ("zero fast", lambda: h.zero(65536, 0, nbd.CMD_FLAG_FAST_ZERO)),
    ]
    for what, f in cases:
        e = refused(h, "%s (%s)" % (what, tag), f)
        if not strict and what != "zero fast":
            # A fast zero may also be refused as "not supported": fine.
            assert e in (errno.EPERM, errno.EROFS), \
                "%s: server said %s, want EPERM" % (what, errno.errorcode.get(e, e))
    # The connection survives the refusals.
    assert h.pread(4096, 0) == want[:4096], "read after refusals differs"
    assert not h.aio_is_dead(), "the server dropped the connection"
print("refusals: OK")
h.shutdown()
EOF
}

start_nbdkit ro -r -- file="$TESTDIR/disk.img"
check_ro "${NBDKIT_SOCK[ro]}" "$TESTDIR/disk.img" || fail "read-only checks failed"
stop_nbdkit ro
[ "${NBDKIT_STATUS[ro]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[ro]}"
[ "$(sha256sum <"$TESTDIR/disk.img")" = "$sum" ] ||
  fail "the file changed under a read-only server"
echo "== nbdkit -r: OK"

# ---- a file nobody can open for writing --------------------------------------
[ "$(id -u)" = 0 ] || skip "read-only export passed; bind mounts need root"
mkdir -p "$TESTDIR/rw" "$TESTDIR/ro"
mv "$TESTDIR/disk.img" "$TESTDIR/rw/"
mount --bind "$TESTDIR/rw" "$TESTDIR/ro" ||
  skip "read-only export passed; cannot bind-mount here"
cleanup_fn umount -l "$TESTDIR/ro"
mount -o remount,bind,ro "$TESTDIR/ro" ||
  skip "read-only export passed; cannot make a read-only bind mount"
if (: >>"$TESTDIR/ro/disk.img") 2>/dev/null; then
  fail "the read-only bind mount is writable: broken set-up"
fi
start_nbdkit rofs -r -- file="$TESTDIR/ro/disk.img"
check_ro "${NBDKIT_SOCK[rofs]}" "$TESTDIR/ro/disk.img" ||
  fail "read-only checks failed on a read-only mount"
stop_nbdkit rofs
[ "${NBDKIT_STATUS[rofs]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[rofs]}"
echo "== nbdkit -r on a read-only mount: OK"

if plugin_is_ours; then
  start_nbdkit rofs2 -- file="$TESTDIR/ro/disk.img"
  check_ro "${NBDKIT_SOCK[rofs2]}" "$TESTDIR/ro/disk.img" ||
    fail "no -r, read-only mount: the export is not read-only"
  stop_nbdkit rofs2
  [ "${NBDKIT_STATUS[rofs2]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[rofs2]}"
  echo "== read-only mount without -r: served read-only"
fi
