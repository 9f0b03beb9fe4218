#!/usr/bin/env bash
# test-lab-qos.sh: the fairness lab shows caps and reservations.
#  - What a tenant should get ("want"): the reservations first, then the
#    weights share what is left with nobody above its cap (core/qos.c's
#    rules), checked on tools/cfqlab's own functions with the numbers of
#    bench/scenarios/caps-reservations.conf: on 1000 requests/s, capped
#    (weight 400, iops_max 150) 150, reserved (weight 100, iops_min 300)
#    300 + 550/9, bulk (weight 800) the rest; without limits the weights
#    alone (4:1:8); reservations above the capacity share it in proportion.
#  - The windows' verdicts: a cap within 5% in every window, a
#    reservation at 98% or more in 98% of them; one window 7% over the cap,
#    or two of fifty under the reservation, fail (negative controls).
#  - End to end on that scenario (6 s): cfqsim and our server with cfq
#    each report a "qos" entry per limit, with the windows' rates; the
#    simulator (deterministic) meets both targets; fifo, which the server
#    refuses with caps, is skipped with the reason, not failed; the table
#    prints the qos lines.
# Robust on a loaded machine: the server's numbers are checked for their
# shape only (the cap's precision is test-tenant-caps.sh's and bench's).
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_lab
scn=$top/bench/scenarios/caps-reservations.conf

# The lab's arithmetic, on its own functions.
"$PYTHON" - "$top/tools/cfqlab" "$scn" <<'EOF' || fail "the lab's caps and reservations arithmetic"
import importlib.machinery, importlib.util, sys
ld = importlib.machinery.SourceFileLoader("cfqlab", sys.argv[1])
spec = importlib.util.spec_from_loader("cfqlab", ld)
lab = importlib.util.module_from_spec(spec)
ld.exec_module(lab)
bad = []
def near(a, b, what):
    if abs(a - b) > 1e-6 * max(1, abs(b)):
        bad.append("%s: %r, want %r" % (what, a, b))
        print("FAIL:", bad[-1])

scn = lab.Scenario(sys.argv[2], lab.Tools(None), [], None, None, None)
w = {g: scn.groups[g]["weight"] for g in scn.groups}
ts = scn.tenants
for unit in ("ios", "bytes"):
    cap = 1000.0 if unit == "ios" else 1000.0 * 4096
    e = lab.expected_shares(scn, ts, w, cap, {}, unit)
    near(e["capped"], 0.150, unit + ": capped's want")
    near(e["reserved"], (300 + 550 / 9) / 1000, unit + ": reserved's want")
    near(e["bulk"], (550 * 8 / 9) / 1000, unit + ": bulk's want")
# The limits the lab knows come from core's key table through cfqconf.
kinds = {q["name"]: (q["kind"], q["unit"], q["dir"]) for q in scn.qos_keys}
want = {"iops_max": ("cap", "ios", None), "read_iops_max": ("cap", "ios", "read"),
        "write_iops_max": ("cap", "ios", "write"), "bps_max": ("cap", "bytes", None),
        "read_bps_max": ("cap", "bytes", "read"), "write_bps_max": ("cap", "bytes", "write"),
        "iops_min": ("reservation", "ios", None), "bps_min": ("reservation", "bytes", None)}
if kinds != want:
    bad.append("qos_keys: %r, want %r" % (kinds, want))
    print("FAIL:", bad[-1])
# Without the limits: the weights alone.
for g in scn.groups.values():
    for q in scn.qos_keys:
        g.pop(q["name"], None)
e = lab.expected_shares(scn, ts, w, 1000.0, {}, "ios")
near(e["capped"], 4 / 13, "no limits: capped")
near(e["reserved"], 1 / 13, "no limits: reserved")
# Reservations above the capacity: shared in proportion to them.
scn.groups["reserved"]["iops_min"] = 900
scn.groups["bulk"]["iops_min"] = 300
e = lab.expected_shares(scn, ts, w, 600.0, {}, "ios")
near(e["reserved"], 0.75, "overbooked: reserved")
near(e["bulk"], 0.25, "overbooked: bulk")
# A reservation a tenant does not ask for is no floor: a think time
# limits it to 100/s, the rest goes by weight.
scn.groups["bulk"].pop("iops_min")
scn.groups["reserved"]["iops_min"] = 300
e = lab.expected_shares(scn, ts, w, 1000.0, {"reserved": 100.0}, "ios")
near(e["reserved"], 0.1, "reservation above the demand")

# The verdicts, and their negative controls.
def summ(kind, limit, rates):
    return lab.qos_summary([{"group": "g", "key": "iops_max" if kind == "cap" else "iops_min",
                             "kind": kind, "limit": limit, "unit": "ios", "rates": rates}])
for kind, lim, rates, want in (
        ("cap", 150, [150, 143, 157, 150], True),
        ("cap", 150, [150, 150, 161, 150], False),      # 7% over
        ("cap", 150, [150, 150, 100, 150], False),      # a third under
        ("reservation", 300, [300] * 49 + [250], True),  # 98%
        ("reservation", 300, [300] * 48 + [250] * 2, False),
        ("reservation", 300, [], False)):
    s = summ(kind, lim, rates)
    if s["met"] != want:
        bad.append("%s %s on %r: met=%s" % (kind, lim, rates, s["met"]))
        print("FAIL:", bad[-1])
sys.exit(1 if bad else 0)
EOF

lab_image_dir
out=$TESTDIR/lab
BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --no-plots --duration 6s \
  --systems "cfq fifo sim" --dir "$imgdir" --out "$out" "$scn" \
  >"$TESTDIR/cfqlab.log" 2>&1 || { cat "$TESTDIR/cfqlab.log"; fail "cfqlab failed"; }
cat "$out/report.txt"
"$PYTHON" - "$out/report.json" <<'EOF' || fail "the lab's report of caps and reservations"
import json, sys
rep = json.load(open(sys.argv[1]))
sy = {s["name"]: s for s in rep["systems"]}
bad = []
def check(c, what):
    if not c:
        bad.append(what)
        print("FAIL:", what)
check(sy["fifo"]["status"] == "skipped" and "need scheduler = cfq" in sy["fifo"]["why"],
      "fifo skipped with the reason: %r" % sy["fifo"])
for n in ("cfq", "sim"):
    check(sy[n]["status"] == "ok", "%s ran: %s" % (n, sy[n].get("why")))
    if sy[n]["status"] != "ok":
        continue
    q = {(x["group"], x["key"]): x for x in sy[n]["qos"]}
    check(set(q) == {("capped", "iops_max"), ("reserved", "iops_min")},
          "%s: qos entries %r" % (n, sorted(q)))
    for x in q.values():
        check(x["windows"] >= 3 and x["median"] > 0,
              "%s: %s %s windows" % (n, x["group"], x["key"]))
        # The windows (of every run) hold the tenant's requests: no more
        # than it did.
        done = sum(r["tenants"][x["group"]]["ios"] for r in sy[n]["raw_rounds"])
        check(x["min"] * x["windows"] <= done,
              "%s: %s's windows within its requests" % (n, x["group"]))
    if n == "sim":
        for x in q.values():
            check(x["met"], "sim: %s %s met (%r)" % (x["group"], x["key"], x))
txt = open(sys.argv[1].replace("report.json", "report.txt")).read()
check(txt.count(" qos ") == 4, "the table's qos lines")
sys.exit(1 if bad else 0)
EOF
echo "== the lab shows caps and reservations"
