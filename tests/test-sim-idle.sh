#!/usr/bin/env bash
# test-sim-idle.sh: acceptance 2, idling (seed 000: the slice_idle thread).
# On the disk, a sequential sync reader competing with four random readers
# gets at least 2x more throughput with slice_idle=8ms than with
# slice_idle=0 (tests/sim/idle.job).
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/idle8.json" idle.job --set slice_idle=8ms
sim "$tmp/idle0.json" idle.job --set slice_idle=0
sim "$tmp/fifo.json" idle.job --sched fifo
check <<'PY'
a, b, f = J("idle8"), J("idle0"), J("fifo")
s8, s0, sf = (job(x, "seq")["mib_s"] for x in (a, b, f))
print(f"seq reader: slice_idle=8ms {s8:.3f} MiB/s, slice_idle=0 {s0:.3f} MiB/s, fifo {sf:.3f} MiB/s")
for x, n in ((a, "8ms"), (b, "0")):
    print(f"  slice_idle={n}: random readers " + ", ".join(f"{job(x, f'rand{i}')['iops']:.1f}" for i in range(1, 5)) + " IOPS")
ok(s8 >= 2 * s0, f"idling: {s8:.3f} >= 2 x {s0:.3f} MiB/s")
ok(all(job(a, f"rand{i}")["ios"] > 0 for i in range(1, 5)), "random readers are not starved while idling")
PY
