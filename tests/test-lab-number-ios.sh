#!/usr/bin/env bash
# test-lab-number-ios.sh: a tenant with a fixed amount of work in the lab
# (tests/lab/number-ios.conf: "work" has number_ios = 100 beside a busy
# tenant on a 2 ms one-channel SSD model), through our server with cfq,
# through cfqsim, and alone (--solo work):
#  - fio really stops after 100 requests: the server's stats count 100
#    requests for the export "work", and so does fio;
#  - the report says when it was done (done_s, from its start to its
#    100th completion): at least 100 x 2 ms, and before its run's end;
#    cfqsim's is on the virtual clock; alone, done_s is at least 0.2 s
#    and the slowdown beside "busy" is done_s over it;
#  - the table has the line "work: 100 requests a connection, done in".
# Robust on a loaded machine: the bounds are the device model's floor and
# the run's end, nothing here is a speed.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_lab
lab_image_dir

out=$TESTDIR/lab
BENCH_LOCK='' "$PYTHON" "$top/tools/cfqlab" --quiet --systems "cfq sim" \
  --solo work --dir "$imgdir" --out "$out" "$top/tests/lab/number-ios.conf" \
  >"$TESTDIR/cfqlab.log" 2>&1 || { cat "$TESTDIR/cfqlab.log"; fail "cfqlab failed"; }
cat "$out/report.txt"

"$PYTHON" - "$out" <<'PY' || fail "the lab's finish time of a number_ios tenant is wrong"
import json, sys
out = sys.argv[1]
rep = json.load(open(out + "/report.json"))
sy = {s["name"]: s for s in rep["systems"]}
bad = []
def ok(cond, msg):
    print(("ok:   " if cond else "FAIL: ") + msg)
    if not cond:
        bad.append(msg)
for n in ("cfq", "sim"):
    ok(sy.get(n, {}).get("status") == "ok", "system %s ran" % n)
if bad:
    sys.exit(1)
rnd = sy["cfq"]["raw_rounds"][0]
srv = rnd["server_stats"]["exports"]
ok(srv["work"]["requests"] == 100,
   "the server counted %s requests for work == 100" % srv["work"]["requests"])
ok(rnd["tenants"]["work"]["ios"] == 100,
   "fio did %s requests for work == 100" % rnd["tenants"]["work"]["ios"])
# work runs from 1 s to the end: 3 s at most.
for n in ("cfq", "sim"):
    d = sy[n]["tenants"]["work"].get("done_s")
    ok(d is not None and 0.2 <= d <= 3.0, "%s: work done in %s s, in 0.2..3" % (n, d))
    ok(sy[n]["tenants"]["busy"].get("done_s") is None, "%s: busy has no done_s" % n)
alone = (rep["solo"].get("work") or {}).get("done_s")
ok(alone is not None and 0.2 <= alone <= 3.0, "alone: work done in %s s, in 0.2..3" % alone)
x = sy["cfq"]["tenants"]["work"]
if alone and x.get("done_s"):
    ok(abs(x.get("done_slowdown", 0) - x["done_s"] / alone) < 1e-9,
       "cfq: slowdown %s == %s / %s" % (x.get("done_slowdown"), x["done_s"], alone))
txt = open(out + "/report.txt").read()
ok(txt.count("work: 100 requests a connection, done in ") == 2,
   "the table says when work was done, for cfq and sim")
sys.exit(1 if bad else 0)
PY
echo "== a number_ios tenant stops after its requests, and the lab says when"
