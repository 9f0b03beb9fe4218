#!/usr/bin/env bash
# test-pool-share.sh: a tenant that floods the request buffer pool does
# not stall the others (plugin/bounce.c, core/poolshare.c).
#
# One server, buffer_pool = 40M, every request through the pool
# (-D cfq.bounce=1: as when nbdkit's request buffers are not aligned for
# O_DIRECT, so gold's aligned 4k reads need pool buffers too), three
# groups on one image (tests/nbd/readload as the clients):
#   capped  bps_max = 4M: one connection with 8 unaligned 32 MiB reads in
#           flight (33 MiB buffers: one fits in the pool at a time), two
#           with 16 unaligned 960 KiB reads each: 40 reads queued behind
#           the cap
#   flood   uncapped: 2 connections x 16 unaligned reads of ~3.8 MiB
#           (4 MiB buffers: 128 MiB asked for, three times the pool)
#   gold    weight 800: 4k aligned reads, one at a time, 2 s alone, then
#           6 s beside the others, each checked against the image
# 1. Gold completes at least 1/20 of the reads it does alone in as long
#    (and 300), its slowest under 2 s (the benchmark's target is 100 ms:
#    bench/pool-attack.sh), and its data is right.  Where a request took
#    its buffer before its cap let it go, the capped group held the pool
#    and gold did 1/80 of its rate here (4 reads in 10 s in the bench).
# 2. From the stats (device.buffers), sampled every 0.2 s while gold runs
#    and at the end: no group is ever given a buffer past its share while
#    another group waits (over_share 0 for every group); the capped group
#    holds at most 2 buffers in any sample, though 40 of its reads are
#    queued (a request takes one only once its cap has let it go, and is
#    done long before the cap lets many more go); the pool never holds
#    more than its cap; it was filled and the flood waited for room (the
#    pool was contended); gold's longest wait for a buffer is under 1 s.
# 3. The comparison, -D cfq.pool_share=0 (the oldest waiter that fits is
#    served, whatever its group holds): the same load makes the pool give
#    the flood buffers past its share while others wait (over_share > 0
#    for the flood), which is what 2 must not show.
# 4. Data stays exact while requests wait for buffers: two tests/nbd/shadow
#    runs (reads, writes, FUA, read-modify-write, trims, zeroes, up to
#    12 MiB, 8 connections 8 deep each) on two exports in two groups at
#    once, buffer_pool = 33M and -D cfq.bounce=1, every byte checked; the
#    pool's stats show requests kept aside for room, and nbdkit's request
#    buffers were refused nothing.
# Gold's numbers (reads, p99, max; alone first) are printed, not asserted
# beyond 1.: speed is the benchmark's (bench/pool-attack.sh, bench/README.md).
# timeout: 300
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_shadow
LOAD=$top/tests/nbd/readload
[ -x "$LOAD" ] || fail "$LOAD is not built (run make)"

make_sparse "$TESTDIR/disk.img" 512M
# Gold's region holds data, so a read from the wrong place is seen.
head -c $((64 << 20)) /dev/urandom |
  dd of="$TESTDIR/disk.img" conv=notrunc status=none ||
  fail "cannot fill gold's region"
cat >"$TESTDIR/pool.conf" <<EOF
[device]
file = $TESTDIR/disk.img
buffer_pool = 40M

[group gold]
weight = 800
[group capped]
weight = 500
bps_max = 4M
[group flood]
weight = 500

[export gold]
group = gold
size = 64M
[export capped]
group = capped
offset = 64M
size = 192M
[export flood]
group = flood
offset = 256M
size = 256M
EOF

# attack NAME [NBDKIT-OPTION...]: serve pool.conf as NAME, run the three
# loads, sample the stats; results in $TESTDIR/NAME.*.
attack ()
{
  local name=$1 snap_pid pids=() p; shift
  control_start "$name" -D cfq.bounce=1 "$@" -- config="$TESTDIR/pool.conf"
  if [ "$name" = shares ]; then
    "$LOAD" -d 1 -b 4K -t 2 -V "$TESTDIR/disk.img:0" \
      "$(export_uri "$name" gold)" >"$TESTDIR/alone.gold" ||
      fail "gold alone: $(cat "$TESTDIR/alone.gold")"
    echo "gold alone: $(cat "$TESTDIR/alone.gold")"
  fi
  "$LOAD" -c 1 -d 8 -b 32M -u 1 -t 7 "$(export_uri "$name" capped)" \
    >"$TESTDIR/$name.capped" 2>&1 & pids+=($!)
  "$LOAD" -c 2 -d 16 -b 960K -u 1 -t 7 -s 2 "$(export_uri "$name" capped)" \
    >"$TESTDIR/$name.capped-mid" 2>&1 & pids+=($!)
  "$LOAD" -c 2 -d 16 -b 3900K -u 1 -t 7 "$(export_uri "$name" flood)" \
    >"$TESTDIR/$name.flood" 2>&1 & pids+=($!)
  sleep 0.5
  (
    while :; do
      ctl "$name" stats --json 2>/dev/null | tr -d '\n'
      echo
      sleep 0.2
    done
  ) >"$TESTDIR/$name.snaps" & snap_pid=$!
  cleanup_fn kill "$snap_pid"
  "$LOAD" -d 1 -b 4K -t 6 -V "$TESTDIR/disk.img:0" \
    "$(export_uri "$name" gold)" >"$TESTDIR/$name.gold" 2>&1 ||
    fail "$name: gold's reads failed: $(cat "$TESTDIR/$name.gold")"
  kill "$snap_pid"
  wait "$snap_pid" 2>/dev/null || true
  echo "$name: gold beside the floods: $(cat "$TESTDIR/$name.gold")"
  # Let the capped reads still queued go, so that the clients end now.
  ctl "$name" qos capped bps_max 0 >/dev/null || fail "$name: cannot lift the cap"
  for p in "${pids[@]}"; do
    wait "$p" || fail "$name: a flood client failed: $(cat "$TESTDIR/$name".{capped,capped-mid,flood})"
  done
  echo "$name: capped: $(cat "$TESTDIR/$name.capped")"
  echo "$name: capped: $(cat "$TESTDIR/$name.capped-mid")"
  echo "$name: flood:  $(cat "$TESTDIR/$name.flood")"
  stats_json "$name" >"$TESTDIR/$name.final.json"
  stop_nbdkit "$name"
  [ "${NBDKIT_STATUS[$name]}" = 0 ] || fail "$name: nbdkit exited with ${NBDKIT_STATUS[$name]}"
}

# ---- 1. and 2. ------------------------------------------------------------------
attack shares
"$PYTHON" - "$TESTDIR" shares <<'EOF' || fail "the pool's shares"
import json, re, sys
d, name = sys.argv[1:3]
failed = []
def ok(cond, msg):
    print(("ok:   " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)
def load_line(path):
    return {k: float(v) for k, v in
            re.findall(r"(\w+) ([\d.]+)", open(path).read())}

gold, alone = load_line("%s/%s.gold" % (d, name)), load_line(d + "/alone.gold")
# Alone it ran 2 s; beside the floods 6 s.  With buffers taken before
# the cap let a request go, gold did 1/80 of its rate alone here (and 2-4
# reads in 10 s in bench/pool-attack.sh).
least = max(300, alone["reads"] * 3 / 20)
ok(gold["reads"] >= least, "gold completed %d reads in 6 s (>= %d: 1/20 of "
   "its rate alone)" % (gold["reads"], least))
ok(gold["max"] < 2000, "gold's slowest read %.1f ms (< 2000)" % gold["max"])
ok(gold["mismatches"] == 0 and gold["errors"] == 0, "gold's data right")
print("gold: p99 %.3f ms beside the floods, %.3f ms alone (%.1fx); max %.1f ms"
      % (gold["p99"], alone["p99"], gold["p99"] / max(alone["p99"], 1e-3),
         gold["max"]))

snaps = []
for line in open("%s/%s.snaps" % (d, name)):
    line = line.strip()
    if line:
        try:
            snaps.append(json.loads(line)["device"]["buffers"])
        except ValueError:
            pass            # a sample cut short by the kill
final = json.load(open("%s/%s.final.json" % (d, name)))["device"]["buffers"]
ok(len(snaps) >= 3, "%d samples of the stats (>= 3)" % len(snaps))
ok(final["shares"] is True, "the shares are applied")
cap = final["cap"]
groups = {g["group"]: g for g in final["groups"]}
ok(set(groups) == {"gold", "capped", "flood"}, "a pool entry per group")
for g in groups.values():
    ok(g["over_share"] == 0, "%s was given no buffer past its share while "
       "another group waited (over_share %d)" % (g["group"], g["over_share"]))
    ok(g["in_use"] == 0 and g["waiting"] == 0 and g["buffers"] == 0,
       "%s holds and waits for nothing at the end" % g["group"])
worst_capped = max(g["buffers"] for s in snaps for g in s["groups"]
                   if g["group"] == "capped")
ok(worst_capped <= 2, "the capped group, 40 reads queued behind its cap, "
   "held at most %d buffers in a sample (<= 2)" % worst_capped)
ok(groups["capped"]["gets"] >= 1, "the capped group's reads took buffers "
   "(%d)" % groups["capped"]["gets"])
ok(all(s["in_use"] <= cap for s in snaps), "the pool never held more than "
   "its cap")
ok(max(s["in_use"] for s in snaps) >= cap // 2, "the pool was filled "
   "(most in use in a sample: %d MiB of %d)"
   % (max(s["in_use"] for s in snaps) >> 20, cap >> 20))
ok(groups["flood"]["waits"] > 0, "the flood waited for room %d times"
   % groups["flood"]["waits"])
ok(groups["gold"]["gets"] >= gold["reads"], "gold's reads took pool "
   "buffers (%d)" % groups["gold"]["gets"])
ok(groups["gold"]["wait_max_ms"] < 1000, "gold's longest wait for a "
   "buffer %.1f ms (< 1000)" % groups["gold"]["wait_max_ms"])
waited = sum(1 for s in snaps for g in s["groups"] if g["waiting"])
print("samples in which some group waited for room: %d of %d" %
      (waited, len(snaps)))
sys.exit(1 if failed else 0)
EOF

# ---- 3. the comparison: no shares ----------------------------------------------
attack noshares -D cfq.pool_share=0
"$PYTHON" - "$TESTDIR" <<'EOF' || fail "without the shares, the flood must take more than its share"
import json, sys
d = sys.argv[1]
b = json.load(open(d + "/noshares.final.json"))["device"]["buffers"]
groups = {g["group"]: g for g in b["groups"]}
print("no shares: over_share", {k: g["over_share"] for k, g in groups.items()})
assert b["shares"] is False, "shares still applied"
assert groups["flood"]["over_share"] > 0, \
    "the flood was never given a buffer past its share while others waited"
EOF

# ---- 4. data while requests wait for buffers ----------------------------------
# What waits here is the pool; nbdkit's own request buffers must all fit
# in the memory budget, or a request is refused ENOMEM before the pool
# sees it (that budget is test-memory-budget.sh's).  nbdkit keeps each
# worker's buffer at the largest request it has taken: 16 connections x 8
# workers (one per request in flight) x 12 MiB is 1.5 GiB, within the
# three quarters of the rest that large buffers may use at memory = 3G
# (3G - 33M - 256M - 64M = 2719M: 2039M), where at the default 2G
# (1271M) the 16 default workers of each connection can pass it.
cat >"$TESTDIR/data.conf" <<EOF
[device]
file = $TESTDIR/disk.img
buffer_pool = 33M
memory = 3G

[group a]
[group b]

[export a]
group = a
size = 64M
[export b]
group = b
offset = 64M
size = 64M
EOF
control_start data --threads 8 -D cfq.bounce=1 -- config="$TESTDIR/data.conf"
rc_a=0 rc_b=0
"$SHADOW" -u -s 21 -c 8 -d 8 -n 1000 -l 12M "$(export_uri data a)" \
  >"$TESTDIR/shadow-a.out" 2>&1 & pa=$!
"$SHADOW" -u -s 22 -c 8 -d 8 -n 1000 -l 12M "$(export_uri data b)" \
  >"$TESTDIR/shadow-b.out" 2>&1 & pb=$!
wait "$pa" || rc_a=$?
wait "$pb" || rc_b=$?
tail -n 3 "$TESTDIR/shadow-a.out" "$TESTDIR/shadow-b.out"
[ "$rc_a" = 0 ] && [ "$rc_b" = 0 ] ||
  fail "data integrity under a small pool: shadow exited $rc_a and $rc_b"
stats_json data >"$TESTDIR/data.json"
stop_nbdkit data
[ "${NBDKIT_STATUS[data]}" = 0 ] || fail "data: nbdkit exited with ${NBDKIT_STATUS[data]}"
"$PYTHON" - "$TESTDIR/data.json" <<'EOF' || fail "the shadow runs did not wait for buffers"
import json, sys
d = json.load(open(sys.argv[1]))["device"]
b = d["buffers"]
r = d["memory"]["requests"]
print("pool: waits %d, peak %d MiB of %d; nbdkit's buffers: peak %d MiB of %d"
      % (b["waits"], b["peak"] >> 20, b["cap"] >> 20, r["peak"] >> 20,
         r["limit"] >> 20))
assert r["refused"] == 0, "requests refused for nbdkit's buffers: %r" % r
assert b["waits"] > 0, "no request waited for room: the pool was not contended"
assert b["in_use"] == 0, "%d bytes still in use" % b["in_use"]
assert all(g["over_share"] == 0 for g in b["groups"]), b["groups"]
EOF
echo "== pool shares: gold served beside a capped and an uncapped flood"
