#!/usr/bin/env bash
# test-flush-error.sh: every connection that flushes after a failed
# write-back hears of it.
#
# The kernel reports a write-back error once to each open file: each
# connection flushes a descriptor of its own, and the plugin counts the
# failures (io.c).  The device (failing_ext4): nbdkit's memory plugin behind its error filter (writes fail
# while $TESTDIR/wtrig exists), as a file through nbdfuse, a loop device
# on it, ext4 on that (no journal, errors=continue: only the data's
# write-back fails).  Our server serves a file on that ext4 whose size is
# not a multiple of 512, so its last partial block is written through the
# page cache.
#
#  1. connections A and B both write into the last block (acknowledged:
#     in the page cache), C connects;
#  2. the trigger is set; A flushes: EIO (the kernel's own report: the
#     page's write-back failed, and both writes in it are lost);
#  3. the trigger is removed (the device works again); B flushes: EIO
#     too (it used to succeed: the kernel had told A, and B's
#     acknowledged write was lost without B ever hearing of it);
#  4. B flushes again: ok (it was told once, as the kernel tells each
#     open file once);
#  5. a connection D that opened after the error flushes: ok;
#  6. E and F connect; the trigger is set; E's FUA write into the block
#     fails with EIO (its write-back failed); the trigger is removed;
#  7. F flushes: EIO (it was not told).  E's own flush is printed, not
#     checked: it hears again (io.c: E's own descriptor's mark still
#     holds the error its FUA write heard of through the shared one);
#  8. G's acknowledged tail write is lost and H's flush reports it; G's
#     FUA write elsewhere fails on its own (the device refuses it); G's
#     next flush still fails: its FUA write's EIO was about another range,
#     and G never heard of the lost write (a failed FUA writer is not
#     told of everything);
#  9. Y's acknowledged tail write is lost and Z's flush reports it; the
#     device works again; X's FUA write into the tail block then
#     succeeds, and X's flush too (a failed flush moves the shared
#     descriptors' marks past the error, else X heard Z's old error);
#     Y, whose write was lost, still hears of it at its flush;
# 10. stats counts the file's write-back errors.
# Skips without root, /dev/fuse, nbdfuse, a loop device, mkfs.ext4 or
# nbdkit's error filter.
# timeout: 180
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd
failing_ext4
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)   # for nbdflush.py
head -c $(((1 << 20) + 1000)) /dev/urandom >"$TESTDIR/mnt/disk.img"
sync
printf '[device]\nfile = %s\n[export]\n' "$TESTDIR/mnt/disk.img" >"$TESTDIR/f.conf"
tenant_start srv "$TESTDIR/f.conf"

PYTHONPATH=$TESTS_DIR "$PYTHON" - "${NBDKIT_SOCK[srv]}" "$TESTDIR/wtrig" <<'EOP' || fail "see above"
import os, sys, nbd
sock, trig = sys.argv[1:3]
from nbdflush import conn as nbdflush_conn, flush, result
def conn():
    return nbdflush_conn(sock)
a, b, c = conn(), conn(), conn()
size = a.get_size()
tail = size - 1000 + 512                 # inside the partial last block
a.pwrite(b"A" * 100, tail)
b.pwrite(b"B" * 100, tail + 200)
open(trig, "w").close()
ra = flush(a)
os.unlink(trig)                          # the device works again
rb = flush(b)
rb2 = flush(b)
d = conn()
rd = flush(d)
e, f, g, h = conn(), conn(), conn(), conn()
open(trig, "w").close()
re = result(lambda: e.pwrite(b"E" * 100, tail, nbd.CMD_FLAG_FUA))
os.unlink(trig)
re2 = flush(e)
rf = flush(f)
g.pwrite(b"G" * 100, tail + 200)
open(trig, "w").close()
rh = flush(h)
rg_fua = result(lambda: g.pwrite(b"g" * 4096, 0, nbd.CMD_FLAG_FUA))
os.unlink(trig)
rg = flush(g)
print("H: %s, G's FUA write elsewhere: %s, G: %s" % (rh, rg_fua, rg))
y = conn()
y.pwrite(b"Y" * 100, tail + 200)
open(trig, "w").close()
z = conn()
rz = flush(z)
os.unlink(trig)
x = conn()
rx_fua = result(lambda: x.pwrite(b"X" * 100, tail, nbd.CMD_FLAG_FUA))
rx = flush(x)
rx_data = x.pread(100, tail)
ry = flush(y)
print("Z: %s, X's FUA write after it: %s, X: %s, Y: %s" % (rz, rx_fua, rx, ry))
print("A: %s, B: %s, B again: %s, D (new): %s, E's FUA write: %s, E: %s, F: %s"
      % (ra, rb, rb2, rd, re, re2, rf))
ok = True
if re != "EIO":
    print("FAIL: E's FUA write with write-back failing: %s (want EIO)" % re); ok = False
if rh != "EIO" or rg_fua != "EIO":
    print("FAIL: setup: H's flush %s, G's FUA write %s (want EIO, EIO)" % (rh, rg_fua)); ok = False
if rg != "EIO":
    print("FAIL: G's flush after its lost tail write: %s (want EIO: G was never told)" % rg); ok = False
if rf != "EIO":
    print("FAIL: F's flush after E's failed FUA write: %s (want EIO: F was not told)" % rf); ok = False
if ra != "EIO":
    print("FAIL: A's flush after the failed write-back: %s (want EIO: the setup did not fail write-back)" % ra); ok = False
if rb != "EIO":
    print("FAIL: B's flush after the failed write-back: %s (want EIO: B's write was lost)" % rb); ok = False
if rb2 != "ok":
    print("FAIL: B's second flush: %s (want ok: it was told once)" % rb2); ok = False
if rd != "ok":
    print("FAIL: a new connection's flush: %s (want ok)" % rd); ok = False
if rz != "EIO":
    print("FAIL: setup: Z's flush over Y's lost tail write: %s (want EIO)" % rz); ok = False
if rx_fua != "ok":
    print("FAIL: X's FUA tail write with the device working again: %s (want ok: "
          "the error was Z's, already reported)" % rx_fua); ok = False
if rx != "ok" or rx_data != b"X" * 100:
    print("FAIL: X's flush %s, its data %s (want ok, X*100)" % (rx, rx_data[:8])); ok = False
if ry != "EIO":
    print("FAIL: Y's flush after its lost tail write: %s (want EIO)" % ry); ok = False
sys.exit(0 if ok else 1)
EOP
n=$("$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["exports"][0]["writeback_errors"])' \
      < <(ctl srv raw stats)) || fail "no writeback_errors in stats"
[ "$n" -ge 1 ] || fail "stats counts $n write-back errors"
stop_nbdkit srv
echo ok
