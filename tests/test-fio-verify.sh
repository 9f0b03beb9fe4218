#!/usr/bin/env bash
# test-fio-verify.sh: fio through its nbd engine (libnbd) writes random
# blocks with a crc32c verify header in each, then reads them all back and
# checks them.  Bounded by size (a 64 MiB export), not by time.
#
#  1. randwrite + verify, 4 KiB blocks, at queue depths 1, 8 and 32;
#  2. mixed block sizes 512 B - 128 KiB, 4 jobs (4 connections) on disjoint
#     quarters of the export, with a flush every 16 writes; 1 and 2 on
#     scheduler=fifo, then 2 again on every other scheduler the build has;
#  3. persistence: write, stop the server, start a new one on the same file,
#     verify only (everything acknowledged must be in the file);
#  4. negative control: flip one byte of the file and verify again: fio must
#     report the corruption, or this test proves nothing.
# timeout: 900
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_cmd fio
fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd ioengine"

size=$((64 << 20))

# fio_run NAME URI FIO-OPTIONS...: run fio, fail unless every job succeeded
# and (when verifying) read back as many bytes as it wrote.
fio_run ()
{
  local name=$1 uri=$2 rc=0; shift 2
  # In TESTDIR: fio leaves its verify state files in the current directory.
  (cd "$TESTDIR" &&
   fio --name="$name" --ioengine=nbd --uri="$uri" --output-format=json \
     --output="$TESTDIR/$name.json" --randrepeat=1 --verify=crc32c \
     --verify_fatal=1 --exitall_on_error=1 "$@") >"$TESTDIR/$name.out" 2>&1 ||
    rc=$?
  cat "$TESTDIR/$name.out"
  FIO_RC=$rc
}

# fio_check NAME MODE: MODE is "verify" (wrote and read back everything) or
# "verify-only" (read back everything an earlier run wrote).
fio_check ()
{
  local name=$1 mode=$2
  [ "$FIO_RC" = 0 ] || fail "fio $name exited with $FIO_RC"
  "$PYTHON" - "$TESTDIR/$name.json" "$mode" <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
mode = sys.argv[2]
w = r = 0
for j in d["jobs"]:
    if j["error"] != 0:
        sys.exit("job %s: error %d" % (j["jobname"], j["error"]))
    w += j["write"]["io_bytes"]
    r += j["read"]["io_bytes"]
print("%s: wrote %d bytes, read back and verified %d bytes" % (mode, w, r))
if mode == "verify" and (w == 0 or r != w):
    sys.exit("verify phase read %d bytes, but %d were written" % (r, w))
# fio counts the writes it only pretends to do in verify_only mode (the
# negative control shows it does not really write).
if mode == "verify-only" and (r == 0 or r != w):
    sys.exit("verify-only phase: read %d of %d" % (r, w))
EOF
    fail "fio $name: results do not add up"
  echo "== fio $name: OK"
}

make_image "$TESTDIR/disk.img" $size
start_nbdkit srv -- file="$TESTDIR/disk.img" scheduler=fifo

# ---- 1. queue depths ----------------------------------------------------------
for qd in 1 8 32; do
  fio_run "qd$qd" "${NBDKIT_URI[srv]}" --rw=randwrite --bs=4k --iodepth="$qd" \
    --size=32M --offset=$(( (qd % 2) * (32 << 20) ))
  fio_check "qd$qd" verify
done

# ---- 2. mixed sizes, 4 connections, flushes ----------------------------------
fio_run mixed "${NBDKIT_URI[srv]}" --rw=randwrite --bsrange=512-128k \
  --blockalign=512 --iodepth=16 --numjobs=4 --size=16M \
  --offset_increment=16M --fsync=16 --group_reporting=0
fio_check mixed verify

# The mixed job again on every other scheduler the build has.
if plugin_is_ours; then
  for sch in $(nbdkit "$CFQ_PLUGIN" --dump-plugin |
               sed -n 's/^cfq_schedulers=//p' | tr ',' ' '); do
    [ "$sch" != fifo ] || continue
    start_nbdkit "s_$sch" -- file="$TESTDIR/disk.img" scheduler="$sch"
    fio_run "mixed_$sch" "${NBDKIT_URI[s_$sch]}" --rw=randwrite --bsrange=512-128k \
      --blockalign=512 --iodepth=16 --numjobs=4 --size=16M \
      --offset_increment=16M --fsync=16 --group_reporting=0
    fio_check "mixed_$sch" verify
    stop_nbdkit "s_$sch"
    [ "${NBDKIT_STATUS[s_$sch]}" = 0 ] ||
      fail "nbdkit (scheduler=$sch) exited with ${NBDKIT_STATUS[s_$sch]}"
  done
fi

# ---- 3. persistence across a server restart --------------------------------
fio_run persist "${NBDKIT_URI[srv]}" --rw=randwrite --bs=8k --iodepth=32 --size=$size
fio_check persist verify
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"
start_nbdkit srv2 -- file="$TESTDIR/disk.img"
fio_run persist2 "${NBDKIT_URI[srv2]}" --rw=randwrite --bs=8k --iodepth=32 --size=$size \
  --verify_only=1
fio_check persist2 verify-only

# ---- 4. negative control ------------------------------------------------------
stop_nbdkit srv2
off=$(( (size / 2) + 1234 ))
old=$(od -An -tx1 -j $off -N1 "$TESTDIR/disk.img" | tr -d ' ')
printf "\\x$(printf %02x $(( 0x$old ^ 0xff )))" |
  dd of="$TESTDIR/disk.img" bs=1 seek=$off conv=notrunc status=none
start_nbdkit srv3 -- file="$TESTDIR/disk.img"
fio_run neg "${NBDKIT_URI[srv3]}" --rw=randwrite --bs=8k --iodepth=32 --size=$size \
  --verify_only=1
[ "$FIO_RC" != 0 ] || fail "negative control: fio did not see a flipped byte"
grep -qi 'verify\|crc32c\|bad' "$TESTDIR/neg.out" ||
  fail "negative control: fio failed, but not with a verify error"
echo "== negative control: fio caught the flipped byte at $off"
