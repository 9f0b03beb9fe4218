#!/usr/bin/env bash
# test-sim-group-idle.sh: acceptance 4, group_idle.
# With slice_idle=0, group a's single reader thinks 2 ms between requests;
# group b (same weight) is backlogged (tests/sim/group-idle.job).  Group a's
# weighted share is half the disk time, i.e. half its solo throughput.
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
ok(job(g8, "b")["mib_s"] > 0.3 * job(J("gi0"), "b")["mib_s"], "b still served with group_idle")
PY
