#!/usr/bin/env bash
# test-lab-plots.sh: tools/cfqlab's plots and options, without running a
# scenario: make_plots on a made-up report of a 5 s run whose series has
# 7 one-second bins, where a tenant's weight share is 0.8 and the most
# any share reaches.
#  - shares.png's x axis ends at the run's 5 s, and each panel's y axis
#    ends above 0.8, so the weight-share line is not on the frame;
#  - latency.png is the tail on log axes (fraction slower, 1 - CDF), with
#    a tenant whose p99.9 is five times the other's apart by decades;
#  - no title mentions cfqsim when no simulator ran, and one does when it
#    did; the text is not gnuplot's enhanced text (group_lag stays as it
#    is written);
#  - --help has text for every option, with the defaults of --rounds and
#    --share-unit; results go under --dir, not the checkout, by default.
# timeout: 60
. "$(dirname "$0")/functions.sh"
command -v gnuplot >/dev/null || skip "no gnuplot"

cat >"$TESTDIR/plots.py" <<'EOF'
import importlib.machinery, importlib.util, os, re, sys
sys.dont_write_bytecode = True  # nothing written into the checkout
top, out, sim = sys.argv[1], sys.argv[2], sys.argv[3] == "sim"
loader = importlib.machinery.SourceFileLoader("cfqlab", top + "/tools/cfqlab")
spec = importlib.util.spec_from_loader("cfqlab", loader)
lab = importlib.util.module_from_spec(spec)
loader.exec_module(lab)

def bins(p50_ns, tail_ns):
    """fio-style histogram: 99.8% at p50, 0.2% at tail."""
    return {p50_ns: 9980, tail_ns: 20}

def system(name, kind):
    label = "cfqsim, scheduler=cfq" if kind == "sim" else "our server, cfq"
    return {"name": name, "kind": kind, "label": label + ", group_lag=16",
            "status": "ok",
            "series": {"t": list(range(7)),
                       "measured": {"gold": [0.8, 0.78, 0.8, 0.79, 0.8, 0.5, 0.0],
                                    "bronze": [0.2, 0.22, 0.2, 0.21, 0.2, 0.5, 1e-9]},
                       "expected": {"gold": [0.8] * 7, "bronze": [0.2] * 7}},
            "tenants": {"gold": {"bins": bins(2000000, 60000000)},
                        "bronze": {"bins": bins(2000000, 300000000)}}}

rep = {"scenario": {"duration_s": 5, "share_unit": "bytes",
                    "tenants": [{"name": "gold"}, {"name": "bronze"}]},
       "systems": [system("cfq", "ours")] + ([system("sim", "sim")] if sim else [])}
os.makedirs(out, exist_ok=True)
plots = lab.make_plots(out, rep)
assert plots == ["shares.png", "latency.png"], plots
bad = []
sh = open(os.path.join(out, "plot-data", "shares.gp")).read()
la = open(os.path.join(out, "plot-data", "latency.gp")).read()
if "set xrange [0:5]" not in sh:
    bad.append("shares: x axis not cut to the 5 s run: %s" % re.findall(r"set xrange.*", sh))
tops = [float(x) for x in re.findall(r"set yrange \[0:([0-9.]+)\]", sh)]
if len(tops) != len(rep["systems"]) or not all(0.8 * 1.05 <= t <= 1.05 for t in tops):
    bad.append("shares: y axis tops %s, want above 0.84 and at most 1.05, one a panel" % tops)
for name, gp in (("shares", sh), ("latency", la)):
    if "noenhanced" not in gp:
        bad.append("%s: enhanced text (underscores become subscripts)" % name)
    if ("cfqsim" in gp) != sim:
        bad.append("%s: cfqsim %s in the script, with %s" % (
            name, "named" if "cfqsim" in gp else "not named", "sim" if sim else "no sim"))
if "set logscale y" not in la or "fraction slower" not in la:
    bad.append("latency: not a tail on a log axis")
# The data: P(X >= x); the tails a decade below 1% apart.
pts = {}
for t in ("gold", "bronze"):
    with open(os.path.join(out, "plot-data", "ccdf-cfq-%s.dat" % t)) as f:
        pts[t] = [tuple(map(float, l.split())) for l in f]
if pts["gold"] != [(2.0, 1.0), (60.0, 0.002)] or pts["bronze"] != [(2.0, 1.0), (300.0, 0.002)]:
    bad.append("latency data: %s" % pts)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
"$PYTHON" "$TESTDIR/plots.py" "$top" "$TESTDIR/nosim" nosim || fail "plots without cfqsim"
"$PYTHON" "$TESTDIR/plots.py" "$top" "$TESTDIR/sim" sim || fail "plots with cfqsim"
echo "plots: x cut to the run, y padded, log tail, titles as written, cfqsim only when run"

# Every option has help text; the defaults of --rounds and --share-unit.
"$PYTHON" "$top/tools/cfqlab" --help >"$TESTDIR/help" || fail "cfqlab --help"
"$PYTHON" - "$TESTDIR/help" <<'EOF' || fail "cfqlab --help"
import re, sys
text = open(sys.argv[1]).read()
opts = text[text.index("options:"):]
bad = []
# An option line: "  --name ARG   help" or "  --name ARG" then an indented line.
lines = opts.splitlines()[1:]
for i, l in enumerate(lines):
    m = re.match(r"  (-\S+(?:, --\S+)?(?: \S+)?)(\s{2,}\S.*)?$", l)
    if not m:
        continue
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if not m.group(2) and not re.match(r"\s{10,}\S", nxt):
        bad.append(m.group(1))
for want in ("--rounds N +rounds.*\n.*\(default 1\)", "--share-unit.*\n.*\n.*\(default bytes\)"):
    if not re.search(want, opts):
        bad.append("no match for %r" % want)
for b in bad:
    print("FAIL: --help:", b)
sys.exit(1 if bad else 0)
EOF
grep -q "default DIR/cfqlab/NAME-DATE" "$TESTDIR/help" || fail "--out default not under --dir"
grep -q 'os.path.join(args.dir, "cfqlab"' "$top/tools/cfqlab" ||
  fail "the results' default directory is not under --dir"
echo "== cfqlab's plots show the run, its tails and its names; --help explains every option"
