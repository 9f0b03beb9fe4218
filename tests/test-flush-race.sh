#!/usr/bin/env bash
# test-flush-race.sh: a flush that runs while another connection's flush
# is being told of a write-back error hears of it too, at once and on its
# own (io.c: each connection flushes its own descriptor).
#
# The kernel tells each open file once of a write-back error.  When all
# connections flushed the shared descriptor, keeping a count of errors to
# tell the others, a flush that ran while another was being told (told
# by the kernel, not yet counted) succeeded: its client heard that its
# writes were durable when they were lost.  -D
# cfq.flush_error_delay_ms=N holds a flush the kernel failed for N ms
# before it goes on, which makes that window N ms wide every time (with
# the count, 9715b5b, B below got ok).
#
#  1. the device and file as in test-flush-error.sh (ext4 on a loop
#     device on nbdfuse on nbdkit's memory plugin behind its error
#     filter; our file's last partial block is written through the page
#     cache); scheduler=fifo;
#  2. A and B write into that block, and C connects; the trigger is set;
#     A flushes (in a thread): the kernel tells A, and the server's log
#     says A is held.  Then the trigger is removed and B flushes: EIO, and
#     before A has answered (B waited for nobody); C flushes: EIO;
#  3. A answers EIO; A, B and C flush again: ok (each was told once), and
#     a connection D made now flushes: ok (it opened after everyone had
#     been told);
#  4. with cache=page (every write through the page cache), the same.
# Skips without root, /dev/fuse, nbdfuse, a loop device, mkfs.ext4 or
# nbdkit's error filter.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_fuse
requires_loop
requires_python_nbd
requires_cmd nbdfuse mkfs.ext4
nbdkit -U - --filter=error memory 1M --run true >/dev/null 2>&1 </dev/null ||
  skip "nbdkit cannot run '--filter=error memory'"

devsize=$((64 << 20))
CFQ_PLUGIN=memory start_nbdkit dev --filter=error -- size="$devsize" \
  error-pwrite=EIO error-pwrite-rate=100% error-pwrite-file="$TESTDIR/wtrig"
fuse_start "$TESTDIR/fuse/disk" "$devsize" --unix "${NBDKIT_SOCK[dev]}"
loop_attach "$TESTDIR/fuse/disk"
mkfs.ext4 -q -F -O ^has_journal "$LOOPDEV" || skip "mkfs.ext4 failed"
mkdir -p "$TESTDIR/mnt"
mount -o errors=continue "$LOOPDEV" "$TESTDIR/mnt" || skip "cannot mount ext4 on $LOOPDEV"
cleanup_fn umount -l "$TESTDIR/mnt"

delay_ms=2000

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
  "$PYTHON" - "${NBDKIT_SOCK[$name]}" "$TESTDIR/wtrig" "$TESTDIR/$name.log" \
    "$delay_ms" <<'EOP' || fail "$name (cache=$cache): see above"
import errno, os, sys, threading, time, nbd
sock, trig, log, delay_ms = sys.argv[1:5]
MARK = b"a failed flush goes on in"
def conn():
    h = nbd.NBD(); h.set_strict_mode(0); h.connect_unix(sock); return h
def flush(h):
    try:
        h.flush(); return "ok"
    except nbd.Error as e:
        return "EIO" if e.errnum == errno.EIO else "errno %d" % e.errnum
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
echo ok
