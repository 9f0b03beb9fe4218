#!/usr/bin/env bash
# test-sim-unlike.sh: weights hold between tenants that do not look alike,
# with the default profile (cost-fair groups), in cfqsim on the ssd model.
# Each pair (tests/sim/unlike-*.job) runs together and each tenant alone;
# a tenant's fraction is its bytes/s together over its bytes/s alone.
#  - 4 KiB random reads beside 1 MiB sequential reads, both at depth 16,
#    equal weights: the fractions within 1.3x of each other, both >= 0.4.
#  - the same, weights 4:1: the ratio of the fractions within 25% of 4.
#  - 4 KiB random reads beside 4 KiB random writes: within 1.3x, >= 0.4.
#  - 1 MiB reads at depth 4 use a quarter of the device alone: they keep
#    >= 0.9 of it, and the 4 KiB reader gets the rest, as much as under
#    FIFO (0.95x of FIFO's fraction or more).
# Negative control: charging one unit per request (cost=0) leaves the
# 4 KiB reader under 0.1 of its solo throughput beside the 1 MiB one.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

for j in size shallow rw size-41; do
  sim "$tmp/$j.json" unlike-$j.job
  sim "$tmp/$j-a.json" unlike-$j.job --only a
  sim "$tmp/$j-b.json" unlike-$j.job --only b
done
sim "$tmp/size-c0.json" unlike-size.job --set cost=0
sim "$tmp/size-c0-a.json" unlike-size.job --set cost=0 --only a
sim "$tmp/shallow-fifo.json" unlike-shallow.job --set scheduler=fifo
sim "$tmp/shallow-fifo-a.json" unlike-shallow.job --set scheduler=fifo --only a
check <<'PY'
def frac(run, t, solo=None):
    alone = J(solo or f"{run}-{t}")
    return group(J(run), t)["mib_s"] / group(alone, t)["mib_s"]

for run in ("size", "rw"):
    a, b = frac(run, "a"), frac(run, "b")
    ok(min(a, b) >= 0.4, f"{run}: fractions {a:.3f} / {b:.3f}, both >= 0.4")
    ok(max(a, b) / min(a, b) <= 1.3,
       f"{run}: {a:.3f} / {b:.3f} within 1.3x of each other")
a, b = frac("size-41", "a"), frac("size-41", "b")
ok(3.0 <= a / b <= 5.0, f"size 4:1: {a:.3f} / {b:.3f} = {a / b:.2f} (4 +- 25%)")
a, b = frac("shallow", "a"), frac("shallow", "b")
fa = frac("shallow-fifo", "a")
ok(b >= 0.9, f"shallow: the 1 MiB reader keeps {b:.3f} of its solo (>= 0.9)")
ok(a >= 0.95 * fa, f"shallow: the 4 KiB reader {a:.3f} >= 0.95 x fifo's {fa:.3f}")
a = frac("size-c0", "a")
ok(a < 0.1, f"negative control: cost=0, the 4 KiB reader {a:.3f} (< 0.1)")
PY
