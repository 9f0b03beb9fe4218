#!/usr/bin/env bash
# test-sim-one-tenant.sh: one tenant never loses.  Each
# single-tenant workload of tests/sim/one-tenant.job (mixed reads and
# writes with and without flushes, write + flush clients, a sequential
# writer, random reads), run alone on the disk and on the SSD model, gets
# at least 0.95x FIFO's IOPS under CFQ's defaults.  Before the policy
# classified plain writes as sync, the mixed workload got 0.58x on the SSD
# (its writes waited while its own reads were in flight).
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

for dev in hdd ssd; do
  for n in mix mixf wf seqw rr; do
    sim "$tmp/$dev-$n-cfq.json" one-tenant.job --device "$dev" --only "$n"
    sim "$tmp/$dev-$n-fifo.json" one-tenant.job --device "$dev" --only "$n" --sched fifo
  done
done
check <<'PY'
def iops(j):
    return sum(x["iops"] for x in j["tenants"])
for dev in ("hdd", "ssd"):
    for n in ("mix", "mixf", "wf", "seqw", "rr"):
        c, f = iops(J(f"{dev}-{n}-cfq")), iops(J(f"{dev}-{n}-fifo"))
        ok(c >= 0.95 * f, f"{dev} {n}: cfq {c:.1f} IOPS >= 0.95 x fifo's {f:.1f}")
PY
