#!/usr/bin/env bash
# test-conn-flood.sh: 1,000 idle connections cost little, and the server
# keeps serving another tenant while they are open (make
# check-stress).
#
# For each of two servers, nbdkit's null plugin (what nbdkit itself costs
# per connection) and ours (config with two exports), at the same number
# of nbdkit worker threads: RSS before, with 1,000 idle connections (each
# has done one 4 KiB read, so its statistics hold rows), and whether a
# tenant on another connection reads and writes meanwhile.
# Asserted:
#  - with --threads=4: ours adds at most 64 MiB of RSS for the 1,000;
#  - at nbdkit's default 16 threads per connection, nbdkit alone costs
#    about 156 KiB a connection (16 idle threads; measured on the null
#    plugin): ours must add at most 16 KiB per connection over that;
#  - the tenant is served, the server is alive.
# timeout: 900
. "$(dirname "$0")/../tenant-functions.sh"
tenant_requires
requires_python_nbd

n=${CFQ_STRESS_CONNS:-1000}
# nbdkit 1.32 takes 3 descriptors a connection (the socket, a pipe), and
# the plugin one more (the connection's own descriptor for its flushes).
ulimit -n $((n * 4 + 256)) 2>/dev/null ||
  skip "cannot raise the descriptor limit to $((n * 4 + 256))"
make_sparse "$TESTDIR/disk.img" 1G
cat >"$TESTDIR/c.conf" <<'EOC'
[device]
file = disk.img
[group t]
[group crowd]
[export a]
group = t
size = 512M
[export b]
group = crowd
offset = 512M
EOC

rss_kib () { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# crowd NAME EXPORT: $n connections, one read each; prints the server's
# RSS growth in KiB once they are all open, then holds them until the
# file NAME.done appears.
crowd ()
{
  "$PYTHON" - "nbd+unix:///$2?socket=${NBDKIT_SOCK[$1]}" "$n" "${NBDKIT_PID[$1]}" \
    "$TESTDIR/$1.done" <<'EOP'
import os, sys, time, nbd
uri, n, pid, done = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def rss():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS"):
            return int(l.split()[1])
r0 = rss()
hs = []
for i in range(n):
    h = nbd.NBD()
    h.connect_uri(uri)
    h.pread(4096, (i * 4096 * 97) % (256 << 20))
    hs.append(h)
time.sleep(1)
print(rss() - r0, flush=True)
while not os.path.exists(done):
    time.sleep(0.1)
EOP
}

# tenant URI [verify]: writes and reads on its own connection (and
# checks what it reads back: not on nbdkit's null plugin).
tenant ()
{
  "$PYTHON" - "$1" "${2:-}" <<'EOP'
import sys, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
for i in range(200):
    h.pwrite(bytes([i]) * 4096, i * 4096)
    got = h.pread(4096, i * 4096)
    assert sys.argv[2] != "verify" or got == bytes([i]) * 4096
h.shutdown()
EOP
}

# measure NAME EXPORT TENANT-URI [verify]: crowd + tenant; sets grow (KiB).
measure ()
{
  crowd "$1" "$2" >"$TESTDIR/$1.grow" &
  local cpid=$!
  cleanup_fn kill "$cpid"
  wait_for "$n connections to $1" 600 test -s "$TESTDIR/$1.grow"
  tenant "$3" "${4:-}" || fail "$1: the tenant was not served with $n connections open"
  kill -0 "${NBDKIT_PID[$1]}" || fail "$1: the server died"
  touch "$TESTDIR/$1.done"
  wait "$cpid" || fail "$1: the crowd failed"
  grow=$(cat "$TESTDIR/$1.grow")
}

declare -A g_null=() g_ours=()      # threads -> KiB added
for thr in 4 16; do
  CFQ_PLUGIN=null start_nbdkit null$thr --threads=$thr -- 1G
  measure null$thr "" "$(export_uri null$thr "")"
  gnull=$grow
  stop_nbdkit null$thr
  start_nbdkit ours$thr --threads=$thr -- config="$TESTDIR/c.conf"
  measure ours$thr b "$(export_uri ours$thr a)" verify
  gours=$grow
  stop_nbdkit ours$thr
  echo "threads=$thr: $n idle connections add $((gnull / 1024)) MiB to nbdkit null, $((gours / 1024)) MiB to ours: $(( (gours - gnull) / n )) KiB a connection more"
  g_null[$thr]=$gnull
  g_ours[$thr]=$gours
done
[ "${g_ours[4]}" -le $((64 * 1024 * n / 1000)) ] ||
  fail "threads=4: $n idle connections added $((g_ours[4] / 1024)) MiB (limit 64 MiB per 1,000)"
[ $(( (g_ours[16] - g_null[16]) / n )) -le 16 ] ||
  fail "threads=16: ours costs $(( (g_ours[16] - g_null[16]) / n )) KiB a connection more than nbdkit null (limit 16)"
echo ok
