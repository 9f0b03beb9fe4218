#!/usr/bin/env bash
# test-rbd-weights.sh: three tenants with weights 100/200/400 in front of
# Ceph RBD (backend=rbd), each running the same fio workload (4k random
# reads, depth 32) through its own export, get throughput shares within a
# coarse band (CFQ_CEPH_BAND, default 25% relative) of weight/sum: 1/7,
# 2/7, 4/7.  Twice: the three exports regions of one image, and each an
# image of its own.  Shares are measured by the server's own accounting
# (per-export bytes between two "stats" snapshots), and by fio.
#
# The cluster is real: its speed on a shared machine varies, so the test
# asserts only on shares, which the scheduler decides because the tenants
# together always have more requests than the device's queue_depth
# admits (4); it never asserts on speed.  fio's shares, which take in the
# ramp and the end, get half as much again of band.  CFQ_CEPH_SECONDS sets
# the run length, CFQ_CEPH_QD the queue_depth.
# timeout: 300
. "$(dirname "$0")/ceph-functions.sh"
requires_ceph
requires_cmd fio
requires_python_nbd
fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd engine"

secs=${CFQ_CEPH_SECONDS:-20}
band=${CFQ_CEPH_BAND:-25}
qd=${CFQ_CEPH_QD:-4}
common="[scheduler]
scheduler = cfq
slice_idle = 0
group_idle = 8ms
rotational = 0

[group small]
weight = 100
[group medium]
weight = 200
[group large]
weight = 400"

# shares NAME CONF: serve CONF, run the three tenants, check the shares.
shares ()
{
  local name=$1 conf=$2
  tenant_start "$name" "$conf" backend=rbd
  shares_run "$name" "$secs" small medium large
  stop_nbdkit "$name"
  [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
    fail "$name: nbdkit exited with status ${NBDKIT_STATUS[$name]}"
  "$PYTHON" - "$TESTDIR" "$band" "$name" <<'EOF' || fail "$name: shares are not the weights' shares"
import json, sys
sys.path.insert(0, sys.argv[1])
from srvstats import load, entries, total, check_shares
d, band, name = sys.argv[1], float(sys.argv[2]) / 100, sys.argv[3]
weights = {"small": 100, "medium": 200, "large": 400}
bad = []

s1 = entries(load(d + "/s1.json"), "exports")
s2 = entries(load(d + "/s2.json"), "exports")
check_shares("server", {k: total(s2[k], "bytes") - total(s1[k], "bytes")
                        for k in weights}, weights, band, bad, name + " ")
fio = json.load(open(d + "/fio.json"))
check_shares("fio", {j["jobname"]: j["read"]["io_bytes"] for j in fio["jobs"]},
             weights, 1.5 * band, bad, name + " ")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
EOF
  echo "== $name: shares follow weights 100/200/400"
}

# ---- one image, three regions ------------------------------------------------
one=$(rbd_image one 768M)
cat >"$TESTDIR/one.conf" <<EOF
[device]
file = rbd:rbd/$one
mode = iops
queue_depth = $qd

$common

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
shares one "$TESTDIR/one.conf"

# ---- three images ----------------------------------------------------------------
dev=$(rbd_image dev 16M)
a=$(rbd_image a 256M)
b=$(rbd_image b 256M)
c=$(rbd_image c 256M)
cat >"$TESTDIR/three.conf" <<EOF
[device]
file = rbd:rbd/$dev
mode = iops
queue_depth = $qd

$common

[export small]
group = small
file = rbd:$a
[export medium]
group = medium
file = rbd:$b
[export large]
group = large
file = rbd:$c
EOF
shares three "$TESTDIR/three.conf"
