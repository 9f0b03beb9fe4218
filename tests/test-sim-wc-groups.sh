#!/usr/bin/env bash
# test-sim-wc-groups.sh: work-conserving groups (deviation 31, wc_depth)
# on the ssd model in cfqsim.  Two groups 100/400 at depth 32 and sixteen
# groups 100..880 at depth 8 (tests/sim/wc-groups-*.job): with
# group_idle=0 (the mode's condition) CFQ gives at least 0.9x fifo's total
# IOPS with every group's IOPS share within 10% (relative) of weight /
# total weight.  Negative control: with wc_depth=0 (CFQ's strict group
# turns) the total falls below 0.5x fifo's.  With group_idle at its
# default the mode stays off: the same report as wc_depth=0.
# Every cfq run is under the kernel profile (charging by time or
# request, device-wide async rules), the ground these mechanisms stand on;
# the default profile has tests of its own (test-sim-unlike.sh).
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

for n in 2 16; do
  sim "$tmp/cfq$n.json" wc-groups-$n.job --set profile=kernel --set group_idle=0
  sim "$tmp/off$n.json" wc-groups-$n.job --set profile=kernel --set group_idle=0 --set wc_depth=0
  sim "$tmp/dflt$n.json" wc-groups-$n.job --set profile=kernel
  sim "$tmp/turns$n.json" wc-groups-$n.job --set profile=kernel --set wc_depth=0
  sim "$tmp/fifo$n.json" wc-groups-$n.job --set scheduler=fifo
done
check <<'PY'
for n in (2, 16):
    fifo = J(f"fifo{n}")["total"]["iops"]
    cfq = J(f"cfq{n}")
    off = J(f"off{n}")["total"]["iops"]
    tw = sum(g["weight"] for g in cfq["groups"])
    ok(len(cfq["groups"]) == n, f"{n} groups: {len(cfq['groups'])} in the report")
    r = cfq["total"]["iops"] / fifo
    ok(r >= 0.9, f"{n} groups: cfq {cfq['total']['iops']:.0f} IOPS = {r:.3f}x fifo's {fifo:.0f} (>= 0.9)")
    for g in cfq["groups"]:
        ideal = g["weight"] / tw
        ok(abs(g["iops_share"] - ideal) <= 0.10 * ideal,
           f"{n} groups: {g['name']} (weight {g['weight']}) iops_share {g['iops_share']:.4f} within 10% of {ideal:.4f}")
    d, t = J(f"dflt{n}"), J(f"turns{n}")
    ok(d["total"] == t["total"] and d["groups"] == t["groups"],
       f"{n} groups, group_idle at its default: {d['total']['iops']:.0f} IOPS, wc_depth=0 {t['total']['iops']:.0f} (totals and every group equal)")
    ok(off / fifo < 0.5,
       f"{n} groups, negative control: wc_depth=0 gives {off:.0f} IOPS = {off / fifo:.3f}x fifo (< 0.5)")
PY
