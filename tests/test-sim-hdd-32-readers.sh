#!/usr/bin/env bash
# test-sim-hdd-32-readers.sh: seed 002's latency test 2 on the disk model
# (tests/sim/hdd-32-readers.job): 32 random readers at depth 1.  CFQ's
# worst read latency is at most 1.1x FIFO's and it keeps FIFO's IOPS
# (deviation 20: the kernel idles for a new random reader until its fifth
# seek).
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/cfq.json" hdd-32-readers.job
sim "$tmp/fifo.json" hdd-32-readers.job --sched fifo
check <<'PY'
c, f = J("cfq"), J("fifo")
def rmax(j):
    return job(j, "rr")["lat_us"]["max"] / 1000
def iops(j):
    return job(j, "rr")["iops"]
print(f"max read latency: cfq {rmax(c):.1f} ms, fifo {rmax(f):.1f} ms")
print(f"IOPS: cfq {iops(c):.1f}, fifo {iops(f):.1f}")
ok(job(c, "rr")["connections"] == 32, "32 readers")
ok(rmax(c) <= 1.1 * rmax(f), f"cfq max latency {rmax(c):.1f} <= 1.1 x fifo's {rmax(f):.1f} ms")
ok(iops(c) >= 0.95 * iops(f), f"cfq IOPS {iops(c):.1f} >= 0.95 x fifo's {iops(f):.1f}")
PY
