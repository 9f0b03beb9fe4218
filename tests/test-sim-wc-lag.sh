#!/usr/bin/env bash
# test-sim-wc-lag.sh: bounded lag (deviation 32, group_lag) in cfqsim.
# Three groups 100/200/400, each 4k random reads at depth 16 with 2 ms of
# think time on the ssd model (tests/sim/wc-lag.job): each group is often
# empty for a moment and the device is never full.  With group_lag=4
# (group_idle at its default) every group's IOPS share is within 5%
# (relative) of weight / total weight, the worst group's p99 latency is
# under 20 ms and the total is at least 1.5x that of CFQ's group turns.
# Negative controls: CFQ's turns (the default) hold the weights but the
# worst p99 is over 150 ms; work-conserving groups without the bound
# (group_idle=0) give w400 under 80% of its weight share.
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/lag.json" wc-lag.job --set group_lag=4
sim "$tmp/turns.json" wc-lag.job
sim "$tmp/wc.json" wc-lag.job --set group_idle=0
check <<'PY'
def worst_p99(j):
    return max(g["lat_us"]["p99"] for g in j["groups"]) / 1000
lag, turns, wc = J("lag"), J("turns"), J("wc")
for g in lag["groups"]:
    ideal = g["weight_share"]
    ok(abs(g["iops_share"] - ideal) <= 0.05 * ideal,
       f"group_lag=4: {g['name']} iops_share {g['iops_share']:.4f} within 5% of {ideal:.4f}")
ok(worst_p99(lag) < 20,
   f"group_lag=4: worst p99 {worst_p99(lag):.1f} ms (< 20)")
r = lag["total"]["iops"] / turns["total"]["iops"]
ok(r >= 1.5,
   f"group_lag=4: {lag['total']['iops']:.0f} IOPS = {r:.2f}x the turns' {turns['total']['iops']:.0f} (>= 1.5)")
ok(worst_p99(turns) > 150,
   f"negative control: CFQ's turns, worst p99 {worst_p99(turns):.1f} ms (> 150)")
w400 = group(wc, "w400")
ok(w400["iops_share"] < 0.8 * w400["weight_share"],
   f"negative control: group_idle=0, w400 iops_share {w400['iops_share']:.4f} < 0.8 x {w400['weight_share']:.4f}")
PY
