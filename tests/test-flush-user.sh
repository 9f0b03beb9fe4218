#!/usr/bin/env bash
# test-flush-user.sh: where a connection cannot open its file again for
# its flushes, it is still served, and flushes the shared descriptor
# (io.c).  nbdkit -u nobody drops root after the plugin has opened a
# root-only (0600) image, so the reopen through /proc/self/fd is refused:
#  - two connections each write and flush: ok, and read their data back;
#  - the log says why, once, naming the file;
#  - as root, the same server logs nothing of the kind.
# timeout: 60
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_root
requires_python_nbd
plugin_is_ours || skip "the flush descriptors are our plugin's"
id nobody >/dev/null 2>&1 || skip "no user nobody"

img=$TESTDIR/disk.img
make_image "$img" $((16 << 20))
chmod 600 "$img"
chmod 1777 "$TESTDIR"        # nbdkit writes its pid file as nobody
msg="cannot open it again for a connection's flushes"

check ()
{
  "$PYTHON" - "${NBDKIT_SOCK[$1]}" <<'EOP' || fail "$1: see above"
import sys, nbd
for i in range(2):
    h = nbd.NBD(); h.connect_unix(sys.argv[1])
    h.pwrite(bytes([65 + i]) * 4096, i * 4096)
    h.flush()
    if h.pread(4096, i * 4096) != bytes([65 + i]) * 4096:
        print("FAIL: connection %d read back other data" % i); sys.exit(1)
    h.shutdown()
print("two connections wrote, flushed and read back")
EOP
}

start_nbdkit user -u nobody -- file="$img"
check user
stop_nbdkit user 2>/dev/null
n=$(grep -c "$msg" "$TESTDIR/user.log") || true
[ "$n" = 1 ] || fail "as nobody: the reason is logged $n times, want once"
grep -q "file=$img: $msg (/proc/self/fd/[0-9]*): Permission denied" "$TESTDIR/user.log" ||
  fail "as nobody: the log does not say which file and why"

start_nbdkit root -- file="$img"
check root
stop_nbdkit root 2>/dev/null
if grep -q "$msg" "$TESTDIR/root.log"; then fail "as root: $msg"; fi
echo ok
