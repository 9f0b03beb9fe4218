#!/usr/bin/env bash
# test-lab-latency.sh: the lab runs a group's latency target and qsd caps,
# and judges a tenant's latency per 1 s window.
#  - The judge (--lat-target), on its own function: the 99th percentile of
#    each 1 s bin the tenant covers whole, from per-request completion
#    latencies; a bin with fewer than 10 completions, or one the tenant
#    covers only in part, is not judged; a bin at the target meets it, one
#    a little above does not.
#  - Systems: cfq:group.NAME.KEY=VALUE is a group's key for our server,
#    qsd:group.NAME.iops_max=N a throttle group's limit; qsd takes no
#    scheduler key, a peer without caps no group key.
#  - End to end on tests/lab/smoke.conf (6 s, a one-channel SSD model of
#    2 ms a request, 500 requests/s): our server runs with the small
#    group's target set (its statistics show it), qsd over our fifo server
#    on the same model with the large group capped at 100/s.  Both report
#    the small tenant's windows; qsd's requests go through the model (no
#    more than it serves: a read that qemu answered from the image's holes
#    would not) and the capped tenant stays near its cap.
# Robust on a loaded machine: no latency is asserted, only the shape.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_lab
scn=$top/tests/lab/smoke.conf

"$PYTHON" - "$top/tools" "$scn" <<'EOF' || fail "the lab's latency windows and system overrides"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from cfqlab_lib.analysis import lat_windows
from cfqlab_lib.common import LabError
from cfqlab_lib.lab import make_system
bad = []
def check(c, what):
    if not c:
        bad.append(what)
        print("FAIL:", what)

# Bins from t0 = 100 s: bin 0 all at 4 ms but one at 9 ms in 100 (p99 4
# ms); bin 1 two at 5.5 ms in 100 (p99 5.5 ms); bin 2 five requests; bin 3
# half covered; bin 4 exactly at the 5 ms target.
ms = 1000000
log = [(100000 + i, 4 * ms) for i in range(99)] + [(100500, 9 * ms)]
log += [(101000 + i, 4 * ms) for i in range(98)] + [(101900, 5.5 * ms)] * 2
log += [(102000 + i, 1 * ms) for i in range(5)]
log += [(103000 + i, 1 * ms) for i in range(50)]
log += [(104000 + i, 5 * ms) for i in range(20)]
cov = [1.0, 1.0, 1.0, 0.5, 1.0]
w = lat_windows([log[:150], log[150:]], cov, 100.0, 5, 5.0, 99)
print(w)
check(w["p_ms"][0] == 4.0, "bin 0: p99 4 ms: %r" % w["p_ms"][0])
check(w["p_ms"][1] == 5.5, "bin 1: p99 5.5 ms: %r" % w["p_ms"][1])
check(w["p_ms"][2] is None and w["p_ms"][3] is None, "bins 2 and 3 not judged")
check(w["p_ms"][4] == 5.0, "bin 4: p99 5 ms")
check((w["judged"], w["met"]) == (3, 2), "3 judged, 2 met: %r" % w)

c = make_system("cfq:group.db.latency_target=5ms,slice_idle=0,group.a.b.iops_max=9")
check(c.overrides == ["slice_idle=0"], "cfq: server overrides %r" % c.overrides)
check(c.group_ov == [("db", "latency_target", "5ms"), ("a.b", "iops_max", "9")],
      "cfq: group overrides %r" % c.group_ov)
q = make_system("qsd:group.seq.bps_max=2M,group.wr.iops_max=100")
check(q.caps == {"seq": {"bps-total": 2 << 20}, "wr": {"iops-total": 100}},
      "qsd caps %r" % q.caps)
for spec in ("qsd:slice_idle=0", "qsd:group.x.latency_target=5ms", "bfq:group.x.iops_max=1",
             "cfq:group.db=1", "qsd:group.x.iops_max=0"):
    try:
        make_system(spec)
        check(False, "%s accepted" % spec)
    except LabError as e:
        print("refused: %s" % e)
sys.exit(1 if bad else 0)
EOF

lab_image_dir
out=$TESTDIR/lab
BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --no-plots --duration 6s \
  --lat-target small=50ms \
  --systems "cfq:group.small.latency_target=50ms,group.small.latency_percentile=99 qsd:group.large.iops_max=100" \
  --dir "$imgdir" --out "$out" "$scn" \
  >"$TESTDIR/cfqlab.log" 2>&1 || { cat "$TESTDIR/cfqlab.log"; fail "cfqlab failed"; }
cat "$out/report.txt"
"$PYTHON" - "$out" <<'EOF' || fail "the lab's report of the latency target and qsd's caps"
import glob, json, os, sys
rep = json.load(open(os.path.join(sys.argv[1], "report.json")))
sy = {s["name"].split(":")[0]: s for s in rep["systems"]}
bad = []
def check(c, what):
    if not c:
        bad.append(what)
        print("FAIL:", what)
for n in ("cfq", "qsd"):
    check(sy[n]["status"] == "ok", "%s ran: %s" % (n, sy[n].get("why")))
    if sy[n]["status"] != "ok":
        continue
    lw = sy[n]["tenants"]["small"].get("lat_windows") or {}
    check(lw.get("judged", 0) >= 3 and lw["target_ms"] == 50 and lw["pct"] == 99,
          "%s: small's windows judged: %r" % (n, lw))
    check(all(v is None for k, v in sy[n]["tenants"]["large"].items() if k == "lat_windows"),
          "%s: no windows for a tenant without --lat-target" % n)
st = json.load(open(glob.glob(os.path.join(sys.argv[1], "runs", "r1-cfq*", "stats.json"))[0]))
g = {x["name"]: x for x in st["groups"]}
lat = g["small"].get("latency") or {}
check(lat.get("target_us") == 50000 and lat.get("percentile") == 99,
      "the server has small's target: %r" % lat)
if sy["qsd"]["status"] == "ok":
    t = sy["qsd"]["tenants"]
    tot = sum(x["iops"] for x in t.values())
    check(tot <= 550, "qsd: %.0f requests/s, the model serves 500" % tot)
    check(t["large"]["iops"] <= 115, "qsd: large capped at 100/s: %.0f" % t["large"]["iops"])
    check("over our server with scheduler=fifo emulating ssd" in sy["qsd"]["label"],
          "qsd's label: %r" % sy["qsd"]["label"])
txt = open(os.path.join(sys.argv[1], "report.txt")).read()
check(txt.count("small p99 per 1 s window <= 50 ms") == 2, "the table's window lines")
sys.exit(1 if bad else 0)
EOF
echo "== the lab runs latency targets and qsd caps, and judges the windows"
