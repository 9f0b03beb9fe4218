#!/usr/bin/env bash
# test-stats.sh: the statistics the control socket and stats=FILE give.
#
#  1. a known mix of requests (reads, writes, trims, zeroes, flushes, of
#     known sizes) on one export: "stats" is one line of JSON with
#     "device", "groups", "exports" and "connections"; every group and
#     export has iops, mibs, avg_iops, avg_mibs, reqs and bytes by type and
#     p50/p99/p999/max latency; the export's and its group's counts are
#     exactly the requests sent, the idle export's are zero;
#  2. CFQ's cost model is in the JSON per device (source, the six figures,
#     depth, vrate, errors, windows, predicted time) and the same numbers
#     in the metrics (nbdkit_cfq_cost_*);
#  3. "stats flat" has a group, an export and a device record with the
#     promised keys; cfqctl stats -c 2 -i 1 prints the table twice;
#  4. "reset" zeroes the counters (the next requests count from 0);
#  5. stats=FILE is written at exit, parses, and counts what was sent after
#     the reset.
# timeout: 180
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd

make_sparse "$TESTDIR/disk.img" 64M
cat >"$TESTDIR/st.conf" <<'EOF'
[device]
file = disk.img

[group busy]
weight = 300
[group spare]
weight = 700

[export work]
group = busy
size = 32M
[export rest]
group = spare
offset = 32M
EOF
tenant_start srv "$TESTDIR/st.conf" stats="$TESTDIR/final.json"

# send N_READ N_WRITE N_TRIM N_ZERO N_FLUSH: on export "work", reads of
# 8 KiB, writes of 4 KiB, trims and zeroes of 64 KiB.
send ()
{
  "$PYTHON" - "${NBDKIT_SOCK[srv]}" "$@" <<'EOF'
import sys
import nbd
sock = sys.argv[1]
nr, nw, nt, nz, nf = map(int, sys.argv[2:7])
h = nbd.NBD()
h.set_export_name("work")
h.connect_unix(sock)
for i in range(nw):
    h.pwrite(b"w" * 4096, i * 4096)
for i in range(nr):
    h.pread(8192, i * 8192)
for i in range(nt):
    h.trim(65536, (1 << 20) + i * 65536)
for i in range(nz):
    h.zero(65536, (2 << 20) + i * 65536, nbd.CMD_FLAG_NO_HOLE)
for i in range(nf):
    h.flush()
h.shutdown()
EOF
}

send 20 10 3 2 1 || fail "requests on export work failed"
ctl srv raw stats >"$TESTDIR/s1.out" || fail "stats failed"
[ "$(grep -c . "$TESTDIR/s1.out")" = 1 ] || fail "stats is not one line"

# check FILE READS WRITES TRIMS ZEROES FLUSHES: the promised fields, exact
# counts.
check ()
{
  "$PYTHON" - "$TESTDIR" "$@" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from srvstats import load, entries, num, has
path = sys.argv[2]
nr, nw, nt, nz, nf = map(int, sys.argv[3:8])
doc = load(path)
for k in ("device", "groups", "exports", "connections"):
    assert k in doc, "no %r in the stats" % k
assert isinstance(doc["connections"], (list, dict)), "connections: %r" % doc["connections"]
groups, exports = entries(doc, "groups"), entries(doc, "exports")
assert set(exports) == {"work", "rest"}, "exports: %s" % sorted(exports)
assert {"busy", "spare"} <= set(groups), "groups: %s" % sorted(groups)
fields = ("iops", "mibs", "avg_iops", "avg_mibs", "p50_ms", "p99_ms",
          "p999_ms", "max_ms")
for kind, ents in (("group", groups), ("export", exports)):
    for name, e in ents.items():
        for f in fields:
            assert has(e, f), "%s %s has no %s: %s" % (kind, name, f, e)
        for t in ("read", "write", "trim", "zero"):
            assert has(e, "reqs", t), "%s %s has no reqs of %s" % (kind, name, t)
            assert has(e, "bytes", t), "%s %s has no bytes of %s" % (kind, name, t)
want_reqs = {"read": nr, "write": nw, "trim": nt, "zero": nz}
want_bytes = {"read": nr * 8192, "write": nw * 4096, "trim": nt * 65536, "zero": nz * 65536}
for name, e in (("export work", exports["work"]), ("group busy", groups["busy"])):
    for t in want_reqs:
        got = int(num(e, "reqs", t)), int(num(e, "bytes", t))
        assert got == (want_reqs[t], want_bytes[t]), \
            "%s: %s: %d reqs %d bytes, want %d, %d" % (name, t, got[0], got[1], want_reqs[t], want_bytes[t])
    assert int(num(e, "reqs", "flush")) == nf, "%s: %d flushes, want %d" % (name, num(e, "reqs", "flush"), nf)
    if nr:
        assert num(e, "max_ms") > 0, "%s: max latency 0 after %d reads" % (name, nr)
        assert num(e, "p50_ms") <= num(e, "p99_ms") <= num(e, "p999_ms") <= num(e, "max_ms"), \
            "%s: latency percentiles out of order: %s" % (name, e)
    assert num(e, "avg_iops") >= 0 and num(e, "avg_mibs") >= 0
for name, e in (("export rest", exports["rest"]), ("group spare", groups["spare"])):
    for t in want_reqs:
        assert num(e, "reqs", t) == 0 and num(e, "bytes", t) == 0, "%s: %s counted" % (name, t)
if "weight" in groups["busy"]:
    assert int(groups["busy"]["weight"]) == 300, "busy weight %s" % groups["busy"]["weight"]
print("%s: fields and counts OK (work: %d/%d/%d/%d reads/writes/trims/zeroes)" % (path, nr, nw, nt, nz))
EOF
}
check "$TESTDIR/s1.out" 20 10 3 2 1 || fail "stats after the first requests"

# ---- per-group CFQ counters: each group has them, they sum to the device's --------
"$PYTHON" - "$TESTDIR" "$TESTDIR/s1.out" <<'EOF' || fail "per-group CFQ counters"
import sys
sys.path.insert(0, sys.argv[1])
from srvstats import load, entries
doc = load(sys.argv[2])
dev, groups = doc["device"], entries(doc, "groups")
if dev.get("scheduler") != "cfq":
    print("scheduler %s: no CFQ counters to check" % dev.get("scheduler"))
    sys.exit(0)
keys = ("slices", "idle_arms", "group_idle_arms", "idle_hits", "idle_timeouts",
        "preemptions", "dispatched", "used_ns")
for name, g in groups.items():
    for k in keys:
        assert isinstance(g.get(k), int) and g[k] >= 0, "group %s: %s = %r" % (name, k, g.get(k))
    print("group %s: %s" % (name, " ".join("%s=%d" % (k, g[k]) for k in keys)))
# Every request of this test is on a configured group's queue, so the
# device-wide counters are the sums over the groups.
for k in keys[:6]:
    tot = sum(g[k] for g in groups.values())
    assert tot == dev[k], "sum of groups' %s %d != device %d" % (k, tot, dev[k])
assert groups["busy"]["slices"] > 0 and groups["busy"]["dispatched"] > 0, groups["busy"]
assert groups["busy"]["used_ns"] > 0, groups["busy"]
sp = groups["spare"]
assert sp["slices"] == 0 and sp["dispatched"] == 0 and sp["used_ns"] == 0, \
    "group spare had no request but counts %s" % sp
print("per-group CFQ counters present and summing to the device's")
EOF

# ---- the cost model: in the JSON per device, and the same in the metrics ---------
ctl srv raw metrics >"$TESTDIR/m1.prom" || fail "metrics failed"
"$PYTHON" - "$TESTDIR" "$TESTDIR/s1.out" "$TESTDIR/m1.prom" <<'EOF' || fail "the cost model"
import re, sys
sys.path.insert(0, sys.argv[1])
from srvstats import load
doc = load(sys.argv[2])
dev = doc["device"]
if dev.get("scheduler") != "cfq":
    print("scheduler %s: no cost model to check" % dev.get("scheduler"))
    sys.exit(0)
c = dev["cost"]
print("cost:", c)
figures = ("rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops")
assert isinstance(c["source"], str) and c["source"], c
assert sorted(c["model"]) == sorted(figures), "figures %s" % sorted(c["model"])
for f in figures:
    assert isinstance(c["model"][f], int) and c["model"][f] > 0, "%s = %r" % (f, c["model"][f])
assert isinstance(c["depth"], int) and c["depth"] >= 1, c
assert 0.25 <= c["vrate"] <= 4, "vrate %r" % c["vrate"]
assert isinstance(c["windows"], int) and c["windows"] >= 0, c
assert c["windows"] == 0 or abs(c["error_ratio"]) <= c["error_max_ratio"] + 1e-4, c
assert c["predicted_ns"] > 0, "no device time predicted after the requests"
# The metrics say the same: one table feeds both.
prom = {}
for line in open(sys.argv[3]):
    m = re.fullmatch(r'(nbdkit_cfq_cost_\w+)(\{[^}]*\})? (\S+)\n', line)
    if m:
        prom[m.group(1) + (m.group(2) or "")] = float(m.group(3))
for f in figures:
    got = prom.get('nbdkit_cfq_cost_model{figure="%s"}' % f)
    assert got == c["model"][f], "metrics %s %r, stats %r" % (f, got, c["model"][f])
assert prom.get('nbdkit_cfq_cost_info{source="%s"}' % c["source"]) == 1, prom
assert prom.get("nbdkit_cfq_cost_depth") == c["depth"], prom
assert abs(prom["nbdkit_cfq_cost_vrate"] - c["vrate"]) < 1e-3, prom
for k in ("error_ratio", "error_max_ratio", "windows_total", "predicted_seconds_total"):
    assert "nbdkit_cfq_cost_" + k in prom, "no nbdkit_cfq_cost_%s in the metrics" % k
print("cost model: %s, figures and correction in stats and metrics alike" % c["source"])
EOF

# ---- connections: a connected client is listed, with its export ------------------
"$PYTHON" - "${NBDKIT_SOCK[srv]}" "$CFQCTL" "${NBDKIT_CTL[srv]}" <<'EOF' || fail "connections"
import json, subprocess, sys, time
import nbd
sock, cfqctl, ctl = sys.argv[1:4]
h = nbd.NBD()
h.set_export_name("work")
h.connect_unix(sock)
h.pread(4096, 0)
doc = json.loads(subprocess.check_output([cfqctl, "-s", ctl, "stats", "--json"]))
conns = doc["connections"]
conns = list(conns.values()) if isinstance(conns, dict) else conns
print("connections while one client is connected:", json.dumps(conns)[:300])
assert len(conns) >= 1, "no connection listed while a client is connected"
assert any("work" in json.dumps(c) for c in conns), "no connection names export work"

# Shares: a second connection that moves 16x the bytes of the first.  Once
# a whole second has passed without I/O the share is by bytes since start
# (data moved: reads and writes, not trim or zero lengths) of everything
# the device did, earlier clients included: check it is exactly that, and
# that the busier connection has the bigger share.
h2 = nbd.NBD()
h2.set_export_name("work")
h2.connect_unix(sock)
for i in range(16):
    h2.pread(4096, 4096 * i)
time.sleep(2.5)
doc = json.loads(subprocess.check_output([cfqctl, "-s", ctl, "stats", "--json"]))
conns = doc["connections"]
conns = list(conns.values()) if isinstance(conns, dict) else conns
def moved(x):
    return x["bytes"]["read"] + x["bytes"]["write"]
dev = moved(doc["device"])
assert dev > 0, doc["device"]
mine = sorted(conns, key=moved)[-2:]
for c in mine:
    want = 100. * moved(c) / dev
    print("connection %s: share %.1f, bytes/device bytes %.2f" % (c["id"], c["share"], want))
    assert abs(c["share"] - want) < 0.06, "share %s, want %.2f" % (c["share"], want)
assert mine[1]["share"] > mine[0]["share"] > 0, "shares %s" % [c["share"] for c in mine]
h2.shutdown()
h.shutdown()
EOF

# ---- stats flat and the table ----------------------------------------------------
ctl srv raw "stats flat" >"$TESTDIR/flat.out" || fail "stats flat failed"
cat "$TESTDIR/flat.out"
grep -qE '^group busy( |.* )weight=300( |$)' "$TESTDIR/flat.out" || fail "stats flat: no 'group busy weight=300'"
grep -qE '^export work( |.* )group=busy( |$)' "$TESTDIR/flat.out" || fail "stats flat: no 'export work group=busy'"
grep -qE '^device - ' "$TESTDIR/flat.out" || fail "stats flat: no device record"
for k in iops mibs share p50_ms p99_ms max_ms; do
  grep -E '^group busy ' "$TESTDIR/flat.out" | grep -qE " $k=[0-9.]+( |$)" ||
    fail "stats flat: group busy has no numeric $k"
done
if grep -qE '^device - scheduler=cfq ' "$TESTDIR/flat.out"; then
  for k in slices idle_hits idle_timeouts used_ms; do
    grep -E '^group (busy|spare) ' "$TESTDIR/flat.out" | grep -vqE " $k=[0-9]+( |$)" &&
      fail "stats flat: a group record has no integer $k"
  done
  # The groups' slices, idle hits and timeouts sum to the device record's.
  for k in slices idle_hits idle_timeouts; do
    gsum=$(grep -E '^group ' "$TESTDIR/flat.out" | grep -oE " $k=[0-9]+" |
             cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
    dev=$(grep -E '^device - ' "$TESTDIR/flat.out" | grep -oE " $k=[0-9]+" | cut -d= -f2)
    [ -n "$dev" ] && [ "$gsum" = "$dev" ] ||
      fail "stats flat: groups' $k sum $gsum, device $dev"
  done
  grep -E '^group busy ' "$TESTDIR/flat.out" | grep -qE " slices=[1-9][0-9]*( |$)" ||
    fail "stats flat: group busy had requests but no slice"
fi
ctl srv stats -i 1 -c 2 >"$TESTDIR/table.out" || fail "cfqctl stats -i 1 -c 2 failed"
cat "$TESTDIR/table.out"
[ "$(grep -c '^group  *busy ' "$TESTDIR/table.out")" = 2 ] ||
  fail "cfqctl stats -c 2: the table is not there twice"
ctl srv stats --json >"$TESTDIR/j.out" || fail "cfqctl stats --json failed"
"$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TESTDIR/j.out" ||
  fail "cfqctl stats --json does not print JSON"

# ---- reset -----------------------------------------------------------------------------
ctl srv reset || fail "reset failed"
ctl srv raw stats >"$TESTDIR/s2.out" || fail "stats failed"
check "$TESTDIR/s2.out" 0 0 0 0 0 || fail "counters not zero after reset"
send 5 4 0 1 2 || fail "requests after reset failed"
ctl srv raw stats >"$TESTDIR/s3.out" || fail "stats failed"
check "$TESTDIR/s3.out" 5 4 0 1 2 || fail "counts after reset"
echo "== reset zeroes the counters"

# ---- stats=FILE at exit ------------------------------------------------------------------
[ ! -e "$TESTDIR/final.json" ] || echo "note: final.json exists before exit"
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"
[ -s "$TESTDIR/final.json" ] || fail "stats=FILE: $TESTDIR/final.json not written at exit"
check "$TESTDIR/final.json" 5 4 0 1 2 || fail "stats=FILE contents"
echo "== stats=FILE written at exit"
