#!/usr/bin/env bash
# test-lab.sh: the fairness lab end to end.  tools/cfqlab runs
# tests/lab/smoke.conf (three weighted tenants on an emulated one-channel
# SSD, a live weight change at 3 s) through our server with cfq and
# through cfqsim, and its report is checked against what the server itself
# counted (the control socket's "stats", which cfqlab keeps next to the
# clients' numbers):
#  - per tenant, the bytes and requests fio saw are the server's for its
#    export (within 2%), and fio's mean latency is the server's plus at
#    most the NBD round trip;
#  - the one-second series add up to the same bytes (within 1%);
#  - the event was applied: the server ends with the new weight;
#  - the shares follow the weights (Jain >= 0.95 on the steady bins; fifo
#    would give 0.78 before the event);
#  - the table, report.json, shares.png and latency.png are written.
# Negative control: the same check on the report with two tenants' server
# numbers swapped must fail.
#
# Robust on a loaded machine: the modelled device (about 500 IOPS) is the
# bottleneck, and nothing here is a speed.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_lab
lab_image_dir

out=$TESTDIR/lab
BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --systems "cfq sim" \
  --dir "$imgdir" --out "$out" "$top/tests/lab/smoke.conf" \
  >"$TESTDIR/cfqlab.log" 2>&1 || { cat "$TESTDIR/cfqlab.log"; fail "cfqlab failed"; }
cat "$out/report.txt"

cat >"$TESTDIR/check.py" <<'EOF'
import json, os, sys

def check(rep, swap=False):
    """Errors of the report REP against the server's own stats."""
    bad = []
    sy = {s["name"]: s for s in rep["systems"]}
    for n in ("cfq", "sim"):
        if sy.get(n, {}).get("status") != "ok":
            bad.append("system %s: %s" % (n, sy.get(n, {}).get("why")))
    if bad:
        return bad
    cfq = sy["cfq"]
    rnd = cfq["raw_rounds"][0]
    srv = dict(rnd["server_stats"]["exports"])
    if swap:
        srv["small"], srv["large"] = srv["large"], srv["small"]
    for t in rep["scenario"]["tenants"]:
        name, e = t["name"], t["export"]
        x, s = rnd["tenants"][name], srv[e]
        rel = abs(x["bytes"] - s["bytes"]) / max(1, s["bytes"])
        if rel > 0.02:
            bad.append("%s: fio %d bytes, server %d (%.1f%% apart)"
                       % (name, x["bytes"], s["bytes"], 100 * rel))
        rel = abs(x["ios"] - s["requests"]) / max(1, s["requests"])
        if rel > 0.02:
            bad.append("%s: fio %d requests, server %d" % (name, x["ios"], s["requests"]))
        fm, sm = x["lat_ms"]["mean"], s["lat_ms"]["mean_ms"]
        if not (sm * 0.98 <= fm <= sm * 1.25 + 5):
            bad.append("%s: fio's mean latency %.2f ms, the server's %.2f ms"
                       % (name, fm, sm))
    # The series add up to the totals.
    se = cfq["series"]
    if se["unit"] != "bytes":
        bad.append("series unit %s" % se["unit"])
    # The event: applied, and the server ends with the new weight.
    evs = rnd.get("events") or []
    if not evs or evs[0]["answer"] != "ok" or evs[0]["command"] != "weight small 400":
        bad.append("event not applied: %r" % evs)
    g = rnd["server_stats"]["groups"]
    if g["small"]["weight"] != 400:
        bad.append("group small ends with weight %s, want 400" % g["small"]["weight"])
    if cfq["jain"] is None or cfq["jain"] < 0.95:
        bad.append("Jain %s < 0.95" % cfq["jain"])
    if sy["sim"]["jain"] is None or sy["sim"]["jain"] < 0.95:
        bad.append("sim Jain %s < 0.95" % sy["sim"]["jain"])
    return bad

out = sys.argv[1]
rep = json.load(open(os.path.join(out, "report.json")))
bad = check(rep)
for b in bad:
    print("FAIL:", b)
if not check(rep, swap=True):
    print("FAIL: negative control: swapped server numbers passed the check")
    bad.append("negative control")
for f in ("report.txt", "report.json"):
    if not os.path.getsize(os.path.join(out, f)):
        bad.append("%s is empty" % f)
if os.environ.get("HAVE_GNUPLOT") == "1":
    for f in ("shares.png", "latency.png"):
        p = os.path.join(out, f)
        if not os.path.exists(p) or os.path.getsize(p) < 1000:
            bad.append("%s missing" % f)
        elif open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            bad.append("%s is not a PNG" % f)
sys.exit(1 if bad else 0)
EOF
have=0
command -v gnuplot >/dev/null && have=1
HAVE_GNUPLOT=$have "$PYTHON" "$TESTDIR/check.py" "$out" ||
  fail "the lab's report disagrees with the server's own stats"

# The one-second series add up to fio's bytes (the lab bins each request
# fio logged; with fio's one-second averages they were up to 9% short).
"$PYTHON" - "$out" <<'EOF' || fail "the series do not add up"
import json, sys
rep = json.load(open(sys.argv[1] + "/report.json"))
cfq = [s for s in rep["systems"] if s["name"] == "cfq"][0]
rnd = cfq["raw_rounds"][0]
# series holds shares; the totals per bin times the shares are the bytes.
se = cfq["series"]
tot = sum(se["total"])
got = sum(rnd["tenants"][t]["bytes"] for t in rnd["tenants"])
rel = abs(tot - got) / got
print("series total %.0f bytes, fio %d (%.1f%% apart)" % (tot, got, 100 * rel))
sys.exit(0 if rel <= 0.01 else 1)
EOF
echo "== the lab's report matches the server's stats"
