#!/usr/bin/env bash
# test-tenant-weights.sh: three tenants with weights 100/200/400 on one
# emulated device, each running the same fio workload (4k random reads,
# depth 32) through its own export, get throughput shares within 10%
# (relative) of weight/sum: 1/7, 2/7, 4/7.  Measured twice: by fio (bytes
# after a ramp) and by the server's own accounting (per-export bytes
# between two "stats" snapshots on the control socket).
#
# Robust on a loaded machine: the emulated device is the bottleneck (one
# SSD channel, 2 ms per read: about 500 IOPS in all, far below what the
# NBD path can do on a busy CPU), every tenant always has requests queued,
# and the test asserts only on shares, which the scheduler decides, never
# on speed.  FAIR_EMULATE=hdd runs the same on the rotational model
# (mode=time), FAIR_SECONDS changes the run length.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_cmd fio
requires_python_nbd
fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd engine"

secs=${FAIR_SECONDS:-30}
emulate=${FAIR_EMULATE:-ssd}
make_sparse "$TESTDIR/disk.img" 1G

case $emulate in
  ssd) device="emulate = ssd
mode = iops
model.channels = 1
model.read = 2ms
model.write = 2ms
model.seed = 1"
       # No idling on a queue, but CFQ's default group_idle (8 ms): as in
       # CFQ's blkio documentation, a group whose queue empties for a
       # moment would otherwise leave the service tree and lose its place.
       sched="slice_idle = 0
group_idle = 8ms
rotational = 0" ;;
  hdd) device="emulate = hdd
mode = time
model.seed = 1"
       sched="slice_idle = 8ms
group_idle = 8ms" ;;
  *) fail "FAIR_EMULATE=$emulate: want ssd or hdd" ;;
esac

cat >"$TESTDIR/fair.conf" <<EOF
[device]
file = disk.img
$device

[scheduler]
scheduler = cfq
$sched

[group small]
weight = 100
[group medium]
weight = 200
[group large]
weight = 400

[export small]
group = small
size = 256M
[export medium]
group = medium
offset = 256M
size = 256M
[export large]
group = large
offset = 512M
size = 256M
EOF

tenant_start srv "$TESTDIR/fair.conf"

shares_run srv "$secs" small medium large

"$PYTHON" - "$TESTDIR" <<'EOF' || fail "shares are not the weights' shares"
import json, sys
sys.path.insert(0, sys.argv[1])
from srvstats import load, entries, total, check_shares
d = sys.argv[1]
weights = {"small": 100, "medium": 200, "large": 400}
bad = []

fio = json.load(open(d + "/fio.json"))
check_shares("fio", {j["jobname"]: j["read"]["io_bytes"] for j in fio["jobs"]},
             weights, 0.10, bad)

s1 = entries(load(d + "/s1.json"), "exports")
s2 = entries(load(d + "/s2.json"), "exports")
check_shares("server", {k: total(s2[k], "bytes") - total(s1[k], "bytes")
                        for k in weights}, weights, 0.10, bad)

# The groups carry the configured weights.
g = entries(load(d + "/s2.json"), "groups")
for k, w in weights.items():
    assert k in g, "stats: no group %s" % k
    if "weight" in g[k]:
        assert int(g[k]["weight"]) == w, "group %s weight %s, want %d" % (k, g[k]["weight"], w)
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
EOF
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"
echo "== shares follow weights 100/200/400 on emulate=$emulate"
