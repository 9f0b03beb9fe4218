#!/usr/bin/env bash
# test-sim-bursty.sh: a client with thinktime_blocks sends its burst, waits
# for all of it, then thinks, as fio does.  Alone on the emulated SSD a
# burst of 64 takes a few milliseconds, so 64 requests per ~100 ms of
# think: 550..640 IOPS; the same client thinking per slot (thinktime
# alone) sends 4 per 100 ms, about 40 IOPS.  The burst's requests go out
# 4 deep: never more than 4 in flight, so a burst takes 16 rounds of the
# device, and its p99 stays the device's, far under the think time.
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/burst.json" bursty.job --only burst
sim "$tmp/slot.json" bursty.job --only slot
check <<'PY'
b, s = job(J("burst"), "burst"), job(J("slot"), "slot")
ok(550 <= b["iops"] <= 640, f"bursts: {b['iops']:.1f} IOPS in 550..640")
ok(35 <= s["iops"] <= 41, f"per slot: {s['iops']:.1f} IOPS in 35..41")
p99 = b["lat_us"]["p99"] / 1000
ok(p99 < 20, f"bursts: p99 {p99:.2f} ms < 20 (no request waits out a think)")
PY
