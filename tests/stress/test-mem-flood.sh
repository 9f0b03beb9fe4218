#!/usr/bin/env bash
# test-mem-flood.sh: a memory flood stays within the budget, and another
# tenant is served through it (make check-stress).
#
# 4 connections each keep 16 requests of 32 MiB (the largest the server
# advertises) in flight, unaligned (so every one needs a buffer from the
# plugin's pool), half reads and half writes, for CFQ_STRESS_SECONDS
# (default 20), with buffer_pool=64M; meanwhile a tenant on another
# export reads 4 KiB at a time.  nbdkit 1.32 itself allocates every
# request's data buffer before the plugin sees the request (32 MiB for
# each of the 64 in flight): that part is bounded by the memory budget
# (test-memory-budget.sh), set here to 4G so that all 64 fit and this
# test sees the pool alone.  Asserted:
#  - the pool never held more than its cap (stats "buffers": peak <= cap)
#    and requests waited for it rather than failing;
#  - the server's peak RSS <= the pool's cap + nbdkit's in-flight request
#    buffers (64 x 32 MiB) + 64 MiB;
#  - a second after the flood, RSS <= the RSS before + 64 MiB (the old
#    per-thread bounce buffers stayed: 214 MiB after 8 MiB reads);
#  - the tenant was served all along; the server is alive.
# timeout: 900
. "$(dirname "$0")/../tenant-functions.sh"
tenant_requires
requires_python_nbd

secs=${CFQ_STRESS_SECONDS:-20}
make_sparse "$TESTDIR/disk.img" 3G
cat >"$TESTDIR/m.conf" <<'EOC'
[device]
file = disk.img
[group flood]
[group calm]
[export flood]
group = flood
size = 2G
[export calm]
group = calm
offset = 2G
EOC
tenant_start srv "$TESTDIR/m.conf" buffer_pool=64M memory=4G
rss () { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/${NBDKIT_PID[srv]}/status"; }
rss0=$(rss)

"$PYTHON" - "$(export_uri srv flood)" "$(export_uri srv calm)" "${NBDKIT_PID[srv]}" "$secs" \
  >"$TESTDIR/flood.out" 2>&1 <<'EOP' || fail "the flood: $(cat "$TESTDIR/flood.out")"
import nbd, sys, threading, time
flood_uri, calm_uri, pid, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
MAX = 32 << 20
def rss():
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS"):
            return int(l.split()[1]) // 1024
peak = [0]
stop = threading.Event()
def monitor():
    while not stop.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.02)
errors = []
def flood(k):
    h = nbd.NBD(); h.set_strict_mode(0); h.connect_uri(flood_uri)
    data = bytearray(MAX)
    i = 0
    end = time.time() + secs
    def done(err):
        if err.value:
            errors.append(err.value)
        return 1
    while time.time() < end:
        while h.aio_in_flight() < 16:
            off = ((k * 16 + i) % 60) * MAX + 1 + i % 511
            if i % 2:
                h.aio_pwrite(data, off, completion=done)
            else:
                h.aio_pread(bytearray(MAX), off, completion=done)
            i += 1
        h.poll(-1)
    while h.aio_in_flight() > 0:
        h.poll(-1)
    h.shutdown()
calm = [0]
def tenant():
    h = nbd.NBD(); h.connect_uri(calm_uri)
    while not stop.is_set():
        h.pread(4096, (calm[0] * 4096 * 7919) % (512 << 20))
        calm[0] += 1
    h.shutdown()
threads = [threading.Thread(target=monitor), threading.Thread(target=tenant)]
threads += [threading.Thread(target=flood, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads[2:]:
    t.join()
stop.set()
threads[0].join(); threads[1].join()
print(peak[0], calm[0], len(errors))
EOP
read -r peak calm errs <"$TESTDIR/flood.out"
sleep 1
rss1=$(rss)
stats_json srv >"$TESTDIR/s.json"
read -r cap bpeak waits < <("$PYTHON" -c '
import json, sys
b = json.load(open(sys.argv[1]))["device"]["buffers"]
print(b["cap"] >> 20, b["peak"] >> 20, b["waits"])' "$TESTDIR/s.json")
echo "RSS: before $rss0 MiB, peak $peak MiB, a second after $rss1 MiB; pool: cap $cap MiB, peak $bpeak MiB, $waits waits; tenant: $calm reads; $errs failed requests"
kill -0 "${NBDKIT_PID[srv]}" || fail "the server died"
[ "$errs" = 0 ] || fail "$errs flood requests failed (they must wait for buffers, not fail)"
[ "$bpeak" -le "$cap" ] || fail "the pool held $bpeak MiB, over its cap of $cap MiB"
[ "$calm" -ge 100 ] || fail "the tenant was served only $calm reads in $secs s"
limit=$((cap + 64 * 32 + 64))
[ "$peak" -le "$limit" ] ||
  fail "peak RSS $peak MiB over the cap + nbdkit's in-flight buffers + 64 MiB ($limit MiB)"
[ "$rss1" -le $((rss0 + 64)) ] ||
  fail "RSS stayed at $rss1 MiB after the flood (before: $rss0 MiB)"
stop_nbdkit srv
echo ok
