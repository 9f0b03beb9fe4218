#!/usr/bin/env bash
# test-aligned-buffers.sh: aligned requests reach the device from nbdkit's
# own buffers, without a bounce.
#
# The plugin has nbdkit allocate its request buffers page aligned
# (plugin/reqbuf.c).  Asserted, with it (--dump-plugin says
# cfq_aligned_buffers=yes):
#  - 4k-aligned reads and writes at depth 16 take no buffer from the pool
#    (stats device.buffers.gets stays 0), and every byte reads back right;
#  - unaligned requests still go through the pool (gets > 0), right too.
# Without it (-D cfq.aligned_buffers=0) the same aligned requests take a
# pool buffer each: the first assertion fails there, which is checked.
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
PYTHON=/usr/bin/python3

size=$((64 << 20))
make_image "$TESTDIR/disk.img" $size
# Bounces happen only with O_DIRECT: the test's directory must take it.
"$PYTHON" -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT))' \
  "$TESTDIR/disk.img" 2>/dev/null ||
  skip "$TESTDIR is on a file system without O_DIRECT: nothing would bounce"

aligned=$(nbdkit "$CFQ_PLUGIN" --dump-plugin | sed -n 's/^cfq_aligned_buffers=//p')
echo "cfq_aligned_buffers=$aligned"
[ "$aligned" = yes ] ||
  fail "the plugin could not align nbdkit's request buffers on nbdkit $(nbdkit --version)"

# load NAME ALIGN: 2,000 writes then reads of 4 KiB, 16 in flight, at
# offsets ALIGN apart plus ALIGN-1 (0: aligned), each read checked; then
# print the pool's counter of buffers handed out.
load ()
{
  "$PYTHON" - "${NBDKIT_SOCK[$1]}" "$2" <<'PY' || fail "$1: data check failed"
import nbd, sys
sock, skew = sys.argv[1], int(sys.argv[2])
h = nbd.NBD()
h.set_strict_mode(0)
h.connect_unix(sock)
n, bs, depth = 2000, 4096, 16
def off(i):
    return (i * 7919 % 8192) * bs + skew
def pattern(i):
    return (b"%08d" % i) * (bs // 8)
for start in range(0, n, depth):
    for i in range(start, min(n, start + depth)):
        h.aio_pwrite(nbd.Buffer.from_bytearray(bytearray(pattern(i))), off(i),
                     completion=lambda err: 1)
    while h.aio_in_flight() > 0:
        h.poll(-1)
last = {}
for i in range(n):
    last[off(i)] = i
for o, i in last.items():
    if h.pread(bs, o) != pattern(i):
        sys.exit("wrong data at %d" % o)
h.shutdown()
PY
  stats_json "$1" | "$PYTHON" -c \
    'import json,sys; print(json.load(sys.stdin)["device"]["buffers"]["gets"])'
}

control_start on -- file="$TESTDIR/disk.img"
gets=$(load on 0)
echo "aligned, buffers aligned: $gets pool buffers handed out"
[ "$gets" = 0 ] || fail "aligned requests took $gets pool buffers"
gets=$(load on 1)
echo "unaligned: $gets pool buffers handed out"
[ "$gets" -gt 0 ] || fail "unaligned requests took no pool buffer"
stop_nbdkit on

control_start off -D cfq.aligned_buffers=0 -- file="$TESTDIR/disk.img"
gets=$(load off 0)
echo "aligned, nbdkit's buffers as glibc aligns them: $gets pool buffers handed out"
[ "$gets" -gt 0 ] ||
  fail "without aligned buffers the aligned requests took no pool buffer: this test would not see a change"
stop_nbdkit off
echo "== aligned requests go to the device from nbdkit's buffers"
