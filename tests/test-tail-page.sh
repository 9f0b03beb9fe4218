#!/usr/bin/env bash
# test-tail-page.sh: a buffered write to the file's unaligned tail does not
# undo a direct write to another block of the same page.
#
# The file is 1 MiB + 1000 bytes on a filesystem with 512-byte direct I/O
# blocks, so its last page holds one whole block (written with O_DIRECT)
# and the partial tail block (written through the buffered descriptor).
# 3000 times: drop the file's page cache, then at once, on two
# connections, a FUA write of the whole block and a write of the tail;
# then read the block back: it must hold what the acknowledged FUA write
# put there.  Without the page-span lock in io.c, a few in every thousand
# lost their write (12 of 3000 here, and the kernel logged "Page cache
# invalidation failure on direct I/O").
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd
plugin_is_ours || skip "the tail path is our plugin's"

img=$TESTDIR/tail.img
make_image "$img" $(((1 << 20) + 1000))
start_nbdkit srv -v -- file="$img"
grep -q "block 512, .*O_DIRECT" "$TESTDIR/srv.log" ||
  skip "needs O_DIRECT with 512-byte blocks here: $(grep -m1 'file=' "$TESTDIR/srv.log")"

"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$img" "${CFQ_TAIL_ROUNDS:-3000}" <<'EOP'
import nbd, os, random, sys, threading
sock, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = nbd.NBD(); a.connect_unix(sock)
b = nbd.NBD(); b.connect_unix(sock)
size = a.get_size()
page = size // 4096 * 4096       # the last page
blk, tail = page, page + 512     # a whole block, then the tail block
fd = os.open(path, os.O_RDONLY)
r = random.Random(9)
bad = 0
for i in range(n):
    da = bytes([r.randrange(256)]) * 512
    dt = bytes([r.randrange(256)]) * (size - tail)
    # The buffered write must read the page: not in the cache.
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    t1 = threading.Thread(target=a.pwrite, args=(da, blk, nbd.CMD_FLAG_FUA))
    t2 = threading.Thread(target=b.pwrite, args=(dt, tail))
    t1.start(); t2.start(); t1.join(); t2.join()
    if a.pread(512, blk) != da:
        bad += 1
        if bad <= 3:
            print("round %d: the block lost its acknowledged FUA write" % i)
    if b.pread(size - tail, tail) != dt:
        sys.exit("round %d: the tail lost its write" % i)
print("%d of %d rounds lost the direct write" % (bad, n))
sys.exit(1 if bad else 0)
EOP
echo ok
