#!/usr/bin/env bash
# test-flush-race.sh: a flush that runs while another connection's flush
# is being told of a write-back error hears of it too, at once and on its
# own; and a failed cache flush of the disk, which the kernel reports to
# one fsync only, reaches every connection (io.c: each connection flushes
# its own descriptor, and failed flushes are counted).
#
# The kernel tells each open file once of a write-back error.  When all
# connections flushed the shared descriptor and a count told the others,
# a flush that ran while another was being told (told by the kernel, not
# yet counted) succeeded: its client heard that its writes were durable
# when they were lost.  -D cfq.flush_error_delay_ms=N holds the first
# flush the kernel fails for N ms, which makes that window N ms wide every
# time.  (With the count alone, f98433e's -D cfq.wb_nosettle=1 and
# -D cfq.wb_publish_delay_ms, which hold the count the same way, B below
# got ok.)  It needs the flushes dispatched together: scheduler=fifo,
# queue_depth > 1.
#
#  1. the device and file as in test-flush-error.sh (ext4 on a loop
#     device on nbdfuse on nbdkit's memory plugin behind its error
#     filter; our file's last partial block is written through the page
#     cache);
#  2. A and B write into that block, and C connects; the trigger is set;
#     A flushes (in a thread): the kernel tells A, and the server's log
#     says A is held.  Then the trigger is removed and B flushes: EIO, and
#     before A has answered (B waited for nobody); C flushes: EIO;
#  3. A answers EIO; A, B and C flush again: ok (each was told once), and
#     a connection D made now flushes: ok (it opened after everyone had
#     been told);
#  4. with cache=page (every write through the page cache), the same;
#  5. a block device whose cache flush fails while a trigger exists (a
#     file behind nbdkit's eval plugin, whose flush fails then, through
#     nbdfuse and a loop device, served directly): A and B write, the trigger is set, A
#     flushes: EIO; the trigger is removed and B flushes: EIO (its own
#     cache flush succeeded: only the count tells it); B again and a new
#     connection: ok.
# Skips without root, /dev/fuse, nbdfuse, a loop device, mkfs.ext4 or
# nbdkit's error filter.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd
failing_ext4
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)   # for nbdflush.py

delay_ms=$((2000 * ${CFQ_TIMEOUT_SCALE:-1}))

# race NAME CACHE: the scenario on a server of its own, on its own file.
race ()
{
  local name=$1 cache=$2
  head -c $(((1 << 20) + 1000)) /dev/urandom >"$TESTDIR/mnt/$name.img"
  sync
  printf '[device]\nfile = %s\ncache = %s\n[scheduler]\nscheduler = fifo\n[export]\n' \
    "$TESTDIR/mnt/$name.img" "$cache" >"$TESTDIR/$name.conf"
  control_start "$name" -v -D cfq.flush_error_delay_ms=$delay_ms -- \
    config="$TESTDIR/$name.conf"
  PYTHONPATH=$TESTS_DIR "$PYTHON" - "${NBDKIT_SOCK[$name]}" "$TESTDIR/wtrig" "$TESTDIR/$name.log" \
    "$delay_ms" <<'EOP' || fail "$name (cache=$cache): see above"
import os, sys, threading, time, nbd
sock, trig, log, delay_ms = sys.argv[1:5]
MARK = b"a failed flush goes on in"
from nbdflush import conn as nbdflush_conn, flush, result
def conn():
    return nbdflush_conn(sock)
def marks():
    with open(log, "rb") as f:
        return f.read().count(MARK)
a, b, c = conn(), conn(), conn()
tail = a.get_size() - 1000 + 512         # inside the partial last block
m0 = marks()
a.pwrite(b"A" * 100, tail)
b.pwrite(b"B" * 100, tail + 200)
open(trig, "w").close()
res = {}
def flush_a():
    res["a"] = flush(a)
    res["a_at"] = time.monotonic()
t = threading.Thread(target=flush_a)
t.start()
deadline = time.monotonic() + 30
while marks() == m0 and "a" not in res and time.monotonic() < deadline:
    time.sleep(0.01)
held = marks() > m0
os.unlink(trig)                          # the device works again
rb = flush(b)
b_at = time.monotonic()
rc = flush(c)
t.join()
ra = res["a"]
again = (flush(a), flush(b), flush(c))
rd = flush(conn())
print("A %s, B %s (%.2f s before A answered), C %s; again %s; D %s"
      % (ra, rb, res["a_at"] - b_at, rc, again, rd))
ok = True
if not held:
    print("FAIL: setup: A's flush got %s and was never held" % ra); ok = False
if ra != "EIO":
    print("FAIL: A's flush over a failed write-back: %s (want EIO)" % ra); ok = False
if rb != "EIO":
    print("FAIL: B's flush while A was being told: %s (want EIO)" % rb); ok = False
elif held and b_at >= res["a_at"]:
    print("FAIL: B answered only after A (it must not wait for A)"); ok = False
if rc != "EIO":
    print("FAIL: C's flush: %s (want EIO: C was not told)" % rc); ok = False
if again != ("ok", "ok", "ok"):
    print("FAIL: the next flushes of A, B, C: %s (want ok: each was told)" % (again,)); ok = False
if rd != "ok":
    print("FAIL: a new connection's flush: %s (want ok)" % rd); ok = False
sys.exit(0 if ok else 1)
EOP
  stop_nbdkit "$name"
}

race direct none
race page page

# 5. The disk's cache flush fails.
# nbdkit 1.32's error filter cannot fail a flush: the eval plugin on a
# file can.
fsize=$((16 << 20))
truncate -s "$fsize" "$TESTDIR/fdisk"
f=$TESTDIR/fdisk
CFQ_PLUGIN="eval" start_nbdkit fdev -- \
  get_size="echo $fsize" can_write='exit 0' can_flush='exit 0' \
  pread="dd if=$f skip=\$4 count=\$3 iflag=skip_bytes,count_bytes status=none" \
  pwrite="dd of=$f seek=\$4 oflag=seek_bytes conv=notrunc status=none" \
  flush="if [ -e $TESTDIR/ftrig ]; then echo 'EIO cache flush failed' >&2; exit 1; fi"
fuse_start "$TESTDIR/ffuse/disk" "$fsize" --unix "${NBDKIT_SOCK[fdev]}"
loop_attach "$TESTDIR/ffuse/disk"
printf '[device]\nfile = %s\n[scheduler]\nscheduler = fifo\n[export]\n' \
  "$LOOPDEV" >"$TESTDIR/blk.conf"
control_start blk -- config="$TESTDIR/blk.conf"
PYTHONPATH=$TESTS_DIR "$PYTHON" - "${NBDKIT_SOCK[blk]}" "$TESTDIR/ftrig" <<'EOP' || fail "block device: see above"
import os, sys, nbd
sock, trig = sys.argv[1:3]
from nbdflush import conn as nbdflush_conn, flush, result
def conn():
    return nbdflush_conn(sock)
a, b = conn(), conn()
a.pwrite(b"a" * 4096, 0)
b.pwrite(b"b" * 4096, 4096)
open(trig, "w").close()
ra = flush(a)
os.unlink(trig)
rb = flush(b)
again = (flush(a), flush(b), flush(conn()))
print("cache flush: A %s, B %s; again A, B, new %s" % (ra, rb, again))
ok = True
if ra != "EIO":
    print("FAIL: setup: A's flush with the disk's cache flush failing: %s (want EIO)" % ra); ok = False
if rb != "EIO":
    print("FAIL: B's flush after A's failed cache flush: %s (want EIO)" % rb); ok = False
if again != ("ok", "ok", "ok"):
    print("FAIL: the flushes after: %s (want ok: each was told once)" % (again,)); ok = False
sys.exit(0 if ok else 1)
EOP
stop_nbdkit blk
echo ok
