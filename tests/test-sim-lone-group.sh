#!/usr/bin/env bash
# test-sim-lone-group.sh: the lone-group slice (deviation 30,
# doc/deviations.md; tests/sim/lone-group.job).  Sixteen tenants weighted
# 100..1000 on an emulated SSD in IOPS mode; the clients of t02..t16 go
# away at 5 s and new ones of the same groups come back 150 ms later.
# t01 (weight 100), alone on the group tree meanwhile, used to get a slice
# sized for being alone, be charged 5x for it and wait 8.3 s for the
# others to catch up.  Asserts:
#  - t01's longest request wait is under 1 s;
#  - over the seconds all sixteen groups are backlogged (all but second 5)
#    every group's share of the requests is within 10% (relative) of its
#    weight's (t01 got 0.63 of it, paying back its lone slice);
#  - over the whole run no group gets less than 0.9 of its weight's share
#    (t01 may get more: the disk was its alone for a moment).
# And the same with the others back at 5.4 s, too late to count as still
# there (CFQ_GROUP_KEEP, 200 ms): t01's longest wait is under 1 s too.
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/lone.json" lone-group.job
sed 's/^start = 5150ms$/start = 5400ms/' "$JOBS/lone-group.job" > "$tmp/late.job"
grep -q '^start = 5400ms$' "$tmp/late.job" || { echo "FAIL: late.job not made"; exit 1; }
echo "+ cfqsim --json late.job (the others back at 5.4 s)"
"$SIM" --json "$tmp/late.job" > "$tmp/late.json"
check <<'PY'
for name in ("late", "lone"):
    j = J(name)
    t01 = job(j, "t01")
    wait = t01["lat_us"]["max"] / 1e6
    print(f"{name}: t01 {t01['ios']} requests, longest wait {wait:.3f} s, per second {t01['series_ios']}")
    ok(wait < 1.0, f"{name}: t01 longest wait {wait:.3f} s < 1 s")

j = J("lone")                   # the shares: the job as shipped
secs = [s for s in range(int(j["duration_s"])) if s != 5]
ios = {}
for t in j["tenants"]:
    ios[t["group"]] = ios.get(t["group"], 0) + sum(t["series_ios"][s] for s in secs)
total = sum(ios.values())
for g in j["groups"]:
    share = ios[g["name"]] / total
    ideal = g["weight_share"]
    ok(abs(share - ideal) <= 0.10 * ideal,
       f"backlogged seconds: {g['name']} share {share:.4f} within 10% of {ideal:.4f} ({share / ideal:.3f})")
for g in j["groups"]:
    ok(g["iops_share"] >= 0.9 * g["weight_share"],
       f"whole run: {g['name']} iops_share {g['iops_share']:.4f} >= 0.9 x {g['weight_share']:.4f}")
PY
