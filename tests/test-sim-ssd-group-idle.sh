#!/usr/bin/env bash
# test-sim-ssd-group-idle.sh: no idling on a queueing SSD, group_idle or not.
# Four random readers (depth 1, 1 ms think) and a sequential async writer
# in one group on the SSD with queue_depth 32 (tests/sim/ssd-group-idle.job).
# CFQ 2.6.37..4.x never arm the idle timer on a non-rotational device that
# queues (cfq_arm_slice_timer returns first thing), so the default
# group_idle=8ms must behave like group_idle=0 here: the writer keeps at
# least 3/4 of its solo rate and the readers' max latency stays within
# twice (+1 ms) that with group_idle=0.  (It used to idle 8 ms per reader
# turn: writer 5.80 of 20 MiB/s, reader max 98 ms vs 4.5 ms.)
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/g8.json" ssd-group-idle.job --set group_idle=8ms
sim "$tmp/g0.json" ssd-group-idle.job --set group_idle=0
sim "$tmp/ws.json" ssd-group-idle.job --only writer
check <<'PY'
def rmax(j):
    return max(x["lat_us"]["max"] for x in j["tenants"] if x["name"].startswith("reader")) / 1000
g8, g0 = J("g8"), J("g0")
w8, w0, ws = job(g8, "writer")["mib_s"], job(g0, "writer")["mib_s"], job(J("ws"), "writer")["mib_s"]
print(f"writer {w8:.2f} MiB/s (group_idle=8ms), {w0:.2f} (0), solo {ws:.2f}")
print(f"reader max latency {rmax(g8):.1f} ms (group_idle=8ms) vs {rmax(g0):.1f} ms (0)")
ok(w8 >= 0.75 * ws, f"group_idle=8ms: writer keeps {w8:.2f} >= 3/4 of solo {ws:.2f} MiB/s")
ok(rmax(g8) <= 2 * rmax(g0) + 1, f"group_idle=8ms: reader max latency {rmax(g8):.1f} <= 2 x {rmax(g0):.1f} + 1 ms")
ok(all(x["ios"] > 0 for x in g8["tenants"]), "every job served")
PY
