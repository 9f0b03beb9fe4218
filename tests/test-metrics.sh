#!/usr/bin/env bash
# test-metrics.sh: live metrics in Prometheus's text format, for tenants
# (exports) and groups: `cfqctl metrics` on the control socket, and
# metrics=FILE rewritten every second for node_exporter's textfile
# collector.
#  - Both parse as the exposition format (HELP and TYPE before a family's
#    samples, metric and label names, escaped label values, float values,
#    no blank line, a summary's quantiles with _sum and _count); a
#    truncated copy must not (negative control).
#  - The numbers are the server's: weights from the config, the weight
#    share over the groups that moved data (100:400 while medium is idle),
#    measured shares summing to 1, requests counted by operation, the
#    latency summary's count equal to the requests; the cost model of the
#    emulated device (nbdkit_cfq_cost_*: its six figures as the device
#    model gives them, depth, source, vrate and errors, windows of busy
#    time measured under load).
#  - A live weight change shows at once (cfqctl) and in the file within
#    two seconds.
#  - The file is replaced whole: 300 reads while it is rewritten all parse
#    completely, and no PATH.tmp is left after the server stops.
#  - A metrics file that cannot be written is reported in the log, once,
#    and the server keeps serving.
#  - A symlink at PATH.tmp is not followed (it would let whoever can write
#    the directory aim the server's writes at any file).
#  - The file is 0600 (it names every tenant), and what may be at PATH at
#    start-up follows stats='s rule: another user's file, a file with a
#    second hard link or a symlink there makes nbdkit refuse to start,
#    naming the reason, and is left alone.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_fio_nbd

make_sparse "$TESTDIR/disk.img" 1G
cat >"$TESTDIR/m.conf" <<EOF
[device]
file = disk.img
emulate = ssd
mode = iops
model.channels = 1
model.read = 2ms
model.write = 2ms

[scheduler]
slice_idle = 0

[group small]
weight = 100
[group medium]
weight = 200
[group "large"]
weight = 400

[export small]
group = small
size = 256M
[export medium]
group = medium
offset = 256M
size = 256M
[export "large disk"]
group = large
offset = 512M
size = 256M
EOF

cat >"$TESTDIR/prom.py" <<'EOF'
"""Parse Prometheus's text exposition format strictly: {(name, labels): value},
{family: type}; raises ValueError on anything malformed."""
import re, sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"

def parse_labels(s):
    out = {}
    i = 0
    while i < len(s):
        m = re.match(r"(%s)=\"" % LABEL, s[i:])
        if not m:
            raise ValueError("bad label at %r" % s[i:])
        k = m.group(1)
        i += m.end()
        v = ""
        while True:
            if i >= len(s):
                raise ValueError("unterminated label value")
            c = s[i]
            if c == "\\":
                n = s[i + 1]
                if n not in "\\\"n":
                    raise ValueError("bad escape \\%s" % n)
                v += {"n": "\n"}.get(n, n)
                i += 2
            elif c == "\"":
                i += 1
                break
            elif c == "\n":
                raise ValueError("newline in label value")
            else:
                v += c
                i += 1
        out[k] = v
        if i < len(s):
            if s[i] != ",":
                raise ValueError("expected , at %r" % s[i:])
            i += 1
    return out

def parse(text):
    if not text.endswith("\n"):
        raise ValueError("does not end with a newline")
    types, helps, samples = {}, {}, {}
    for ln, line in enumerate(text.split("\n")[:-1], 1):
        if not line:
            raise ValueError("line %d: blank line" % ln)
        m = re.fullmatch(r"# (HELP|TYPE) (%s) (.+)" % NAME, line)
        if m:
            if m.group(1) == "TYPE":
                if m.group(3) not in ("gauge", "counter", "summary", "histogram", "untyped"):
                    raise ValueError("line %d: type %s" % (ln, m.group(3)))
                if m.group(2) in types:
                    raise ValueError("line %d: second TYPE for %s" % (ln, m.group(2)))
                types[m.group(2)] = m.group(3)
            else:
                helps[m.group(2)] = m.group(3)
            continue
        if line.startswith("#"):
            raise ValueError("line %d: bad comment %r" % (ln, line))
        m = re.fullmatch(r"(%s)(?:\{(.*)\})? (\S+)" % NAME, line)
        if not m:
            raise ValueError("line %d: bad sample %r" % (ln, line))
        name, labels, value = m.group(1), parse_labels(m.group(2) or ""), float(m.group(3))
        fam = re.sub(r"_(sum|count)$", "", name) if re.sub(r"_(sum|count)$", "", name) in types else name
        if fam not in types:
            raise ValueError("line %d: %s before its TYPE" % (ln, name))
        if types[fam] == "summary" and name == fam and "quantile" not in labels:
            raise ValueError("line %d: summary sample without quantile" % ln)
        key = (name, tuple(sorted(labels.items())))
        if key in samples:
            raise ValueError("line %d: duplicate sample %s" % (ln, key))
        samples[key] = value
    for f in types:
        if f not in helps:
            raise ValueError("no HELP for %s" % f)
        if types[f] == "summary":
            for suf in ("_sum", "_count"):
                if not any(k[0] == f + suf for k in samples):
                    raise ValueError("summary %s has no %s" % (f, suf))
    return samples, types

def get(samples, name, **labels):
    want = tuple(sorted(labels.items()))
    return samples[(name, want)]

if __name__ == "__main__":
    parse(open(sys.argv[1]).read())
EOF

tenant_start srv "$TESTDIR/m.conf" metrics="$TESTDIR/m/cfq.prom"
# metrics= in a directory that does not exist yet: the writer reports
# it; once the directory exists the next second's file appears.
sleep 2
mkdir -p "$TESTDIR/m"
wait_for "metrics file" 10 test -s "$TESTDIR/m/cfq.prom"

{
  printf '[global]\nioengine=nbd\nrw=randread\nbs=4k\niodepth=16\ntime_based=1\nruntime=6\n'
  printf '[small]\nuri=%s\n' "$(export_uri srv small)"
  printf '[large]\nuri=%s\n' "nbd+unix:///large%20disk?socket=${NBDKIT_SOCK[srv]}"
} >"$TESTDIR/m.fio"
fio_start "$TESTDIR/m.fio"
sleep 3
ctl srv metrics >"$TESTDIR/ctl1.prom" || fail "cfqctl metrics failed"
ctl srv weight small 800 >/dev/null || fail "weight failed"
ctl srv metrics >"$TESTDIR/ctl2.prom" || fail "cfqctl metrics failed"
# Read the file while the server rewrites it, every 10 ms for 3 s.
"$PYTHON" - "$TESTDIR" <<'EOF' || fail "a read of the metrics file was not a whole file"
import os, sys, time
sys.path.insert(0, sys.argv[1])
from prom import parse
p = sys.argv[1] + "/m/cfq.prom"
seen, n = set(), 0
while n < 300:
    with open(p) as f:
        t = f.read()
    parse(t)
    seen.add(t)
    n += 1
    time.sleep(0.01)
print("%d reads, %d versions" % (n, len(seen)))
assert len(seen) >= 2, "the file was not rewritten"
EOF
cp "$TESTDIR/m/cfq.prom" "$TESTDIR/file.prom"
fio_wait

"$PYTHON" - "$TESTDIR" <<'EOF' || fail "the metrics are not the server's numbers"
import sys
sys.path.insert(0, sys.argv[1])
from prom import parse, get
d = sys.argv[1]
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
        print("FAIL:", what)

s, types = parse(open(d + "/ctl1.prom").read())
check(types["nbdkit_cfq_group_latency_seconds"] == "summary", "latency is a summary")
check(types["nbdkit_cfq_export_requests_total"] == "counter", "requests are a counter")
check(get(s, "nbdkit_cfq_info", scheduler="cfq", mode="iops", emulate="ssd") == 1, "info")
w = {g: get(s, "nbdkit_cfq_group_weight", group=g) for g in ("small", "medium", "large")}
check(w == {"small": 100, "medium": 200, "large": 400}, "weights %r" % w)
ws = {g: get(s, "nbdkit_cfq_group_weight_share", group=g) for g in w}
# medium moves nothing: the weight shares are over small and large.
check(abs(ws["small"] - 0.2) < 1e-6 and abs(ws["large"] - 0.8) < 1e-6 and ws["medium"] == 0,
      "weight shares %r" % ws)
sh = {g: get(s, "nbdkit_cfq_group_share", group=g) for g in w}
check(abs(sum(sh.values()) - 1) < 0.01, "shares sum to %r" % sum(sh.values()))
check(sh["large"] > sh["small"], "large moves more than small: %r" % sh)
for e, g in (("small", "small"), ("large disk", "large")):
    r = get(s, "nbdkit_cfq_export_requests_total", export=e, group=g, op="read")
    c = get(s, "nbdkit_cfq_export_latency_seconds_count", export=e, group=g)
    check(r > 0, "%s served reads" % e)
    check(c == r, "%s latency count %r = reads %r" % (e, c, r))
    check(get(s, "nbdkit_cfq_export_connections", export=e, group=g) == 1, "%s connections" % e)
    check(get(s, "nbdkit_cfq_export_iops", export=e, group=g) > 0, "%s iops" % e)
    q = [get(s, "nbdkit_cfq_export_latency_seconds", export=e, group=g, quantile=x)
         for x in ("0.5", "0.99", "0.999")]
    check(0 < q[0] <= q[1] <= q[2], "%s quantiles %r" % (e, q))
check(get(s, "nbdkit_cfq_export_requests_total", export="medium", group="medium", op="read") == 0,
      "medium is idle")
ews = get(s, "nbdkit_cfq_export_weight_share", export="large disk", group="large")
check(abs(ews - 0.8) < 1e-6, "export weight share %r" % ews)
# The cost model, from the device model (one channel, 2 ms a 4k request):
# its figures, where they come from, and its online correction.
for k, t in (("nbdkit_cfq_cost_vrate", "gauge"), ("nbdkit_cfq_cost_error_ratio", "gauge"),
             ("nbdkit_cfq_cost_error_max_ratio", "gauge"), ("nbdkit_cfq_cost_model", "gauge"),
             ("nbdkit_cfq_cost_depth", "gauge"), ("nbdkit_cfq_cost_windows_total", "counter"),
             ("nbdkit_cfq_cost_predicted_seconds_total", "counter")):
    check(types.get(k) == t, "%s is a %s: %r" % (k, t, types.get(k)))
check(get(s, "nbdkit_cfq_cost_info", source="device model") == 1, "cost model from the device model")
fig = {f: get(s, "nbdkit_cfq_cost_model", figure=f)
       for f in ("rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops")}
check(480 <= fig["rrandiops"] <= 500 and fig["rrandiops"] == fig["wrandiops"]
      == fig["rseqiops"] == fig["wseqiops"], "4k requests/s of a 2 ms channel: %r" % fig)
check(fig["rbps"] == fig["wbps"] > 0, "bytes/s %r" % fig)
check(get(s, "nbdkit_cfq_cost_depth") == 1, "depth: one channel")
vr = get(s, "nbdkit_cfq_cost_vrate")
check(0.25 <= vr <= 4, "vrate %r" % vr)
check(get(s, "nbdkit_cfq_cost_windows_total") > 0, "windows of busy time measured under load")
check(get(s, "nbdkit_cfq_cost_error_max_ratio") >= abs(get(s, "nbdkit_cfq_cost_error_ratio")) - 1e-9,
      "the largest error is at least the last")
check(get(s, "nbdkit_cfq_cost_predicted_seconds_total") > 0, "device time predicted")
# The live weight change, at once on the socket and within 2 s in the file.
s2, _ = parse(open(d + "/ctl2.prom").read())
check(get(s2, "nbdkit_cfq_group_weight", group="small") == 800, "weight 800 on the socket")
s3, _ = parse(open(d + "/file.prom").read())
check(get(s3, "nbdkit_cfq_group_weight", group="small") == 800, "weight 800 in the file")
# Negative control: a cut copy does not parse.
t = open(d + "/ctl1.prom").read()
for cut in (t[:-7], t.replace("\n# TYPE nbdkit_cfq_group_iops gauge", ""), t + "\n"):
    try:
        parse(cut)
        check(False, "negative control: a broken text parsed")
    except (ValueError, KeyError, IndexError):
        pass
sys.exit(1 if bad else 0)
EOF
grep -q "cfq: metrics=.*No such file or directory" "$TESTDIR/srv.log" ||
  fail "the unwritable metrics file was not reported"
[ "$(grep -c 'cfq: metrics=' "$TESTDIR/srv.log")" = 1 ] ||
  fail "the metrics error was reported more than once"
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"
[ ! -e "$TESTDIR/m/cfq.prom.tmp" ] || fail "cfq.prom.tmp left behind"
"$PYTHON" "$TESTDIR/prom.py" "$TESTDIR/m/cfq.prom" || fail "the last file does not parse"
# A symlink where the writer puts its next version (PATH.tmp) is never
# written through: the file it points to stays as it was, and the
# metrics file is still written, as a regular file.
mkdir -p "$TESTDIR/m2"
echo "not metrics" >"$TESTDIR/victim"
ln -s "$TESTDIR/victim" "$TESTDIR/m2/cfq.prom.tmp"
tenant_start srv2 "$TESTDIR/m.conf" metrics="$TESTDIR/m2/cfq.prom"
wait_for "metrics file beside a symlinked PATH.tmp" 10 test -s "$TESTDIR/m2/cfq.prom"
stop_nbdkit srv2
[ "$(cat "$TESTDIR/victim")" = "not metrics" ] ||
  fail "metrics= wrote through the symlink PATH.tmp"
[ -f "$TESTDIR/m2/cfq.prom" ] && [ ! -L "$TESTDIR/m2/cfq.prom" ] ||
  fail "the metrics file is not a regular file"
"$PYTHON" "$TESTDIR/prom.py" "$TESTDIR/m2/cfq.prom" || fail "the file written beside the symlink does not parse"
[ "$(stat -c %a "$TESTDIR/m2/cfq.prom")" = 600 ] ||
  fail "the metrics file has mode $(stat -c %a "$TESTDIR/m2/cfq.prom"), want 600"
# must_refuse PATH WHY-REGEX: nbdkit with metrics=PATH exits at once with
# an error that matches.
must_refuse ()
{
  local rc=0
  timeout 60 nbdkit -f -U "$TESTDIR/mr.sock" "$CFQ_PLUGIN" config="$TESTDIR/m.conf" \
    metrics="$1" >"$TESTDIR/mr.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "metrics=$1 was accepted"
  grep -qE "$2" "$TESTDIR/mr.out" || fail "no error matching '$2': $(cat "$TESTDIR/mr.out")"
}
mkdir -m 1777 "$TESTDIR/sticky"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  echo "theirs" >"$TESTDIR/sticky/other.prom"
  chmod 0666 "$TESTDIR/sticky/other.prom"
  chown nobody "$TESTDIR/sticky/other.prom"
  must_refuse "$TESTDIR/sticky/other.prom" \
    "metrics=.*other.prom: owned by uid $(id -u nobody), not by the server's user"
  [ "$(cat "$TESTDIR/sticky/other.prom")" = theirs ] || fail "another user's metrics file was changed"
else
  echo "another user's file: skipped (needs root and the user nobody)"
fi
ln "$TESTDIR/victim" "$TESTDIR/sticky/linked.prom"
must_refuse "$TESTDIR/sticky/linked.prom" "metrics=.*linked.prom: has 2 hard links"
ln -s "$TESTDIR/victim" "$TESTDIR/sticky/sym.prom"
must_refuse "$TESTDIR/sticky/sym.prom" "metrics=.*sym.prom: is a symbolic link"
[ "$(cat "$TESTDIR/victim")" = "not metrics" ] || fail "a linked file was changed"
echo "== metrics: the socket and the file, Prometheus text, the server's numbers"
