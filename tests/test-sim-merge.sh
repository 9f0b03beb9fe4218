#!/usr/bin/env bash
# test-sim-merge.sh: acceptance 6, cooperating-queue merging (seed 001).
# Four queues reading interleaved pieces of one sequential region on the
# disk (tests/sim/merge.job) get at least 1.5x the throughput with queue
# merging (merge=1, the default) than without (merge=0).
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/on.json" merge.job
sim "$tmp/off.json" merge.job --set merge=0
check <<'PY'
on, off = J("on")["total"]["mib_s"], J("off")["total"]["mib_s"]
print(f"interleaved readers: merge=1 {on:.2f} MiB/s, merge=0 {off:.2f} MiB/s")
for n in ("on", "off"):
    print(f"  merge {n}: " + ", ".join(f"{x['name']} {x['mib_s']:.2f}" for x in J(n)["tenants"]))
ok(on >= 1.5 * off, f"merging: {on:.2f} >= 1.5 x {off:.2f} MiB/s")
ok(all(x["ios"] > 0 for x in J("on")["tenants"]), "every reader progresses with merging")
PY
