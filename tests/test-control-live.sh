#!/usr/bin/env bash
# test-control-live.sh: the control socket changes a running server.
#
#  1. two tenants in groups of equal weight (200) share an emulated device
#     about 1:1; `cfqctl weight g1 800` mid-run moves g1 to about 4:1,
#     measured from per-interval bytes between "stats" snapshots before
#     and after the change (only shares are asserted, never speed);
#  2. get/set of tunables round-trip; bad input is answered "error: ..."
#     naming what was wrong, and cfqctl exits non-zero saying so;
#  3. cfqctl on a missing socket fails with a message naming it.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_fio_nbd

make_sparse "$TESTDIR/disk.img" 1G
cat >"$TESTDIR/live.conf" <<'EOF'
[device]
file = disk.img
emulate = ssd
mode = iops
model.channels = 1
model.read = 2ms
model.seed = 1

[scheduler]
scheduler = cfq
slice_idle = 0
group_idle = 8ms
rotational = 0

[group g1]
weight = 200
[group g2]
weight = 200

[export e1]
group = g1
size = 256M
[export e2]
group = g2
offset = 256M
size = 256M
EOF
tenant_start srv "$TESTDIR/live.conf"

# ---- 3. (first: no load needed) a missing socket ----------------------------------
rc=0
"$CFQCTL" -s "$TESTDIR/nonesuch.ctl" stats >"$TESTDIR/o" 2>"$TESTDIR/e" || rc=$?
[ "$rc" != 0 ] || fail "cfqctl on a missing socket exited 0"
grep -q "$TESTDIR/nonesuch.ctl" "$TESTDIR/e" && grep -qi "no such file" "$TESTDIR/e" ||
  fail "cfqctl on a missing socket: message '$(cat "$TESTDIR/e")'"
echo "missing socket: exit $rc: $(cat "$TESTDIR/e")"

# ---- 2. get / set / errors ---------------------------------------------------------
# get_val KEY: the value cfqctl prints for KEY (the last word of its answer).
get_val () { ctl srv get "$1" | tr -s ' \t=' '\n' | grep -v '^$' | tail -1; }

ctl srv set quantum 6 || fail "set quantum 6 refused"
v=$(get_val quantum); echo "get quantum -> $v"
[ "$v" = 6 ] || fail "quantum: set 6, got '$v'"
ctl srv set quantum 8 || fail "set quantum 8 refused"
v=$(get_val quantum); [ "$v" = 8 ] || fail "quantum: set 8, got '$v'"
ctl srv set slice_sync 50ms || fail "set slice_sync 50ms refused"
v=$(get_val slice_sync); echo "get slice_sync -> $v"
case $v in 50ms|50000us|50000000ns|50000000) ;; *) fail "slice_sync: set 50ms, got '$v'" ;; esac
ctl srv set slice_sync 100ms || fail "set slice_sync 100ms refused"
# queue_depth live, read as the config file reads it.
ctl srv set queue_depth 16 || fail "set queue_depth 16 refused"
v=$(get_val queue_depth); [ "$v" = 16 ] || fail "queue_depth: set 16, got '$v'"
ctl srv set queue_depth 32 || fail "set queue_depth 32 refused"
# The config file's grammar, live: a size for back_seek_max (was refused).
ctl srv set back_seek_max 16M || fail "set back_seek_max 16M refused"
v=$(get_val back_seek_max); echo "get back_seek_max -> $v"
[ "$v" = 16M ] || fail "back_seek_max: set 16M, got '$v'"
ctl srv set back_seek_max 8192 || fail "set back_seek_max 8192 refused"
v=$(get_val back_seek_max); [ "$v" = 8M ] || fail "back_seek_max: set 8192 (KiB), got '$v'"

# bad INPUT-WORDS... -- TEXT...: cfqctl must fail, saying every TEXT.
bad ()
{
  local args=() t rc=0
  while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  ctl srv "${args[@]}" >"$TESTDIR/o" 2>"$TESTDIR/e" || rc=$?
  echo "cfqctl ${args[*]}: exit $rc: $(cat "$TESTDIR/e" "$TESTDIR/o")"
  [ "$rc" != 0 ] || fail "cfqctl ${args[*]} succeeded"
  for t in "$@"; do
    grep -qiF -- "$t" "$TESTDIR/e" || fail "cfqctl ${args[*]}: message does not say '$t'"
  done
}
bad set nonesuch 1 -- nonesuch
bad get nonesuch -- nonesuch
bad set quantum abc -- quantum abc
bad set quantum 0 -- quantum
bad set slice_idle 8x -- slice_idle 8x "not a time"
bad set back_seek_max 1000b -- back_seek_max "not a whole number of KiB"
bad set queue_depth 5000 -- "queue_depth=5000: out of range (want 1..4096)"
bad set queue_depth x -- "queue_depth=x: not a number (want 1..4096)"
bad set slice_idle 2s -- slice_idle "out of range 0ns..100ms"
bad set slice_idle 1000ms -- slice_idle "out of range 0ns..100ms"
bad set group_idle 101ms -- group_idle "out of range 0ns..100ms"
bad set slice_sync 2s -- slice_sync "out of range 1ms..1s"
bad set fifo_expire_async 60s -- fifo_expire_async "out of range 1ms..10s"
bad weight nogroup 300 -- nogroup
bad weight g1 5000 -- 5000 "out of range"
bad weight g1 99 -- 99 "out of range"
bad weight g1 many -- many "not a number"
v=$(get_val quantum); [ "$v" = 8 ] || fail "a refused set changed quantum to '$v'"

# The raw protocol: every answer ends with an empty line, errors start
# with "error: ", the connection survives an error.
"$PYTHON" - "${NBDKIT_CTL[srv]}" <<'EOF' || fail "control protocol"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rwb")
def call(line):
    f.write(line.encode() + b"\n"); f.flush()
    out = []
    while True:
        l = f.readline()
        assert l, "server closed the connection after %r" % line
        l = l.decode().rstrip("\n")
        if l == "":
            return out
        out.append(l)
a = call("frobnicate")
print("frobnicate ->", a)
assert a and a[0].startswith("error: "), "unknown command: %r" % a
a = call("get quantum")
assert a and not a[0].startswith("error: "), "get quantum after an error: %r" % a
a = call("weight g2")
assert a and a[0].startswith("error: "), "weight without a value: %r" % a
a = call("stats")
assert len(a) == 1, "stats is not one line: %d lines" % len(a)
EOF
echo "== get/set round-trip, bad input refused"

# ---- 1. weights changed mid-run -----------------------------------------------------
randread_job "$TESTDIR/live.fio" 36 0 srv e1 e2
fio_start "$TESTDIR/live.fio"

sleep 4;  stats_json srv >"$TESTDIR/b1.json"
sleep 12; stats_json srv >"$TESTDIR/b2.json"
ctl srv weight g1 800 || fail "cfqctl weight g1 800 refused"
sleep 3;  stats_json srv >"$TESTDIR/a1.json"
sleep 12; stats_json srv >"$TESTDIR/a2.json"
fio_wait

"$PYTHON" - "$TESTDIR" <<'EOF' || fail "the weight change did not shift the shares"
import sys
sys.path.insert(0, sys.argv[1])
from srvstats import load, entries, total
d = sys.argv[1]
def share(x, y):
    a = entries(load("%s/%s.json" % (d, x)), "exports")
    b = entries(load("%s/%s.json" % (d, y)), "exports")
    b1 = total(b["e1"], "bytes") - total(a["e1"], "bytes")
    b2 = total(b["e2"], "bytes") - total(a["e2"], "bytes")
    assert b1 > 0 and b2 > 0, "%s..%s: e1 %d, e2 %d bytes" % (x, y, b1, b2)
    return b1, b2, b1 / (b1 + b2)
b1, b2, before = share("b1", "b2")
a1, a2, after = share("a1", "a2")
print("before (200:200): e1 %d e2 %d bytes, e1 share %.1f%% (want 50%%)" % (b1, b2, 100 * before))
print("after  (800:200): e1 %d e2 %d bytes, e1 share %.1f%% (want 80%%)" % (a1, a2, 100 * after))
g = entries(load(d + "/a2.json"), "groups")
if "weight" in g["g1"]:
    assert int(g["g1"]["weight"]) == 800, "stats: g1 weight %s" % g["g1"]["weight"]
    assert int(g["g2"]["weight"]) == 200, "stats: g2 weight %s" % g["g2"]["weight"]
assert 0.45 <= before <= 0.55, "equal weights: e1 share %.1f%%, want 50%% +-10%% rel" % (100 * before)
assert 0.72 <= after <= 0.88, "800:200: e1 share %.1f%%, want 80%% +-10%% rel" % (100 * after)
EOF
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"
echo "== cfqctl weight shifts the shares of a running server"
