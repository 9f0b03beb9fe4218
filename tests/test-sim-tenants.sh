#!/usr/bin/env bash
# test-sim-tenants.sh: the workload keys of a [tenant NAME] do what they
# say, in cfqsim (tests/sim/tenants.job, on the SSD model):
#  - connections = 8 is 8 queues, served alike (Jain over them);
#  - rate_iops = 200 per connection holds each of 2 connections to 200;
#  - rate = 2MB/s holds a writer to 2,000,000 bytes/s;
#  - rw = randrw with rwmixread = 70 writes 30% of its requests, and
#    fsync = 4 flushes once per 4 writes;
#  - start = 2s, stop = 4s: a tenant runs only in its window;
#  - cfqconf --json --sim shows the workloads the simulator ran.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/all.json" tenants.job
sim "$tmp/late5.json" tenants.job --only late
sim "$tmp/late3.json" tenants.job --only late --duration 3s
"$top/tools/cfqconf" --json --sim "$JOBS/tenants.job" > "$tmp/conf.json"
check <<'PY'
import json
a = J("all")
m = job(a, "many")
print(f"many: {m['connections']} connections, {m['iops']:.0f} IOPS, Jain over them {m['jain_connections']:.4f}")
ok(m["connections"] == 8 and m["jain_connections"] > 0.95, "8 connections, served alike")
p = job(a, "paced")
print(f"paced: {p['iops']:.2f} IOPS over 2 connections")
ok(abs(p["iops"] - 400) <= 4, "rate_iops = 200 per connection: 400 IOPS in all")
b = job(a, "bytes")
bps = b["bytes"] / a["duration_s"]
print(f"bytes: {bps:.0f} bytes/s, {b['writes']} writes of {b['ios']}")
ok(abs(bps - 2e6) <= 0.02 * 2e6, "rate = 2MB/s: 2,000,000 bytes/s within 2%")
ok(b["writes"] == b["ios"], "rw = write: every request writes")
x = job(a, "mixed")
frac = x["writes"] / x["ios"]
print(f"mixed: {frac:.4f} of requests write, {x['flushes']} flushes for {x['writes']} writes")
ok(0.29 <= frac <= 0.31, "rwmixread = 70: 30% writes")
ok(abs(x["flushes"] - x["writes"] / 4) <= 1, "fsync = 4: one flush per 4 writes")
ok(job(a, "many")["writes"] == 0 and job(a, "many")["flushes"] == 0, "a reader writes nothing")
l5, l3 = job(J("late5"), "late")["ios"], job(J("late3"), "late")["ios"]
print(f"late: {l5} requests in [2s, 4s), {l3} in [2s, 3s)")
ok(l5 > 0 and abs(l3 - l5 / 2) <= 0.05 * l5, "start = 2s, stop = 4s: it runs in its window only")
c = json.load(open(f"{tmp}/conf.json"))
t = {x["name"]: x for x in c["tenants"]}
ok(c["device"]["simulated"] and c["device"]["size"] == 512 << 30, "cfqconf --sim: the device is the ssd model's 512G")
ok(t["many"]["connections"] == 8 and t["many"]["rw"] == "randread", "cfqconf --json: many")
ok(t["paced"]["rate_iops"] == 200 and t["paced"]["offset"] == 10 << 30 and t["paced"]["size"] == 10 << 30, "cfqconf --json: paced")
ok(t["bytes"]["rate"] == 2000000 and t["bytes"]["bs"] == 65536, "cfqconf --json: bytes")
ok(t["mixed"]["rwmixread"] == 70 and t["mixed"]["fsync"] == 4 and t["mixed"]["size"] == 50 << 30, "cfqconf --json: mixed")
ok(t["late"]["start_ns"] == 2 * 10**9 and t["late"]["stop_ns"] == 4 * 10**9, "cfqconf --json: late")
ok(c["scheduler"]["tunables"]["slice_idle"] == {"value": "0ns", "raw": 0, "unit": "ns", "set": True}, "cfqconf --json: slice_idle")
ok(c["sim"] == {"duration_ns": 5 * 10**9, "seed": 7, "line": 8}, "cfqconf --json: [sim]")
PY
