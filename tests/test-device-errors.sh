#!/usr/bin/env bash
# test-device-errors.sh: I/O errors of the device under the export reach the
# client as EIO, one request at a time: the request that hit the error fails,
# every other request (on the same connection, on others, before and after)
# is served, and no acknowledged write is lost.
#
# The failing device: nbdkit's memory plugin behind its error filter, with
# every read failing with EIO while $TESTDIR/NAME.rtrig exists and every
# write, write-zeroes and trim while NAME.wtrig exists, turned into a
# regular file by nbdfuse (the kernel here has no dm-error or scsi_debug),
# and our server serves that file.  The FUSE file takes O_DIRECT, so most
# requests reach the device uncached; its size is not a multiple of 512,
# so the last partial block goes through the plugin's buffered descriptor
# (page cache) and that path is checked as well.  Reads under a trigger go
# to ranges never read before, so no cache can answer them instead of the
# device.  (Through O_DIRECT an unaligned write reads its edge blocks, so
# under the read trigger it must fail too; through a buffered server such
# as CFQ_PLUGIN=file it may succeed, and then its data must be there.)
#
# For each scheduler (fifo, cfq), on a fresh device:
#  1. no trigger: write a pattern (aligned, FUA, unaligned = read-modify-
#     write), flush, read it back;
#  2. read trigger: aligned, unaligned and last-block reads fail with EIO,
#     an unaligned write fails with EIO (its edge read failed), 32 reads in
#     flight at once all fail with EIO while a second connection's 16 writes
#     and flush at the same time succeed;
#  3. trigger removed: the same connection and a new one read the pattern
#     and the second connection's writes intact, the failed unaligned write
#     succeeds when retried (its range lock was released), the last block
#     is written through the buffered descriptor;
#  4. write trigger: aligned, FUA and unaligned writes and write-zeroes
#     (with NO_HOLE, and may-trim: a punched hole fails too) fail with EIO
#     while the second connection's reads succeed at the same time; a trim
#     (advisory) answers EIO or success; a last-block write fails with EIO
#     or, if it is acknowledged (FUSE writes through, but a write-back cache
#     would not), the flush after it must fail with EIO or the data must be
#     on the device in step 5;
#  5. trigger removed: the failed ranges are written again, flushed, and
#     every acknowledged byte is checked twice, through the server and on
#     the device itself (a direct connection to the memory disk, past every
#     cache);
# and then: the device really injected read and write errors, the server is
# still alive, its log has no crash and no error other than EIO, and it
# exits with status 0 on SIGTERM.  A hang is reported by request.
# Skips (77) without root, /dev/fuse, nbdfuse, python3-libnbd or nbdkit's
# error filter and memory plugin.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_fuse
requires_python_nbd
requires_cmd nbdfuse
nbdkit -U - --filter=error memory 1M --run true >/dev/null 2>&1 </dev/null ||
  skip "nbdkit cannot run '--filter=error memory' (needs nbdkit-error-filter" \
       "and nbdkit-memory-plugin)"

devsize=$(( (32 << 20) + 1000 ))     # not a multiple of 512: a partial block

# The client side, in python (libnbd bindings).  Every request is sent
# asynchronously and waited for with a deadline, so a hang names the request.
cat >"$TESTDIR/drive.py" <<'EOF'
import errno, os, sys, time
import nbd

srv, dev, rtrig, wtrig = sys.argv[1:5]
rmw = sys.argv[5] == "rmw"      # unaligned writes read their edge blocks
DEADLINE = 60                   # seconds for any batch of requests
MiB = 1 << 20


def fail(msg):
    sys.exit("FAIL: " + msg)


def connect(sock):
    h = nbd.NBD()
    # Unaligned requests must reach the server (it serves them by
    # read-modify-write), not be refused by the client.
    h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
    h.connect_unix(sock)
    return h


def trigger(path, on):
    if on:
        open(path, "w").close()
    else:
        os.unlink(path)
    print("%s %s" % ("created" if on else "removed", os.path.basename(path)),
          flush=True)


# Requests: (handle, buffer, cookie).
def pread(h, n, off):
    buf = nbd.Buffer(n)
    return (h, buf, h.aio_pread(buf, off))


def pwrite(h, data, off, flags=0):
    buf = nbd.Buffer.from_bytearray(bytearray(data))
    return (h, buf, h.aio_pwrite(buf, off, flags=flags))


def flush(h):
    return (h, None, h.aio_flush())


def zero(h, n, off, flags=0):
    return (h, None, h.aio_zero(n, off, flags=flags))


def trim(h, n, off):
    return (h, None, h.aio_trim(n, off))


def wait(reqs):
    """reqs: [(label, request)].  Wait for all, bounded; return
    {label: (errnum, data)} (errnum 0 on success)."""
    res = {}
    pending = list(reqs)
    end = time.monotonic() + DEADLINE
    while pending:
        left = []
        for label, (h, buf, cookie) in pending:
            try:
                if h.aio_command_completed(cookie):
                    res[label] = (0, bytes(buf.to_bytearray())
                                  if buf is not None else None)
                else:
                    left.append((label, (h, buf, cookie)))
            except nbd.Error as e:
                res[label] = (e.errnum or -1, None)
        pending = left
        if not pending:
            break
        if time.monotonic() > end:
            fail("no reply in %d s (server hung?) to: %s" %
                 (DEADLINE, ", ".join(l for l, _ in pending)))
        for h in {id(r[0]): r[0] for _, r in pending}.values():
            if h.aio_in_flight() > 0:
                h.poll(10)
    return res


def name(err):
    if err == 0:
        return "success"
    return errno.errorcode.get(err, str(err))


def want(label, err, expect):
    if err != expect:
        fail("%s: %s, want %s" % (label, name(err), name(expect)))
    print("  %-44s %s" % (label, name(err)), flush=True)


def want_ok(label, req):
    err, data = wait([(label, req)])[label]
    want(label, err, 0)
    return data


def want_eio(label, req):
    err, _ = wait([(label, req)])[label]
    want(label, err, errno.EIO)


acked = {}                      # offset -> bytes acknowledged there


def write_ok(h, label, data, off, flags=0):
    want_ok(label, pwrite(h, data, off, flags))
    acked[off] = data


def forget(off, n):
    """A failed write leaves [off, off+n) unspecified."""
    for o in list(acked):
        if o < off + n and off < o + len(acked[o]):
            del acked[o]


def verify(h, who):
    reqs = [("%s: read %d@%d" % (who, len(d), o), pread(h, len(d), o))
            for o, d in sorted(acked.items())]
    res = wait(reqs)
    for (label, _), (o, d) in zip(reqs, sorted(acked.items())):
        err, got = res[label]
        if err:
            fail("%s: %s, want success" % (label, name(err)))
        if got != d:
            i = next(i for i in range(len(d)) if got[i] != d[i])
            fail("%s: acknowledged data lost: first difference at byte %d"
                 % (label, o + i))
    print("  %s: %d acknowledged ranges intact" % (who, len(acked)),
          flush=True)


a = connect(srv)
b = connect(srv)
size = a.get_size()
tail = size - 700               # the last 700 bytes: partial block, buffered
print("export: %d bytes" % size, flush=True)
for p in (rtrig, wtrig):
    if os.path.exists(p):
        fail("%s exists at the start" % p)

print("1. no trigger: write a pattern, read it back", flush=True)
for i in range(4):
    write_ok(a, "write 64K@1M+%dK%s" % (64 * i, " FUA" if i == 3 else ""),
             os.urandom(65536), MiB + i * 65536,
             nbd.CMD_FLAG_FUA if i == 3 else 0)
write_ok(a, "unaligned write 3000@2M+100", os.urandom(3000), 2 * MiB + 100)
want_ok("flush", flush(a))
verify(a, "conn A")

print("2. read trigger: reads fail with EIO, request by request", flush=True)
trigger(rtrig, True)
want_eio("read 64K@4M", pread(a, 65536, 4 * MiB))
want_eio("unaligned read 1000@5M+7", pread(a, 1000, 5 * MiB + 7))
want_eio("read of the last block (buffered)", pread(a, 300, size - 300))
# Through O_DIRECT an unaligned write must read its edge blocks first,
# so it fails; a buffered server may write the bytes without reading.
udata = os.urandom(700)
label = "unaligned write 700@6M+300 (edge read)"
err, _ = wait([(label, pwrite(a, udata, 6 * MiB + 300))])[label]
if rmw:
    want(label, err, errno.EIO)
elif err in (0, errno.EIO):
    print("  %-44s %s" % (label, name(err)), flush=True)
else:
    fail("%s: %s, want EIO or success" % (label, name(err)))
if err == 0:
    acked[6 * MiB + 300] = udata
reqs = [("A: read 64K@%dK" % (8192 + 64 * i),
         pread(a, 65536, 8 * MiB + i * 65536)) for i in range(32)]
bdata = [os.urandom(65536) for _ in range(16)]
reqs += [("B: write 64K@%dK" % (12288 + 64 * i),
          pwrite(b, bdata[i], 12 * MiB + i * 65536)) for i in range(16)]
reqs += [("B: flush", flush(b))]
res = wait(reqs)
for label, _ in reqs:
    want(label, res[label][0], errno.EIO if label.startswith("A:") else 0)
for i in range(16):
    acked[12 * MiB + i * 65536] = bdata[i]

print("3. trigger removed: both connections and a new one work", flush=True)
trigger(rtrig, False)
verify(a, "conn A")
verify(b, "conn B")
c = connect(srv)
verify(c, "conn C (new)")
if want_ok("read 64K@4M again", pread(a, 65536, 4 * MiB)) != bytes(65536):
    fail("read 64K@4M: the never-written range does not read as zeroes")
write_ok(a, "unaligned write 700@6M+300 again", os.urandom(700),
         6 * MiB + 300)
write_ok(c, "write of the last 700 bytes (buffered)", os.urandom(700), tail)
want_ok("flush", flush(c))
verify(a, "conn A")

print("4. write trigger: writes fail with EIO, reads go on", flush=True)
trigger(wtrig, True)
reqs = [("A: write 64K@20M", pwrite(a, os.urandom(65536), 20 * MiB)),
        ("A: write 64K@20M+64K FUA",
         pwrite(a, os.urandom(65536), 20 * MiB + 65536, nbd.CMD_FLAG_FUA)),
        ("A: unaligned write 3000@21M+100",
         pwrite(a, os.urandom(3000), 21 * MiB + 100)),
        ("A: zero 64K@22M NO_HOLE",
         zero(a, 65536, 22 * MiB, nbd.CMD_FLAG_NO_HOLE)),
        ("A: zero 64K@22M+64K (may trim)", zero(a, 65536, 22 * MiB + 65536))]
reqs += [("B: read 64K@1M+%dK" % (64 * i), pread(b, 65536, MiB + i * 65536))
         for i in range(4)]
res = wait(reqs)
for label, _ in reqs:
    want(label, res[label][0], errno.EIO if label.startswith("A:") else 0)
for i in range(4):
    if res["B: read 64K@1M+%dK" % (64 * i)][1] != acked[MiB + i * 65536]:
        fail("B: read 64K@1M+%dK: wrong data" % (64 * i))
forget(20 * MiB, 2 * MiB + 2 * 65536)
# A trim is advisory: EIO or success, but an answer.
err, _ = wait([("trim", trim(a, 65536, 23 * MiB))])["trim"]
if err not in (0, errno.EIO):
    fail("trim 64K@23M: %s, want EIO or success" % name(err))
print("  %-44s %s" % ("trim 64K@23M (advisory)", name(err)), flush=True)
# The last block goes through the page cache: under a write-back cache its
# write could be acknowledged and fail only when written back.  Then the
# flush must fail; if the flush succeeds, the data must be on the device.
tdata = os.urandom(700)
terr, _ = wait([("tail", pwrite(a, tdata, tail))])["tail"]
if terr not in (0, errno.EIO):
    fail("write of the last 700 bytes: %s, want EIO or success" % name(terr))
print("  %-44s %s" % ("write of the last 700 bytes (buffered)", name(terr)),
      flush=True)
ferr, _ = wait([("flush", flush(a))])["flush"]
if ferr not in (0, errno.EIO):
    fail("flush after the failed writes: %s, want EIO or success"
         % name(ferr))
print("  %-44s %s" % ("flush after the failed writes", name(ferr)),
      flush=True)
if terr == 0 and ferr == 0:
    acked[tail] = tdata         # claimed durable: must be there (step 5)
    print("  the last-block write was acknowledged and the flush succeeded:"
          " its data must be on the device", flush=True)
elif terr == 0:
    print("  the last-block write was acknowledged, the flush reported EIO",
          flush=True)
    forget(tail, 700)
else:
    forget(tail, 700)

print("5. trigger removed: rewrite, flush, check everything", flush=True)
trigger(wtrig, False)
write_ok(a, "write 64K@20M again", os.urandom(65536), 20 * MiB)
write_ok(b, "unaligned write 3000@21M+100 again", os.urandom(3000),
         21 * MiB + 100)
if tail not in acked:
    write_ok(a, "write of the last 700 bytes again", os.urandom(700), tail)
want_ok("zero 128K@22M again", zero(c, 2 * 65536, 22 * MiB))
acked[22 * MiB] = bytes(2 * 65536)
want_ok("flush", flush(a))
verify(a, "conn A")
verify(connect(srv), "conn D (new)")
verify(connect(dev), "the device itself")
for h in (a, b, c):
    h.shutdown()
print("OK", flush=True)
EOF

# run_one SCHED PLUGIN-PARAMS...: a fresh failing device, our server on it,
# the client, the checks on the server and its log.
run_one ()
{
  local s=$1 fuse=$TESTDIR/$1.fuse rtrig=$TESTDIR/$1.rtrig
  local wtrig=$TESTDIR/$1.wtrig i rc=0; shift

  # The device: nbdkit's memory plugin (CFQ_PLUGIN names the plugin that
  # start_nbdkit runs; it is "memory" only for this call).
  CFQ_PLUGIN=memory start_nbdkit "${s}dev" --filter=error -- size="$devsize" \
    error-pread=EIO error-pread-rate=100% error-pread-file="$rtrig" \
    error-pwrite=EIO error-pwrite-rate=100% error-pwrite-file="$wtrig" \
    error-zero=EIO error-zero-rate=100% error-zero-file="$wtrig" \
    error-trim=EIO error-trim-rate=100% error-trim-file="$wtrig"
  fuse_start "$fuse/disk" "$devsize" --unix "${NBDKIT_SOCK[${s}dev]}"

  start_nbdkit "$s" -v -- file="$fuse/disk" "$@"
  grep -E "cfq: file=.*(O_DIRECT|buffered)" "$TESTDIR/$s.log" || true

  # Our plugin on O_DIRECT serves unaligned writes by read-modify-write.
  rmw=buffered
  if plugin_is_ours; then
    grep -q "cfq: file=$fuse/disk: .*, O_DIRECT," "$TESTDIR/$s.log" &&
      rmw=rmw
  fi
  timeout 240 "$PYTHON" "$TESTDIR/drive.py" "${NBDKIT_SOCK[$s]}" \
    "${NBDKIT_SOCK[${s}dev]}" "$rtrig" "$wtrig" "$rmw" || rc=$?
  [ "$rc" = 0 ] || fail "$s: the client checks failed (exit $rc)"

  # The errors were the device's: the error filter injected them.
  grep -q "injecting EIO error into pread" "$TESTDIR/${s}dev.log" ||
    fail "$s: the device never injected a read error"
  grep -q "injecting EIO error into pwrite" "$TESTDIR/${s}dev.log" ||
    fail "$s: the device never injected a write error"

  kill -0 "${NBDKIT_PID[$s]}" 2>/dev/null || fail "$s: the server is gone"
  crash="Assertion|assert|abort|Segmentation|SIGSEGV|SIGABRT|double free"
  crash+="|corrupted|stack smashing|Sanitizer|core dumped"
  if grep -nE "$crash" "$TESTDIR/$s.log"; then
    fail "$s: the server log shows a crash"
  fi
  # Every error the server logged is the device's EIO, nothing else.
  if grep -E ": error: " "$TESTDIR/$s.log" |
       grep -v "Input/output error"; then
    fail "$s: the server logged errors other than EIO (above)"
  fi
  echo "$s: EIO errors logged by the server:" \
    "$(grep -c ": error: .*Input/output error" "$TESTDIR/$s.log" || true)"
  stop_nbdkit "$s" 2>/dev/null
  [ "${NBDKIT_STATUS[$s]}" = 0 ] ||
    fail "$s: nbdkit exited with status ${NBDKIT_STATUS[$s]}"

  umount "$fuse" || fail "$s: cannot unmount $fuse"
  for (( i = 0; i < 300; i++ )); do
    kill -0 "$FUSEPID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$FUSEPID" 2>/dev/null && fail "$s: nbdfuse did not exit"
  stop_nbdkit "${s}dev" 2>/dev/null
  echo "== $s: device errors reached the client as EIO, nothing lost"
}

if plugin_is_ours; then
  scheds=$(nbdkit "$CFQ_PLUGIN" --dump-plugin |
           sed -n 's/^cfq_schedulers=//p' | tr ',' ' ')
  for s in fifo cfq; do
    case " $scheds " in
      *" $s "*) run_one "$s" scheduler="$s" ;;
      *) fail "this build has no scheduler=$s (has: '$scheds')" ;;
    esac
  done
else
  run_one file
fi
