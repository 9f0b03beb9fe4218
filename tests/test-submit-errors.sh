#!/usr/bin/env bash
# test-submit-errors.sh: io_uring_submit itself failing.
#
# The kernel can refuse a submission (io_uring_enter fails).  A transient
# refusal (EAGAIN, EBUSY, EINTR, ENOMEM) is retried every millisecond up to
# 1000 times; anything else, or the retries used up, withdraws the SQEs
# from the ring and fails their requests with EIO, saying why in the log.
# Nothing may hang, the server keeps serving, and data that was
# acknowledged stays intact.  The faults are injected with the plugin's
# debug flags (-D cfq.busy_submit=N: the next N submits fail with EAGAIN;
# -D cfq.fail_submit=N: with EBADF), once per scheduler:
#
#  A. busy_submit=30: fewer than the retry limit, so every request
#     succeeds; the log shows the 30 injected failures and no error;
#  B. busy_submit=1200: the first request outlives 1000 retries and fails
#     with EIO (the log says EAGAIN and 1001 tries); the next one succeeds
#     after the remaining 199;
#  C. fail_submit=1: a permanent error fails the request at once, EIO;
#  D. fail_submit=1 with 16 reads in flight: whatever was in the failed
#     batch fails with EIO, everything else returns the right data;
#  and all along, the data written in A reads back intact.
# A run with -D cfq.direct=0 covers the dispatcher's loop alone (without
# the direct path that a single client's requests take).
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd
[ "$(basename "$CFQ_PLUGIN")" = nbdkit-cfq-plugin.so ] ||
  skip "the fault injection is our plugin's (-D cfq.*_submit)"

size=$((16 << 20))

# client SOCKET PHASE: the assertions of one phase, in python.
client ()
{
  "$PYTHON" - "$1" "$2" <<'EOF'
import errno, sys, time
import nbd

sock, phase = sys.argv[1], sys.argv[2]
h = nbd.NBD()
h.connect_unix(sock)

def pattern(off, n):
    return bytes((off // 4096 * 7 + i // 512) & 0xff for i in range(n))

def must_eio(what, f):
    try:
        f()
    except nbd.Error as e:
        if e.errnum != errno.EIO:
            sys.exit("FAIL: %s: %s, want EIO" % (what, e.string))
        print("%s: EIO, as it should" % what)
        return
    sys.exit("FAIL: %s succeeded under an injected submit failure" % what)

def check_a():
    for off in range(0, 1 << 20, 65536):
        got = h.pread(65536, off)
        if got != pattern(off, 65536):
            sys.exit("FAIL: acknowledged data at %d differs" % off)

if phase == "A":
    for off in range(0, 1 << 20, 65536):
        h.pwrite(pattern(off, 65536), off)
    h.flush()
    check_a()
    print("A: 16 writes, a flush and 16 reads through 30 EAGAIN: all OK")
elif phase == "B":
    t0 = time.monotonic()
    must_eio("B: read after 1000 retries", lambda: h.pread(4096, 0))
    t1 = time.monotonic()
    # 1000 retries 1 ms apart: about a second, never instant.
    if t1 - t0 < 0.5:
        sys.exit("FAIL: the request failed after %.3f s: not retried" % (t1 - t0))
    got = h.pread(4096, 0)
    assert got == pattern(0, 4096), "read after the retries differs"
    print("B: failed after %.2f s of retries, the next read succeeded" % (t1 - t0))
    check_a()
elif phase == "C":
    must_eio("C: read on EBADF", lambda: h.pread(4096, 65536))
    check_a()
    print("C: then 16 reads OK")
elif phase == "D":
    bufs, cookies = [], []
    for i in range(16):
        b = nbd.Buffer(65536)
        bufs.append(b)
        cookies.append(h.aio_pread(b, i * 65536))
    failed = 0
    for i, c in enumerate(cookies):
        while True:
            try:
                done = h.aio_command_completed(c)
            except nbd.Error as e:
                if e.errnum != errno.EIO:
                    sys.exit("FAIL: D: read %d: %s, want EIO" % (i, e.string))
                failed += 1
                break
            if done:
                if bufs[i].to_bytearray() != pattern(i * 65536, 65536):
                    sys.exit("FAIL: D: read %d returned wrong data" % i)
                break
            h.poll(1)
    if failed == 0:
        sys.exit("FAIL: D: no read failed under fail_submit=1")
    print("D: %d of 16 reads in flight failed with EIO, the rest were right" % failed)
    check_a()
EOF
}

failures=0
for mode in cfq fifo loop; do
  case $mode in
    loop) sch=fifo; extra=(-D cfq.direct=0) ;;
    *) sch=$mode; extra=() ;;
  esac
  make_image "$TESTDIR/disk.img" $size
  for phase in A B C D; do
    case $phase in
      A) inj=busy_submit=30 ;;
      B) inj=busy_submit=1200 ;;
      C|D) inj=fail_submit=1 ;;
    esac
    name=${mode}_$phase
    start_nbdkit "$name" -v "${extra[@]}" -D "cfq.$inj" -- \
      file="$TESTDIR/disk.img" scheduler=$sch
    rc=0
    client "${NBDKIT_SOCK[$name]}" $phase || rc=$?
    stop_nbdkit "$name" 2>/dev/null
    log=$TESTDIR/$name.log
    st=${NBDKIT_STATUS[$name]}
    injected=$(grep -c "injected io_uring_submit failure" "$log" || true)
    errs=$(grep -c "cfq: io_uring_submit: " "$log" || true)
    echo "-- $mode $phase ($inj): client rc $rc, $injected injected, $errs error lines, exit $st"
    bad=()
    [ "$rc" = 0 ] || bad+=("the client's assertions failed")
    [ "$st" = 0 ] || bad+=("nbdkit exited with $st")
    case $phase in
      A)
        [ "$injected" = 30 ] || bad+=("$injected failures injected, want 30")
        [ "$errs" = 0 ] || bad+=("transient failures below the limit were reported as errors")
        ;;
      B)
        [ "$injected" = 1200 ] || bad+=("$injected failures injected, want 1200")
        grep -q "cfq: io_uring_submit: Resource temporarily unavailable (1001 tries): 1 request(s) failed with EIO" "$log" ||
          bad+=("no error line saying EAGAIN, 1001 tries, 1 request")
        ;;
      C)
        grep -q "cfq: io_uring_submit: Bad file descriptor (1 tries): 1 request(s) failed with EIO" "$log" ||
          bad+=("no error line saying EBADF, 1 try, 1 request")
        ;;
      D)
        grep -qE "cfq: io_uring_submit: Bad file descriptor \(1 tries\): [0-9]+ request\(s\) failed with EIO" "$log" ||
          bad+=("no error line for the failed batch")
        ;;
    esac
    if [ ${#bad[@]} -gt 0 ]; then
      printf '   WRONG: %s\n' "${bad[@]}"
      grep -E "error|cfq: io_uring|Assert|abort" "$log" | tail -n 20 | sed 's/^/   | /'
      failures=$((failures + ${#bad[@]}))
    fi
  done
done

[ "$failures" = 0 ] || fail "$failures problems"
echo "== submit failures: retried while transient, EIO when not, nothing lost"
