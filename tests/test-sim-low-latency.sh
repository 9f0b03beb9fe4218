#!/usr/bin/env bash
# test-sim-low-latency.sh: acceptance 5, low_latency (seed 002).
#  a) 4 random readers + 1 sequential async writer (tests/sim/lowlat-4.job;
#     the readers read at random in small hot regions, see there):
#     the readers' max latency is lower with low_latency=1 than with 0, and
#     the writer keeps at least a quarter of its solo throughput.
#  b) 32 random readers (tests/sim/lowlat-32.job): the readers' max latency
#     with low_latency=1 is at most half of that with low_latency=0.
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/a1.json" lowlat-4.job --set low_latency=1
sim "$tmp/a0.json" lowlat-4.job --set low_latency=0
sim "$tmp/wsolo.json" lowlat-4.job --set low_latency=1 --only writer
sim "$tmp/b1.json" lowlat-32.job --set low_latency=1
sim "$tmp/b0.json" lowlat-32.job --set low_latency=0
check <<'PY'
def rmax(j):
    return max(x["lat_us"]["max"] for x in j["tenants"] if x["name"].startswith("reader")) / 1000
a1, a0, b1, b0 = J("a1"), J("a0"), J("b1"), J("b0")
w1, w0, ws = job(a1, "writer")["mib_s"], job(a0, "writer")["mib_s"], job(J("wsolo"), "writer")["mib_s"]
print(f"4 readers + writer: reader max latency {rmax(a1):.1f} ms (low_latency=1) vs {rmax(a0):.1f} ms (0)")
print(f"  writer {w1:.2f} MiB/s (low_latency=1), {w0:.2f} (0), solo {ws:.2f}")
print(f"32 readers: reader max latency {rmax(b1):.1f} ms (low_latency=1) vs {rmax(b0):.1f} ms (0)")
ok(rmax(a1) < rmax(a0), "4 readers: max latency lower with low_latency=1")
ok(w1 >= 0.25 * ws, f"writer not starved: {w1:.2f} >= 1/4 of solo {ws:.2f} MiB/s")
ok(rmax(b1) <= 0.5 * rmax(b0), "32 readers: max latency at most half with low_latency=1")
ok(all(x["ios"] > 0 for x in b1["tenants"]), "32 readers: every reader served")
PY
