#!/usr/bin/env bash
# test-attach.sh: the export as a local disk, the way a user attaches it
# here (no kernel nbd driver): nbdfuse turns it into a file, a loop device
# with direct I/O turns that into a block device, and ext4 goes on top.
#
#  1. mkfs.ext4, mount, write a tree of files (1 byte - 32 MiB), record
#     their sha256sums, sync, unmount;
#  2. tear everything down (loop, fuse, nbdkit), start it all again on the
#     same image: e2fsck -fn is clean and every checksum matches;
#  3. with the server stopped, the image file itself, on a plain loop
#     device, mounts read-only with the same checksums.
# Needs root, /dev/fuse and loop devices (skips without them).  There is no
# fusermount3 here: the fuse mount is undone with umount.
# timeout: 900
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_fuse
requires_loop
requires_cmd nbdfuse mkfs.ext4 e2fsck sha256sum

size=$((256 << 20))
truncate -s $size "$TESTDIR/disk.img"
mkdir -p "$TESTDIR/fuse" "$TESTDIR/mnt"

# attach NAME: server NAME + nbdfuse + loop device (sets LOOPDEV).
attach ()
{
  local name=$1
  start_nbdkit "$name" -- file="$TESTDIR/disk.img"
  fuse_start "$TESTDIR/fuse/nbd" "$size" "${NBDKIT_URI[$name]}"
  loop_attach "$TESTDIR/fuse/nbd" --direct-io=on
  losetup -l "$LOOPDEV"
}

# detach NAME: unmount, detach the loop device, unmount fuse, stop nbdkit.
detach ()
{
  local name=$1 i
  umount "$TESTDIR/mnt" 2>/dev/null || true
  loop_detach "$LOOPDEV" "$TESTDIR/fuse/nbd"
  umount "$TESTDIR/fuse"
  for (( i = 0; i < 300; i++ )); do
    kill -0 "$FUSEPID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$FUSEPID" 2>/dev/null && fail "nbdfuse did not exit after umount"
  stop_nbdkit "$name"
  [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
    fail "nbdkit $name exited with status ${NBDKIT_STATUS[$name]}"
}

# ---- 1. write ---------------------------------------------------------------
attach srv1
mkfs.ext4 -q -F "$LOOPDEV"
mount "$LOOPDEV" "$TESTDIR/mnt"
cleanup_fn umount -l "$TESTDIR/mnt"
mkdir -p "$TESTDIR/mnt/a/b/c"
n=0
for s in 1 511 512 513 4095 4096 4097 65536 100000 1048576 3000001 4194304; do
  head -c $s /dev/urandom >"$TESTDIR/mnt/f$n"
  head -c $s /dev/urandom >"$TESTDIR/mnt/a/b/c/g$n"
  n=$((n + 1))
done
head -c $((32 << 20)) /dev/urandom >"$TESTDIR/mnt/big"
# Overwrite the middle of a file in place, unaligned.
head -c 10000 /dev/urandom |
  dd of="$TESTDIR/mnt/big" bs=1 seek=1234567 conv=notrunc status=none
sync
(cd "$TESTDIR/mnt" && find . -type f -print0 | sort -z |
   xargs -0 sha256sum) >"$TESTDIR/sums"
[ "$(wc -l <"$TESTDIR/sums")" = 25 ] || fail "expected 25 files"
df -h "$TESTDIR/mnt"
umount "$TESTDIR/mnt"
detach srv1
echo "== wrote 25 files through nbdfuse + loop"

# ---- 2. again, from scratch ---------------------------------------------------
attach srv2
e2fsck -fn "$LOOPDEV" || fail "e2fsck found errors"
mount "$LOOPDEV" "$TESTDIR/mnt"
(cd "$TESTDIR/mnt" && sha256sum -c --quiet "$TESTDIR/sums") ||
  fail "checksums differ after a restart"
umount "$TESTDIR/mnt"
detach srv2
echo "== restart: fsck clean, all checksums match"

# ---- 3. the image itself ---------------------------------------------------------
loop_attach "$TESTDIR/disk.img" --read-only
mount -o ro "$LOOPDEV" "$TESTDIR/mnt"
(cd "$TESTDIR/mnt" && sha256sum -c --quiet "$TESTDIR/sums") ||
  fail "checksums differ on the image file itself"
umount "$TESTDIR/mnt"
loop_detach "$LOOPDEV" "$TESTDIR/disk.img"
echo "== the image file holds the same data"
