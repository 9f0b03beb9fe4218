#!/usr/bin/env bash
# test-rbd-shadow.sh: data integrity through backend=rbd, checked against a
# shadow copy (tests/nbd/shadow: 8 connections x 32 requests in flight of
# reads, writes, FUA writes, trims, zeroes and flushes at unaligned offsets).
#
#  1. the device an image (image=), each scheduler, a tiny queue_depth and
#     cache=page (librbd's cache on); after the server stops, the image
#     itself (rbd export) must equal the final read-back;
#  1b. one connection one request deep: correct, and most requests are
#     reaped by the worker that waits for them (the direct path);
#  2. an export with an image of its own ([export] file = rbd:IMAGE) next
#     to a region of the device, both written at once;
#  3. many small unaligned requests in 64 KiB ("hot" sectors);
#  4. the negative control: the client drops one of its own writes, which
#     must be reported, or this test proves nothing.
# timeout: 600
. "$(dirname "$0")/ceph-functions.sh"
requires_shadow
requires_ceph

size=$((32 << 20))
SHADOW_N=${SHADOW_OPS:-4000}
SHADOW_ARGS=(-l 65536)
make_image "$TESTDIR/disk.orig" $size

# shadow_run NAME SEED PLUGIN-PARAMS...: serve a fresh image holding
# disk.orig, run the shadow client, stop the server, require that the
# image equals the read-back.
shadow_run ()
{
  local name=$1 seed=$2 img; shift 2
  img=$(rbd_image_from "$name" "$TESTDIR/disk.orig")
  shadow_served "$name" "$seed" "$TESTDIR/disk.orig" backend=rbd image="$img" "$@"
  rm -f "$TESTDIR/image.out"
  rbd export --no-progress "rbd/$img" "$TESTDIR/image.out" >/dev/null
  cmp "$TESTDIR/image.out" "$TESTDIR/back.img" ||
    fail "$name: the image differs from what the server returned"
  echo "== $name: OK"
}

# ---- 1. the device an image -------------------------------------------------
shadow_run cfq 1 scheduler=cfq
shadow_run fifo 2 scheduler=fifo
shadow_run qd2 3 queue_depth=2
shadow_run page 4 cache=page

# ---- 1b. one request deep: the worker waits for librbd itself --------------
# (the direct path: librbd's callback wakes the worker, not the loop); the
# dispatcher's count at exit says how many waits a worker reaped.
img=$(rbd_image_from qd1 "$TESTDIR/disk.orig")
start_nbdkit qd1 -v -- backend=rbd image="$img" scheduler=fifo
"$SHADOW" -u -s 8 -n 400 -c 1 -d 1 -l 65536 -i "$TESTDIR/disk.orig" \
  "${NBDKIT_SOCK[qd1]}" || fail "qd1: shadow failed, seed 8"
stop_nbdkit qd1
reaps=$(sed -n 's/.*cfq: dispatcher: .* \([0-9]*\) worker reaps.*/\1/p' \
          "$TESTDIR/qd1.log")
echo "== qd1: ${reaps:-no} worker reaps"
[ "${reaps:-0}" -ge 200 ] ||
  fail "qd1: ${reaps:-no} of 400 requests one deep reaped by their worker"

# ---- 2. an export with an image of its own -------------------------------------
dev=$(rbd_image_from dev "$TESTDIR/disk.orig")
own=$(rbd_image_from own "$TESTDIR/disk.orig")
cat >"$TESTDIR/two.conf" <<EOF
[device]
file = rbd:rbd/$dev
[export region]
size = 16M
[export own]
file = rbd:$own
EOF
start_nbdkit two -- backend=rbd config="$TESTDIR/two.conf"
head -c $((16 << 20)) "$TESTDIR/disk.orig" >"$TESTDIR/region.orig"
"$SHADOW" -u -s 5 -n "$SHADOW_N" "${SHADOW_ARGS[@]}" -i "$TESTDIR/region.orig" \
  "nbd+unix:///region?socket=${NBDKIT_SOCK[two]}" >"$TESTDIR/region.out" 2>&1 &
rpid=$!
rc=0
"$SHADOW" -u -s 6 -n "$SHADOW_N" "${SHADOW_ARGS[@]}" -i "$TESTDIR/disk.orig" -o "$TESTDIR/back.img" \
  "nbd+unix:///own?socket=${NBDKIT_SOCK[two]}" || rc=$?
wait "$rpid" || fail "region: shadow failed: $(tail -5 "$TESTDIR/region.out")"
[ "$rc" = 0 ] || fail "own image: shadow failed (exit $rc)"
stop_nbdkit two
[ "${NBDKIT_STATUS[two]}" = 0 ] || fail "two: nbdkit exited with ${NBDKIT_STATUS[two]}"
rbd export --no-progress "rbd/$own" "$TESTDIR/own.out" >/dev/null
cmp "$TESTDIR/own.out" "$TESTDIR/back.img" ||
  fail "own image: the image differs from what the server returned"
echo "== an export with its own image, beside a region: OK"

# ---- 3. hot sectors ----------------------------------------------------------------
hot=$(rbd_image hot 64M)
start_nbdkit hot -- backend=rbd image="$hot"
shadow_hot hot "${NBDKIT_SOCK[hot]}" 12

# ---- 4. negative control ---------------------------------------------------------
shadow_lost_write "${NBDKIT_SOCK[hot]}"
stop_nbdkit hot
