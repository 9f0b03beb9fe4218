#!/usr/bin/env bash
# test-kill9.sh: the server killed with SIGKILL at random moments while
# clients write: every acknowledged write, and so every FUA-written or
# flushed byte, is there after the restart (make check-stress).
#
# CFQ_STRESS_ROUNDS rounds (default 20), alternating cfq and fifo.  In
# each, tests/nbd/durable reads the export (what the last round left),
# writes on 8 connections (random parts of 1000-byte blocks, so
# neighbours share sectors and pages; 30% FUA; a flush every 16 writes;
# the export ends 1234 bytes into a page, so the buffered tail path is
# written too), the server is killed with SIGKILL after a random 0.2 to
# 1.7 s, restarted on the same socket, and durable checks every byte
# against what it was told (see tests/nbd/durable.c).
# timeout: 1200
. "$(dirname "$0")/../tenant-functions.sh"
. "$(dirname "$0")/../kill9-functions.sh"
tenant_requires
kill9_requires

rounds=${CFQ_STRESS_ROUNDS:-20}
make_image "$TESTDIR/disk.img" $(((16 << 20) + 1234))
cat >"$TESTDIR/k.conf" <<'EOC'
[device]
file = disk.img
[export]
EOC

KILL9_PARAMS=(config="$TESTDIR/k.conf")
kill9_serve 1
kill9_control 40 0.5
kill9_rounds "$rounds" 200
stop_nbdkit srv
echo ok
