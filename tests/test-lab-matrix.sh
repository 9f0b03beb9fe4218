#!/usr/bin/env bash
# test-lab-matrix.sh: the fairness matrix's driver end to end, small.
# tools/cfqlab --matrix runs one pair of unlike tenants
# (bench/scenarios/matrix/small-large.conf: 4k random reads 16 deep
# against 1 MiB sequential reads 4 deep) on the emulated SSD, one round of
# 2 s runs, with equal and 4:1 weights, through our server with cfq and
# fifo, each tenant alone and both together.  Checked:
#  - matrix.md has the table, a row per weights variant with both systems'
#    fractions and a pass/fail flag;
#  - matrix.json has a cell per weights variant, each with cfq's and
#    fifo's fractions of solo for both tenants, numbers in (0, 1.5], and
#    the solo runs' bytes/s;
#  - the weights reached the server: its own stats (the control socket)
#    give the groups 500/500, and 800/200 in the 4:1 run;
#  - the heat maps are PNGs (when gnuplot is installed).
# Negative control: the same check on a copy of matrix.json with one
# fraction missing must fail.  Nothing here is a speed or a verdict on
# the scheduler: the targets are the matrix's to report, not the test's.
# timeout: 300
. "$(dirname "$0")/functions.sh"
requires_lab
lab_image_dir

out=$TESTDIR/matrix
CFQLAB_LOCK='' "$PYTHON" "$top/tools/cfqlab" --matrix --quiet --pairs small-large \
  --devices ssd --weights 1:1,4:1 --rounds 1 --seconds 2 \
  --matrix-systems "cfq fifo" --dir "$imgdir" --out "$out" \
  >"$TESTDIR/cfqlab.log" 2>&1 || { cat "$TESTDIR/cfqlab.log"; fail "cfqlab --matrix failed"; }
cat "$out/matrix.md"

cat >"$TESTDIR/check.py" <<'EOF2'
import json, os, sys

def check(rep, out):
    bad = []
    cells = {(c["pair"], c["weights"], c["device"]): c for c in rep["cells"]}
    for w, gw in (("1:1", [500, 500]), ("4:1", [800, 200])):
        c = cells.get(("small-large", w, "ssd"))
        if c is None:
            bad.append("no cell for weights %s" % w)
            continue
        if c["tenants"] != ["small", "large"] or c["group_weights"] != gw:
            bad.append("%s: tenants %s weights %s" % (w, c["tenants"], c["group_weights"]))
        for s in ("cfq", "fifo"):
            x = c["systems"].get(s)
            if x is None:
                bad.append("%s: no system %s" % (w, s))
                continue
            for t in c["tenants"]:
                f = x["fraction"].get(t)
                if not isinstance(f, (int, float)) or not 0 < f <= 1.5:
                    bad.append("%s %s %s: fraction %r not in (0, 1.5]" % (w, s, t, f))
        solo = c["solo_bps"].get("nbd") or [{}]
        for t in c["tenants"]:
            v = solo[0].get(t)
            if not isinstance(v, (int, float)) or v <= 0:
                bad.append("%s: solo bytes/s of %s: %r" % (w, t, v))
        if not isinstance(c["pass"], bool):
            bad.append("%s: pass flag %r" % (w, c["pass"]))
        # The server's own view of the weights in the run together.
        st = os.path.join(out, "runs", "ssd", "small-large",
                          "r1-%s-cfq" % w.replace(":", "to"), "stats.json")
        g = {x["name"]: x.get("weight") for x in json.load(open(st))["groups"]}
        if [g.get("small"), g.get("large")] != gw:
            bad.append("%s: the server had weights %s, want %s" % (w, g, gw))
    md = open(os.path.join(out, "matrix.md")).read()
    for w in ("1:1", "4:1"):
        row = [l for l in md.splitlines() if l.startswith("| small-large") and "| %s |" % w in l]
        if len(row) != 1 or "ours " not in row[0] or "fifo " not in row[0] or \
                not ("**pass**" in row[0] or "**FAIL**" in row[0]):
            bad.append("matrix.md: row for %s: %r" % (w, row))
    if os.environ.get("HAVE_GNUPLOT") == "1":
        for f in ("heatmap-1to1.png", "heatmap-4to1.png"):
            p = os.path.join(out, f)
            if not os.path.exists(p) or open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
                bad.append("%s missing or not a PNG" % f)
    return bad

out = sys.argv[1]
rep = json.load(open(os.path.join(out, "matrix.json")))
bad = check(rep, out)
for b in bad:
    print("FAIL:", b)
rep["cells"][0]["systems"]["cfq"]["fraction"]["large"] = None
if not check(rep, out):
    print("FAIL: negative control: a missing fraction passed the check")
    bad.append("negative control")
sys.exit(1 if bad else 0)
EOF2
have=0
command -v gnuplot >/dev/null && have=1
HAVE_GNUPLOT=$have "$PYTHON" "$TESTDIR/check.py" "$out" ||
  fail "the matrix's report is incomplete"
echo "== the matrix's table, JSON and heat maps are written, the weights reach the server"
