#!/usr/bin/env bash
# test-rbd-kill9.sh: a backend=rbd server killed with SIGKILL at random
# moments while clients write: every acknowledged write is on the image
# after the restart (librbd's cache off, the default: a write is
# acknowledged once the OSD has it).
#
# CFQ_CEPH_ROUNDS rounds (default 6), alternating cfq and fifo.  In each,
# tests/nbd/durable reads the export (what the last round left), writes on
# 8 connections (random parts of 1000-byte blocks, 30% FUA, a flush every
# 16 writes), the server is killed after a random 0.3 to 1.8 s, restarted
# on the same socket and image, and durable checks every byte against
# what it was told (see tests/nbd/durable.c).  First the negative control:
# a write the client pretends was acknowledged must be reported missing.
# timeout: 300
. "$(dirname "$0")/ceph-functions.sh"
. "$(dirname "$0")/../kill9-functions.sh"
requires_ceph
kill9_requires

rounds=${CFQ_CEPH_ROUNDS:-6}
img=$(rbd_image k9 16M)

KILL9_PARAMS=(backend=rbd image="$img")
kill9_serve 1
# A write to a cluster takes milliseconds: the 10th of connection 0 is
# long past after 1.5 s.
kill9_control 10 1.5
kill9_rounds "$rounds" 300
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with ${NBDKIT_STATUS[srv]}"
echo ok
