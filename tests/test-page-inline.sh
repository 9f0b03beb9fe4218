#!/usr/bin/env bash
# test-page-inline.sh: with cache=page, workers do their own reads and
# writes (engine.c, the inline path), and the data is right on each of
# its three ways:
#
#  1. cold reads, many at once: the image's pages are evicted first
#     (POSIX_FADV_DONTNEED), and 4000 random reads, 32 at a time, are
#     checked against a copy of the image: 4 KiB ones, and unaligned ones
#     of 1-40 KiB over pages some of which are cached (a short
#     RWF_NOWAIT read, then the rest by the ring or by the worker).  A
#     read that would wait for the disk goes to io_uring (RWF_NOWAIT said
#     EAGAIN and others are at the device), or, once most reads miss,
#     straight to the ring; the dispatcher's count at exit must show
#     reads finished by the ring (where eviction works: not on tmpfs);
#  2. writes, many at once: nbdcopy writes a new random image over it;
#     after the server's flush the file itself must equal that image;
#  3. cached reads: read back over NBD, equal again, all done inline.
#
# Then the same server with -D cfq.inline=0 does none inline (the count
# can tell the two apart).
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_cmd nbdcopy
requires_python_nbd
plugin_is_ours || skip "the inline path is our plugin's"

size=$((64 << 20))
img=$TESTDIR/disk.img
make_image "$img" $size
make_image "$TESTDIR/new.img" $size

evict ()
{
  /usr/bin/python3 - "$1" <<'EOF' || fail "could not evict $1 from the page cache"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
EOF
}

# counts NAME: "INLINE RING" from the dispatcher's line at exit.
counts ()
{
  sed -n 's/^.* \([0-9][0-9]*\) done inline (\([0-9][0-9]*\) of them finished by the ring).*$/\1 \2/p' \
    "$TESTDIR/$1.log"
}

cp "$img" "$TESTDIR/ref.img"
evict "$img"
# Every other 64 KiB of the first half cached again: partly cached reads.
/usr/bin/python3 - "$img" <<'EOF' || fail "could not warm part of $img"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for off in range(0, 32 << 20, 128 << 10):
    os.pread(fd, 65536, off)
EOF
# Does eviction work here (RWF_NOWAIT on an evicted page says EAGAIN)?
evicted=$(/usr/bin/python3 - "$img" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.preadv(fd, [bytearray(4096)], 60 << 20, os.RWF_NOWAIT)
    print("no")
except BlockingIOError:
    print("yes")
except OSError:
    print("no")
EOF
)
start_nbdkit srv -v -- file="$img" cache=page scheduler=cfq
"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$TESTDIR/ref.img" <<'EOF' || fail "cold reads: wrong data"
import nbd, os, random, sys
h = nbd.NBD()
h.connect_unix(sys.argv[1])
ref = os.open(sys.argv[2], os.O_RDONLY)
size = h.get_size()
rng = random.Random(5)
todo = []
for i in range(4000):
    if i % 2:
        n = 4096
        todo.append((rng.randrange(size // n) * n, n))
    else:
        n = rng.randrange(1024, 40 << 10)
        todo.append((rng.randrange(size - n), n))
inflight = {}
bad = 0
while todo or inflight:
    while todo and len(inflight) < 32:
        off, n = todo.pop()
        buf = nbd.Buffer(n)
        inflight[h.aio_pread(buf, off)] = (off, n, buf)
    h.poll(-1)
    for cookie in [c for c in inflight if h.aio_command_completed(c)]:
        off, n, buf = inflight.pop(cookie)
        if buf.to_bytearray() != os.pread(ref, n, off):
            bad += 1
if bad:
    sys.exit("%d of 4000 cold reads returned wrong data" % bad)
print("cold reads: 4000 random reads (4 KiB, and 1-40 KiB unaligned), 32 at a time, all right")
EOF

nbdcopy --connections=4 --requests=16 --request-size=65536 --flush \
  "$TESTDIR/new.img" "${NBDKIT_URI[srv]}" || fail "nbdcopy (write) failed"
cmp "$TESTDIR/new.img" "$img" || fail "writes: the file differs from what was written"
echo "writes: the file holds what was written"

nbdcopy --connections=4 --requests=16 --request-size=65536 \
  "${NBDKIT_URI[srv]}" "$TESTDIR/warm.out" || fail "nbdcopy (warm read) failed"
cmp "$TESTDIR/new.img" "$TESTDIR/warm.out" || fail "cached reads: the copy differs"
echo "cached reads: the copy is the image"
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with ${NBDKIT_STATUS[srv]}"

read -r inl ring < <(counts srv)
echo "done inline: ${inl:-?}, of them finished by the ring: ${ring:-?}"
# 64 MiB in 64 KiB requests: 1024 writes, all inline, then 1024 reads
# with the cache warm, most of them inline (the cold phase's misses may
# send the first of them to the ring), and the cold phase's hits.
[ "${inl:-0}" -ge 1536 ] || fail "only ${inl:-0} requests were done inline, want >= 1536"
if [ "$evicted" = yes ]; then
  [ "${ring:-0}" -gt 0 ] || fail "no cold read went to the ring"
else
  echo "eviction does not work here (tmpfs?): the ring's share is not checked"
fi

evict "$img"
start_nbdkit off -v -D cfq.inline=0 -- file="$img" cache=page scheduler=cfq
nbdcopy --connections=4 --requests=16 "${NBDKIT_URI[off]}" "$TESTDIR/off.out" ||
  fail "nbdcopy (-D cfq.inline=0) failed"
cmp "$TESTDIR/new.img" "$TESTDIR/off.out" || fail "-D cfq.inline=0: the copy differs"
stop_nbdkit off
read -r inl ring < <(counts off)
[ "${inl:-x}" = 0 ] || fail "-D cfq.inline=0: ${inl:-?} requests done inline, want 0"
echo "-D cfq.inline=0: none inline, the copy is the image"
