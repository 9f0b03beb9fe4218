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
# flush the kernel fails for N ms before it is counted, which makes that
# window N ms wide every time; -D cfq.shared_flush=1 flushes the shared
# descriptor (as where the file cannot be opened again), and there the
# window is still open (the control).  The flushes must be dispatched
# together: scheduler=fifo, queue_depth > 1.
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
#     and the control, with the shared descriptor: B and C ok, and EIO at
#     their next flush;
#  5. a block device whose cache flush fails while a trigger exists (a
#     file behind nbdkit's eval plugin, whose flush fails then, through
#     nbdfuse and a loop device, served directly): A and B write, the trigger is set, A
#     flushes: EIO; the trigger is removed and B flushes: EIO (its own
#     cache flush succeeded: only the count tells it); B again and a new
#     connection: ok;
#  6. Y's flush is told of an error, Z's too; Z writes, and its write is
#     lost; X, which has not flushed since the first error, is told of
#     the second; Z's next flush: EIO; then X ok (told once), Y EIO (not
#     yet told of the second), Z ok.  With own descriptors and with the
#     shared one (where only the count tells Z).
# Skips without root, /dev/fuse, nbdfuse, a loop device, mkfs.ext4 or
# nbdkit's error filter.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd
failing_ext4
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)   # for nbdflush.py

delay_ms=$((4000 * ${CFQ_TIMEOUT_SCALE:-1}))

# serve NAME CACHE [-D ...]: a server of its own, on its own file, fifo.
serve ()
{
  local name=$1 cache=$2; shift 2
  head -c $(((1 << 20) + 1000)) /dev/urandom >"$TESTDIR/mnt/$name.img"
  sync
  printf '[device]\nfile = %s\ncache = %s\n[scheduler]\nscheduler = fifo\n[export]\n' \
    "$TESTDIR/mnt/$name.img" "$cache" >"$TESTDIR/$name.conf"
  control_start "$name" -v "$@" -- config="$TESTDIR/$name.conf"
}

# race NAME CACHE WANT [-D ...]: parts 2-4 on a server of its own.  WANT:
# B's and C's flushes, then A's, B's and C's next ones.
race ()
{
  local name=$1 cache=$2 want=$3; shift 3
  serve "$name" "$cache" -D cfq.flush_error_delay_ms=$delay_ms "$@"
  PYTHONPATH=$TESTS_DIR "$PYTHON" - "${NBDKIT_SOCK[$name]}" "$TESTDIR/wtrig" "$TESTDIR/$name.log" \
    "$want" <<'EOP' || fail "$name (cache=$cache): see above"
import os, sys, threading, time, nbd
sock, trig, log, want = sys.argv[1:5]
want_b, want_c, want_again = want.split()
want_again = tuple(want_again.split(","))
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
if rb != want_b:
    print("FAIL: B's flush while A was being told: %s (want %s)" % (rb, want_b)); ok = False
elif held and b_at >= res["a_at"]:
    print("FAIL: B answered only after A (it must not wait for A)"); ok = False
if rc != want_c:
    print("FAIL: C's flush: %s (want %s)" % (rc, want_c)); ok = False
if again != want_again:
    print("FAIL: the next flushes of A, B, C: %s (want %s)" % (again, want_again)); ok = False
if rd != "ok":
    print("FAIL: a new connection's flush: %s (want ok)" % rd); ok = False
sys.exit(0 if ok else 1)
EOP
  stop_nbdkit "$name"
}

race direct none "EIO EIO ok,ok,ok"
race page page "EIO EIO ok,ok,ok"
# The control: flushing the shared descriptor, B and C are ok while A is
# held, and hear at their next flush.
race shared none "ok ok ok,EIO,EIO" -D cfq.shared_flush=1

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

# 6. Two errors, where the second is reported to a connection that has
#    not flushed since the first was counted.
for mode in own shared; do
  if [ $mode = shared ]; then serve two$mode none -D cfq.shared_flush=1
  else serve two$mode none; fi
  PYTHONPATH=$TESTS_DIR "$PYTHON" - "${NBDKIT_SOCK[two$mode]}" "$TESTDIR/wtrig" <<'EOP' ||
import os, sys, nbd
from nbdflush import conn as nbdflush_conn, flush
sock, trig = sys.argv[1:3]
def conn():
    return nbdflush_conn(sock)
y, z, x = conn(), conn(), conn()
tail = y.get_size() - 1000 + 512
y.pwrite(b"Y" * 100, tail)
open(trig, "w").close()
ry = flush(y)
os.unlink(trig)
rz = flush(z)
z.pwrite(b"Z" * 100, tail + 200)         # acknowledged, then lost
open(trig, "w").close()
rx = flush(x)
os.unlink(trig)
rz2 = flush(z)
again = (flush(x), flush(y), flush(z))
print("two errors: Y %s, Z %s, X %s, Z after its write was lost %s, again %s"
      % (ry, rz, rx, rz2, again))
ok = True
if (ry, rz, rx) != ("EIO", "EIO", "EIO"):
    print("FAIL: setup: Y, Z, X: %s (want EIO each)" % ((ry, rz, rx),)); ok = False
if rz2 != "EIO":
    print("FAIL: Z's flush after its acknowledged write was lost: %s (want EIO)" % rz2); ok = False
if again != ("ok", "EIO", "ok"):
    print("FAIL: the flushes of X, Y, Z after: %s (want ok, EIO: Y has not "
          "heard of the second error, ok)" % (again,)); ok = False
sys.exit(0 if ok else 1)
EOP
    fail "two errors ($mode descriptors): see above"
  stop_nbdkit two$mode
done
echo ok
