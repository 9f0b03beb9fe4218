#!/usr/bin/env bash
# test-tenant-isolation.sh: tenants on one device cannot touch each other.
#
#  1. exports a and b on adjacent 1M regions of one image: b is filled with
#     a pattern through b; a's whole range (its last byte included) is
#     hammered with writes, trims and zeroes; requests crossing a's end
#     (off by one and more) are refused by the server; then b's pattern is
#     intact, through b and in the image itself, and nothing outside the two
#     regions changed;
#  2. a readonly export reads its region and refuses write, trim and zero;
#  3. allow=: a client over TCP from 127.0.0.1 is refused by an export that
#     allows only 10.9.9.9 (or only Unix sockets), accepted by one that
#     allows 127.0.0.1; a Unix-socket client is refused by an export that
#     does not list "unix";
#  4. an unknown export name is refused, and the server says which name.
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd

M=$((1 << 20))
make_image "$TESTDIR/disk.img" $((8 * M))
cp "$TESTDIR/disk.img" "$TESTDIR/orig.img"
cat >"$TESTDIR/iso.conf" <<'EOF'
[device]
file = disk.img

[group ga]
weight = 500
[group gb]
weight = 500

[export a]
group = ga
offset = 0
size = 1M

[export b]
group = gb
offset = 1M
size = 1M

[export ro]
offset = 2M
size = 1M
readonly = yes

[export deny]
offset = 3M
size = 1M
allow = 10.9.9.9

[export tcpok]
offset = 4M
size = 1M
allow = 127.0.0.1

[export unixonly]
offset = 5M
size = 1M
allow = unix
EOF

tenant_start srv "$TESTDIR/iso.conf"

# ---- 1. a cannot reach b ------------------------------------------------------
"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$TESTDIR/orig.img" <<'EOF' || fail "isolation of a and b"
import errno, os, sys
import nbd

sock, orig = sys.argv[1], sys.argv[2]
M = 1 << 20
img = open(orig, "rb").read()

def connect(name):
    h = nbd.NBD()
    # Let unaligned and out-of-range requests through: the server must be
    # the one that refuses them.
    h.set_strict_mode(0)
    h.set_export_name(name)
    h.connect_unix(sock)
    return h

a = connect("a")
b = connect("b")
assert a.get_size() == M, "a: size %d, want %d" % (a.get_size(), M)
assert b.get_size() == M, "b: size %d, want %d" % (b.get_size(), M)

# The regions are where the config says: b's offset 0 is the image's 1M.
assert a.pread(M, 0) == img[0:M], "a does not read image [0, 1M)"
assert b.pread(M, 0) == img[M:2 * M], "b does not read image [1M, 2M)"
print("regions map: OK")

pattern = bytes((i * 7 + 3) & 0xff for i in range(M))
b.pwrite(pattern, 0)
b.flush()
assert b.pread(M, 0) == pattern
print("b filled with a pattern")

# Hammer all of a, its last byte and last block included.
a.pwrite(os.urandom(M), 0)
a.pwrite(b"\x11" * 4096, M - 4096)
a.pwrite(b"\x22", M - 1)
a.pwrite(b"\x33" * 100, M - 100)
a.trim(M, 0)
a.trim(4096, M - 4096)
a.zero(M, 0)
a.zero(4096, M - 4096, nbd.CMD_FLAG_NO_HOLE)
a.pwrite(b"\x44" * 8192, M - 8192)
a.pwrite(b"\x55", M - 1)
a.flush()
got = a.pread(8192, M - 8192)
assert got == b"\x44" * 8191 + b"\x55", "a's last bytes not what a wrote"
print("a hammered: OK")

def refused(what, f):
    try:
        f()
    except nbd.Error as e:
        print("%-34s refused: %s" % (what, e.string))
        return
    sys.exit("FAIL: %s succeeded" % what)

# Past a's end, off by one and more: every kind of request.
refused("read 1 byte at size", lambda: a.pread(1, M))
refused("read 2 bytes at size-1", lambda: a.pread(2, M - 1))
refused("read 4096 at size-4095", lambda: a.pread(4096, M - 4095))
refused("read 4096 at size", lambda: a.pread(4096, M))
refused("read 8192 at size-4096", lambda: a.pread(8192, M - 4096))
refused("write 1 byte at size", lambda: a.pwrite(b"X", M))
refused("write 2 bytes at size-1", lambda: a.pwrite(b"XX", M - 1))
refused("write 4096 at size-4095", lambda: a.pwrite(b"X" * 4096, M - 4095))
refused("write 4096 at size", lambda: a.pwrite(b"X" * 4096, M))
refused("write 8192 at size-4096", lambda: a.pwrite(b"X" * 8192, M - 4096))
refused("write 1M+4096 at 0", lambda: a.pwrite(b"X" * (M + 4096), 0))
refused("trim 4096 at size", lambda: a.trim(4096, M))
refused("trim 8192 at size-4096", lambda: a.trim(8192, M - 4096))
refused("zero 4096 at size", lambda: a.zero(4096, M))
refused("zero 8192 at size-4096", lambda: a.zero(8192, M - 4096))
refused("zero 1 byte at size", lambda: a.zero(1, M))
assert not a.aio_is_dead(), "the server dropped a after refusals"
# And b's region is not below b's offset 0 either.
refused("b: read at 2^63-4096", lambda: b.pread(4096, (1 << 63) - 4096))
refused("b: write 4096 at size", lambda: b.pwrite(b"Y" * 4096, M))

assert b.pread(M, 0) == pattern, "b's pattern changed"
print("b's pattern intact through b")
a.shutdown(); b.shutdown()
EOF

# In the image itself: b's region holds the pattern, a's ends with what a
# wrote, and nothing past 2M changed except through the other exports
# (none written yet).
"$PYTHON" - "$TESTDIR/disk.img" "$TESTDIR/orig.img" <<'EOF' || fail "image check"
import sys
M = 1 << 20
img = open(sys.argv[1], "rb").read()
orig = open(sys.argv[2], "rb").read()
pattern = bytes((i * 7 + 3) & 0xff for i in range(M))
assert img[M:2 * M] == pattern, "image [1M, 2M) is not b's pattern"
assert img[M - 8192:M] == b"\x44" * 8191 + b"\x55", "a's last bytes not in the image"
assert img[2 * M:] == orig[2 * M:], "bytes past b's region changed"
print("image: OK")
EOF
echo "== a and b are isolated"

# ---- 2. readonly export --------------------------------------------------------
"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$TESTDIR/orig.img" <<'EOF' || fail "readonly export"
import errno, sys
import nbd
sock, orig = sys.argv[1], sys.argv[2]
M = 1 << 20
img = open(orig, "rb").read()
h = nbd.NBD()
h.set_export_name("ro")
h.connect_unix(sock)
assert h.get_size() == M
assert h.is_read_only() == 1, "export ro does not say it is read-only"
assert h.pread(M, 0) == img[2 * M:3 * M], "ro does not read image [2M, 3M)"
h.set_strict_mode(0)             # send them anyway: the server must refuse
for what, f in (("write", lambda: h.pwrite(b"Z" * 4096, 0)),
                ("write+fua", lambda: h.pwrite(b"Z" * 4096, 4096, nbd.CMD_FLAG_FUA)),
                ("trim", lambda: h.trim(4096, 0)),
                ("zero", lambda: h.zero(4096, 0))):
    try:
        f()
    except nbd.Error as e:
        print("ro: %s refused: %s" % (what, e.string))
        assert e.errnum in (errno.EPERM, errno.EROFS), \
            "%s: errno %s, want EPERM" % (what, e.errnum)
        continue
    sys.exit("FAIL: %s on the readonly export succeeded" % what)
assert h.pread(M, 0) == img[2 * M:3 * M], "ro's bytes changed"
print("readonly: OK")
EOF
cmp -s <(tail -c +$((2 * M + 1)) "$TESTDIR/disk.img" | head -c $M) \
       <(tail -c +$((2 * M + 1)) "$TESTDIR/orig.img" | head -c $M) ||
  fail "the readonly region changed in the image"
echo "== readonly export refuses writes, trims and zeroes"

# ---- 4. unknown export (on the Unix socket) ------------------------------------
"$PYTHON" - "${NBDKIT_SOCK[srv]}" <<'EOF' || fail "unknown export accepted"
import sys
import nbd
h = nbd.NBD()
h.set_export_name("nonesuch")
try:
    h.connect_unix(sys.argv[1])
except nbd.Error as e:
    print("nonesuch refused: %s" % e.string)
    sys.exit(0)
sys.exit("FAIL: export nonesuch accepted (size %d)" % h.get_size())
EOF
grep -q nonesuch "$TESTDIR/srv.log" ||
  fail "the server's error does not name the export 'nonesuch': $(cat "$TESTDIR/srv.log")"
echo "== unknown export refused, named in the server's error"

# ---- 3. allow= ------------------------------------------------------------------
# Unix-socket clients: allowed by "unix", refused by a list without it.
"$PYTHON" - "${NBDKIT_SOCK[srv]}" <<'EOF' || fail "allow= over the Unix socket"
import sys
import nbd
def try_export(name):
    h = nbd.NBD()
    h.set_export_name(name)
    try:
        h.connect_unix(sys.argv[1])
    except nbd.Error as e:
        print("unix -> %s: refused (%s)" % (name, e.string))
        return False
    ok = h.pread(4096, 0) is not None
    h.shutdown()
    print("unix -> %s: accepted" % name)
    return ok
assert try_export("unixonly"), "allow=unix refused a Unix-socket client"
assert not try_export("deny"), "allow=10.9.9.9 accepted a Unix-socket client"
assert not try_export("tcpok"), "allow=127.0.0.1 accepted a Unix-socket client"
EOF
stop_nbdkit srv

# A TCP server on 127.0.0.1, on a free port.
port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nbdkit -f --exit-with-parent -i 127.0.0.1 -p "$port" -P "$TESTDIR/tcp.pid" \
  "$CFQ_PLUGIN" config="$TESTDIR/iso.conf" 2>"$TESTDIR/tcp.log" &
tcp_pid=$!
cleanup_fn _kill_nbdkit "$tcp_pid" "$TESTDIR/tcp.log"
wait_for "nbdkit on 127.0.0.1:$port" 30 test -s "$TESTDIR/tcp.pid"
"$PYTHON" - "$port" <<'EOF' || fail "allow= over TCP"
import sys
import nbd
port = sys.argv[1]
def try_export(name):
    h = nbd.NBD()
    try:
        h.connect_uri("nbd://127.0.0.1:%s/%s" % (port, name))
    except nbd.Error as e:
        print("tcp 127.0.0.1 -> %s: refused (%s)" % (name, e.string))
        return False
    h.pread(4096, 0)
    h.shutdown()
    print("tcp 127.0.0.1 -> %s: accepted" % name)
    return True
assert try_export("tcpok"), "allow=127.0.0.1 refused a 127.0.0.1 client"
assert try_export("a"), "an export with no allow= refused a TCP client"
assert not try_export("deny"), "allow=10.9.9.9 accepted a 127.0.0.1 client"
assert not try_export("unixonly"), "allow=unix accepted a TCP client"
EOF
echo "== allow= refuses and accepts by client address"
