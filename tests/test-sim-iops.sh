#!/usr/bin/env bash
# test-sim-iops.sh: acceptance 3, IOPS mode.
# On the SSD with queue_depth 32 and slice_idle=0, two groups 100:400 of
# shallow random readers (tests/sim/iops.job) get IOPS within 10% of 1:4,
# and closer to 1:4 than in time mode on the same setup.  Time mode is
# forced with mode=time (auto, the default, is CFQ's rule: IOPS
# when slice_idle == 0 and the device queues, hw_tag).
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/iops.json" iops.job
sim "$tmp/time.json" iops.job --set mode=time
check <<'PY'
def ratio(j):
    return group(j, "g400")["iops"] / group(j, "g100")["iops"]
ri, rt = ratio(J("iops")), ratio(J("time"))
for n in ("iops", "time"):
    j = J(n)
    print(f"{n} mode: g100 {group(j, 'g100')['iops']:.0f} IOPS, g400 {group(j, 'g400')['iops']:.0f} IOPS, total {j['total']['iops']:.0f}")
print(f"ratio g400/g100: IOPS mode {ri:.3f}, time mode {rt:.3f} (ideal 4)")
ok(3.6 <= ri <= 4.4, f"IOPS mode ratio {ri:.3f} within 10% of 4")
ok(abs(ri - 4) < abs(rt - 4), f"IOPS mode ({ri:.3f}) closer to 4 than time mode ({rt:.3f})")
PY
