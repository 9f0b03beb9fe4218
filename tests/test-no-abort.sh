#!/usr/bin/env bash
# test-no-abort.sh: a request the data path cannot serve fails with EIO
# and a log line; it never aborts the server .
#
# The plugin had an assert() on every request's path (the request inside
# its export): if it ever failed, the abort took every tenant down.  Here
# -D cfq.bad_request=N puts the N-th request outside its export, as a bug
# in the offset arithmetic would: that request must fail with EIO, the
# log must say why, and the same client and another one go on: for a
# read (n=5) and for a read-modify-write (n=12).
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd
plugin_is_ours || skip "the debug flag is our plugin's"

make_image "$TESTDIR/disk.img" $((8 << 20))
for n in 5 12; do
  start_nbdkit bad$n -D cfq.bad_request=$n -- file="$TESTDIR/disk.img"
  "$PYTHON" - "${NBDKIT_SOCK[bad$n]}" <<'EOP' || fail "n=$n: the client did not see exactly one EIO"
import errno, sys, nbd
h = nbd.NBD(); h.set_strict_mode(0); h.connect_unix(sys.argv[1])
eio = 0
for i in range(20):
    try:
        if i % 2:
            h.pwrite(b"x" * 1000, 4096 * i + 100)   # read-modify-write
        else:
            h.pread(4096, 4096 * i)
    except nbd.Error as e:
        assert e.errnum == errno.EIO, e
        eio += 1
h2 = nbd.NBD(); h2.connect_unix(sys.argv[1]); h2.pread(4096, 0); h2.shutdown()
h.pread(4096, 0)
h.shutdown()
print("EIO for", eio, "request(s); the server went on")
sys.exit(0 if eio == 1 else 1)
EOP
  kill -0 "${NBDKIT_PID[bad$n]}" || fail "n=$n: the server died"
  grep -q "internal error: a .* request for \[.*) outside its export .* failed with EIO" \
    "$TESTDIR/bad$n.log" || fail "n=$n: no log line: $(cat "$TESTDIR/bad$n.log")"
  stop_nbdkit bad$n
  [ "${NBDKIT_STATUS[bad$n]}" = 0 ] ||
    fail "n=$n: nbdkit exited with ${NBDKIT_STATUS[bad$n]}"
done
echo ok
