#!/usr/bin/env bash
# test-sim-hdd-group-deep.sh: group weights in time mode on a disk with a
# deep device queue (tests/sim/hdd-group-deep.job).  Three tenants
# 100/200/400, one random 4 KiB reader each with 16 requests outstanding,
# queue_depth 32: each group's share is within 10% (relative) of
# weight/700 and Jain's index of share/weight is >= 0.98, over two seeds.
# Before the drain charge (see core/cfq.c) a slice that expired with
# requests in the driver was not charged for them and the shares came out
# about 18/29/53%.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/s1.json" hdd-group-deep.job --seed 1
sim "$tmp/s2.json" hdd-group-deep.job --seed 2
check <<'PY'
for name in ("s1", "s2"):
    j = J(name)
    print(f"{name}: total {j['total']['iops']:.0f} IOPS")
    xs = []
    for g in j["groups"]:
        ideal = g["weight"] / 700
        print(f"  {g['name']}: share {g['share']:.4f} (ideal {ideal:.4f})")
        ok(abs(g["share"] - ideal) <= 0.10 * ideal,
           f"{name}: {g['name']} share {g['share']:.4f} within 10% of {ideal:.4f}")
        xs.append(g["share"] / g["weight"])
    jain = sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))
    ok(jain >= 0.98, f"{name}: Jain index {jain:.4f} >= 0.98")
    ok(len(xs) == 3, f"{name}: three groups reported")
PY
