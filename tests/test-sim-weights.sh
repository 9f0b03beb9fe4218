#!/usr/bin/env bash
# test-sim-weights.sh: acceptance 1, group weights.
# Four backlogged groups, weights 100:200:400:800, same workload each:
#  - disk, time mode (tests/sim/weights-hdd.job),
#  - SSD, IOPS mode (tests/sim/weights-ssd.job).
# Every group's share is within 5% (relative) of weight/1500 and Jain's index
# of throughput/weight over the groups is at least 0.99.  And a second run
# gives byte-identical output.
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/hdd.json" weights-hdd.job
sim "$tmp/ssd.json" weights-ssd.job
# The policy must be as deterministic as the simulator: same run, same bytes.
sim "$tmp/ssd2.json" weights-ssd.job
cmp "$tmp/ssd.json" "$tmp/ssd2.json" || { echo "FAIL: two identical cfq runs differ"; exit 1; }
echo "ok:   two identical runs on cfq give byte-identical output"
check <<'PY'
for name, field, jf in (("hdd", "share", "jain"), ("ssd", "iops_share", "jain_iops")):
    j = J(name)
    print(f"{name}: total {j['total']['mib_s']:.2f} MiB/s {j['total']['iops']:.0f} IOPS")
    for g in j["groups"]:
        ideal = g["weight"] / 1500
        print(f"  {g['name']}: {field} {g[field]:.4f} (ideal {ideal:.4f}) {g['mib_s']:.2f} MiB/s {g['iops']:.0f} IOPS")
        ok(abs(g[field] - ideal) <= 0.05 * ideal, f"{name}: {g['name']} {field} {g[field]:.4f} within 5% of {ideal:.4f}")
    ok(j[jf] >= 0.99, f"{name}: Jain index {j[jf]:.4f} >= 0.99")
    ok(j["total"]["ios"] > 0, f"{name}: device did work")
PY
