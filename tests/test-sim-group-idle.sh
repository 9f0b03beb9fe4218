#!/usr/bin/env bash
# test-sim-group-idle.sh: acceptance 4, group_idle.
# With slice_idle=0, group a's single reader thinks 2 ms between requests;
# group b (same weight) is backlogged (tests/sim/group-idle.job).  Group a's
# weighted share is half the disk (in time, or in requests in IOPS mode),
# i.e. at least half its solo throughput.
#  - group_idle=8ms: a keeps it (at least 80% of that; the seeks at slice
#    switches are charged to nobody and cost both groups wall time),
#  - group_idle=0: a loses it (under half of that).
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/solo.json" group-idle.job --only a
sim "$tmp/gi8.json" group-idle.job --set group_idle=8ms
sim "$tmp/gi0.json" group-idle.job --set group_idle=0
check <<'PY'
solo = job(J("solo"), "a")["mib_s"]
g8, g0 = J("gi8"), J("gi0")
a8, a0 = job(g8, "a")["mib_s"], job(g0, "a")["mib_s"]
fair = 0.5 * solo
print(f"a solo {solo:.2f} MiB/s, weighted share {fair:.2f}; group_idle=8ms {a8:.2f} (b {job(g8, 'b')['mib_s']:.2f}), group_idle=0 {a0:.2f} (b {job(g0, 'b')['mib_s']:.2f}) MiB/s")
ok(a8 >= 0.8 * fair, f"group_idle=8ms: a keeps its share ({a8:.2f} >= 0.8 x {fair:.2f})")
ok(a0 < 0.5 * fair, f"group_idle=0: a loses its share ({a0:.2f} < 0.5 x {fair:.2f})")
# Whatever the charge (time on a disk, or requests in IOPS mode: hw_tag is
# still "assume queueing" with this few requests), the backlogged group b
# must not fall below a's rate in requests: its weight is the same.
ok(job(g8, "b")["iops"] >= 0.8 * job(g8, "a")["iops"], f"group_idle=8ms: b keeps its share too ({job(g8, 'b')['iops']:.0f} >= 0.8 x {job(g8, 'a')['iops']:.0f} IOPS)")
PY
