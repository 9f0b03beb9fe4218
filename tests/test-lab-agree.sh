#!/usr/bin/env bash
# test-lab-agree.sh: the server and the simulator agree.  Five scenarios (tests/lab/agree-*.conf: weights on a one-channel
# SSD model in IOPS mode, weights on the disk model in time mode with
# CFQ's idling, and three pairs of unlike tenants as the fairness matrix
# has them: sync readers against sync writers, 4k random reads against
# 64k sequential reads on a model whose cost grows with the size, a queue
# 32 deep against one 2 deep) run through our server
# (scheduler=cfq, fio over NBD) and through cfqsim on the same device
# model, by tools/cfqlab.  Per tenant:
#  - its share of the bytes (steady one-second bins) is within 10% of the
#    simulator's (relative);
#  - its mean latency as the server counts it (insert to completion, the
#    control socket's stats) is within 25% of the simulator's.
# What the simulator leaves out (the NBD round trip, the CPU, the page
# cache) is in man cfqlab (tools/cfqlab.pod).  Negative control: the same
# check of the server's cfq against the simulator's fifo must fail.
#
# Robust on a loaded machine: each modelled device (about 500 IOPS, or 80
# for the disk) is the bottleneck; only shares and latencies the device
# model decides are compared.
# timeout: 600
. "$(dirname "$0")/functions.sh"
requires_lab
lab_image_dir

cat >"$TESTDIR/agree.py" <<'EOF2'
import json, sys

def agree(rep, srv_name, sim_name):
    """Disagreements between system SRV_NAME (our server) and SIM_NAME."""
    sy = {s["name"]: s for s in rep["systems"]}
    bad = []
    for n in (srv_name, sim_name):
        if sy.get(n, {}).get("status") != "ok":
            return ["system %s: %s" % (n, sy.get(n, {}).get("why"))]
    srv, sim = sy[srv_name], sy[sim_name]
    stats = srv["raw_rounds"][0]["server_stats"]["exports"]
    for t in rep["scenario"]["tenants"]:
        n = t["name"]
        a, b = srv["tenants"][n], sim["tenants"][n]
        rel = abs(a["share"] - b["share"]) / b["share"]
        print("  %-8s share server %.3f sim %.3f (%+.1f%%)"
              % (n, a["share"], b["share"], 100 * (a["share"] - b["share"]) / b["share"]),
              end="")
        if rel > 0.10:
            bad.append("%s: share %.3f, simulator %.3f" % (n, a["share"], b["share"]))
        ms = stats[t["export"]]["lat_ms"]["mean_ms"]
        mb = b["lat_ms"]["mean"]
        print("   mean latency server %.2f ms sim %.2f ms (%+.1f%%)"
              % (ms, mb, 100 * (ms - mb) / mb))
        if abs(ms - mb) / mb > 0.25:
            bad.append("%s: mean latency %.2f ms, simulator %.2f ms" % (n, ms, mb))
    return bad

rep = json.load(open(sys.argv[1]))
bad = agree(rep, "cfq", "sim")
for b in bad:
    print("FAIL:", b)
if len(sys.argv) > 2:
    print("  negative control: cfq against the simulator's fifo")
    if not agree(rep, "cfq", "sim-fifo"):
        print("FAIL: negative control: cfq agrees with fifo")
        bad.append("negative control")
sys.exit(1 if bad else 0)
EOF2

fails=0
for conf in "$top"/tests/lab/agree-*.conf; do
  name=$(basename "$conf" .conf)
  systems="cfq sim"
  neg=
  if [ "$name" = agree-ssd-weights ]; then
    systems="cfq sim sim-fifo"
    neg=neg
  fi
  echo "== $name"
  BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --no-plots \
    --systems "$systems" --dir "$imgdir" --out "$TESTDIR/$name" "$conf" \
    >"$TESTDIR/$name.log" 2>&1 ||
    { cat "$TESTDIR/$name.log"; fail "cfqlab failed on $name"; }
  "$PYTHON" "$TESTDIR/agree.py" "$TESTDIR/$name/report.json" $neg ||
    fails=$((fails + 1))
done
[ "$fails" = 0 ] || fail "$fails scenario(s) where the server and cfqsim disagree"
echo "== the server and cfqsim agree on shares (10%) and mean latencies (25%)"
