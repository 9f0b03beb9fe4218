#!/usr/bin/env bash
# test-tmpfs.sh: backing files on memory filesystems, where the plugin's
# O_DIRECT path may be refused and it must fall back to buffered I/O (and,
# for ramfs, to writing zeroes: ramfs has no fallocate) without losing data.
#
#  - tmpfs (a private mount in the test dir, else /dev/shm).  Note: since
#    Linux 6.6 tmpfs accepts O_DIRECT, so on new kernels this is the normal
#    path; the log says which one this kernel took.
#  - ramfs, which refuses O_DIRECT with EINVAL on every kernel so far: this
#    is the case that really exercises the fallback (asserted below, so the
#    test cannot silently stop testing it).
# Each: the shadow integrity client, then the file must equal the read-back.
# timeout: 900
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_shadow

size=$((32 << 20))
ops=${SHADOW_OPS:-10000}

# odirect_ok DIR: can a file in DIR be opened with O_DIRECT?
odirect_ok ()
{
  dd if=/dev/zero of="$1/.odirect" bs=4096 count=1 oflag=direct \
    status=none 2>/dev/null
  local rc=$?
  rm -f "$1/.odirect"
  return $rc
}

# check_on NAME DIR SEED
check_on ()
{
  local name=$1 dir=$2 seed=$3 rc=0
  make_image "$dir/disk.img" $size
  cp "$dir/disk.img" "$TESTDIR/disk.orig"
  start_nbdkit "$name" -- file="$dir/disk.img"
  "$SHADOW" -u -s "$seed" -n "$ops" -i "$TESTDIR/disk.orig" \
    -o "$TESTDIR/back.img" "${NBDKIT_SOCK[$name]}" || rc=$?
  stop_nbdkit "$name"
  [ "$rc" = 0 ] || fail "$name: shadow failed (exit $rc), seed $seed"
  [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
    fail "$name: nbdkit exited with status ${NBDKIT_STATUS[$name]}"
  cmp "$dir/disk.img" "$TESTDIR/back.img" ||
    fail "$name: the file differs from what the server returned"
  rm -f "$dir/disk.img"
  echo "== $name: OK"
}

# ---- tmpfs ---------------------------------------------------------------------
tdir=$TESTDIR/tmpfs
if [ "$(id -u)" = 0 ] && mount_tmpfs "$tdir" 128m; then
  echo "tmpfs mounted on $tdir"
elif [ -d /dev/shm ] && [ -w /dev/shm ]; then
  tdir=$(mktemp -d /dev/shm/cfq-test.XXXXXX)
  cleanup_fn rm -rf "$tdir"
  echo "using /dev/shm: $tdir"
else
  skip "cannot mount a tmpfs and no writable /dev/shm"
fi
if odirect_ok "$tdir"; then
  echo "NOTE: this kernel's tmpfs accepts O_DIRECT ($(uname -r))"
else
  echo "tmpfs refuses O_DIRECT here: the buffered fallback is tested"
fi
check_on tmpfs "$tdir" 21

# ---- ramfs ---------------------------------------------------------------------
grep -qw ramfs /proc/filesystems || skip "tmpfs passed; the kernel has no ramfs"
[ "$(id -u)" = 0 ] || skip "tmpfs passed; mounting ramfs needs root"
rdir=$TESTDIR/ramfs
mkdir -p "$rdir"
mount -t ramfs ramfs "$rdir" || skip "tmpfs passed; cannot mount ramfs"
cleanup_fn umount -l "$rdir"
! odirect_ok "$rdir" ||
  fail "ramfs accepted O_DIRECT: this test no longer exercises the fallback"
echo "ramfs refuses O_DIRECT: the buffered fallback is tested"
check_on ramfs "$rdir" 22
