#!/usr/bin/env bash
# test-lab-rbd.sh: the fairness lab on an RBD image.  tools/cfqlab runs
# bench/scenarios/three-weights-rbd.conf (weights 100/200/400, 4k random
# reads 16 deep each, three regions of one image) on this cluster
# (--ceph-conf, --image rbd:rbd/IMAGE) through our server (cfq, fifo) and
# qemu-storage-daemon's rbd driver, and BFQ is asked to run too.  Checked
# in its report.json:
#  - cfq, fifo and qsd ran; bfq was skipped because the image is in Ceph;
#  - the report names the image, and our server served it (its stats:
#    every tenant's bytes are fio's within 2%);
#  - cfq's shares follow the weights (each within 25% relative of w/700;
#    fifo gives 1/3 each, so the w400 tenant's 4/7 is out of its reach).
# Nothing here is a speed: the cluster runs on the same shared machine.
# timeout: 300
. "$(dirname "$0")/ceph-functions.sh"
requires_ceph
requires_lab
requires_cmd qemu-storage-daemon

img=$(rbd_image lab 1200M)
out=$TESTDIR/lab
BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --systems "cfq fifo qsd bfq" \
  --ceph-conf "$CEPH_CONF" --image "rbd:rbd/$img" --duration 6s --out "$out" \
  "$top/bench/scenarios/three-weights-rbd.conf" >"$TESTDIR/cfqlab.log" 2>&1 ||
  { cat "$TESTDIR/cfqlab.log"; fail "cfqlab failed"; }
cat "$out/report.txt"

"$PYTHON" - "$out/report.json" "$img" <<'EOF' || fail "the lab's report on rbd is wrong"
import json, sys
rep = json.load(open(sys.argv[1]))
img = sys.argv[2]
bad = []
sy = {s["name"]: s for s in rep["systems"]}
for n in ("cfq", "fifo", "qsd"):
    if sy.get(n, {}).get("status") != "ok":
        bad.append("system %s: %s" % (n, sy.get(n, {}).get("why")))
why = sy.get("bfq", {}).get("why") or ""
if sy.get("bfq", {}).get("status") != "skipped" or "Ceph" not in why:
    bad.append("bfq: %r, want skipped because the image is in Ceph" % sy.get("bfq"))
if rep["scenario"].get("image_rbd") != "rbd:rbd/" + img:
    bad.append("report's image %r" % rep["scenario"].get("image_rbd"))
if not bad:
    rnd = sy["cfq"]["raw_rounds"][0]
    srv = rnd["server_stats"]["exports"]
    for t in rep["scenario"]["tenants"]:
        x, s = rnd["tenants"][t["name"]], srv[t["export"]]
        if abs(x["bytes"] - s["bytes"]) > 0.02 * max(1, s["bytes"]):
            bad.append("%s: fio %d bytes, server %d" % (t["name"], x["bytes"], s["bytes"]))
    w = {g["name"]: g["weight"] for g in rep["scenario"]["groups"]}
    tot = sum(rnd["tenants"][n]["bytes"] for n in w)
    for n in w:
        share, want = rnd["tenants"][n]["bytes"] / tot, w[n] / sum(w.values())
        print("%s: share %.3f want %.3f" % (n, share, want))
        if abs(share - want) > 0.25 * want:
            bad.append("%s: share %.3f, want %.3f +-25%%" % (n, share, want))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
