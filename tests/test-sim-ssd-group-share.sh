#!/usr/bin/env bash
# test-sim-ssd-group-share.sh: group_idle protects group shares on a
# queueing SSD (tests/sim/ssd-group-share.job).  Three tenants 100/200/400
# whose groups run dry between requests (depth 2, 3 ms think): with
# group_idle=8ms every group's IOPS share is within 10% (relative) of
# weight/700 (CFQ 2.6.37 never armed group_idle on a queueing SSD and gave
# 1/3 each); with group_idle=0 the groups are not protected and large gets
# clearly less than its share (shows the scenario exercises it).
# Every cfq run is under the kernel profile (charging by time or
# request, device-wide async rules), the ground these mechanisms stand on;
# the default profile has tests of its own (test-sim-unlike.sh).
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/g8.json" ssd-group-share.job --set profile=kernel
sim "$tmp/g0.json" ssd-group-share.job --set profile=kernel --set group_idle=0
check <<'PY'
for name in ("g8", "g0"):
    j = J(name)
    print(f"{name}: total {j['total']['iops']:.0f} IOPS")
    for g in j["groups"]:
        print(f"  {g['name']}: iops_share {g['iops_share']:.4f} (ideal {g['weight'] / 700:.4f})")
g8 = J("g8")
for g in g8["groups"]:
    ideal = g["weight"] / 700
    ok(abs(g["iops_share"] - ideal) <= 0.10 * ideal,
       f"group_idle=8ms: {g['name']} iops_share {g['iops_share']:.4f} within 10% of {ideal:.4f}")
large0 = group(J("g0"), "large")["iops_share"]
ok(large0 < 0.8 * 400 / 700, f"group_idle=0: large {large0:.4f} < 0.8 x {400 / 700:.4f} (groups go empty)")
PY
