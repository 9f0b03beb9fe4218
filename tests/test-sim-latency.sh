#!/usr/bin/env bash
# test-sim-latency.sh: a group's latency target on the simulator, per
# 1 s window (cfqsim --window 1s, the simulator's own p99 of each window):
#  - graded protection: "db", 4 KiB random reads 4 deep beside three
#    greedy tenants on the emulated disk (lat-hdd.job), meets its p99
#    target of 300 ms in >= 90% of the windows after the first two, and
#    the scheduler's own count of misses agrees (<= 20%: its percentile
#    is read up to 6% high, and the first windows count); without the
#    target it meets it in at most a tenth of them (none seen: its p99
#    is about 480 ms);
#  - the others keep working: every greedy tenant still gets at least
#    a tenth of what it got without the target (the floor: an effective
#    weight never below 1/10 of the set one);
#  - a target the disk cannot meet (100 ms) is reported (unmet) and
#    starves nobody: each greedy tenant keeps >= 1/20 of its requests;
#    and when db stops (at 25 s of 40 s) it is no longer unmet: the
#    windows in which it gives no verdict clear the flag;
#  - two targets the disk cannot both meet (lat-hdd-two.job) are balanced
#    by how far each misses: their median p99 / target are within 25% of
#    each other, and both are better than without targets;
#  - latency_mode = binary (the others' depth clamped to 1 while it
#    misses, the kernel's io.latency) does not meet it on the disk, where
#    the queue in service is one group's anyway: its count is printed;
#  - on the emulated SSD (lat-ssd.job: p99 about 142 us without a target)
#    a 135 us target is met in >= 90% of the windows after the first two
#    with >= 0.85 of the requests in all of the run without it; without
#    the target it is met in at most a tenth (none seen); the binary mode meets it in fewer
#    windows and keeps fewer requests;
#  - binary mode on the SSD, db stopping at 17 s (just after a window it
#    missed, so its last verdict clamps the others): the windows with no
#    verdict that follow release the clamp, and from 20 s on every other
#    group does at least 0.9 of what it does with no target at all;
#  - settings without a target change nothing: weights-hdd.job with
#    latency_mode and latency_percentile given gives the same numbers.
# timeout: 180
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sed '/^latency_/d' "$JOBS/lat-hdd.job" > "$tmp/none.job"
sed '/^latency_/d' "$JOBS/lat-hdd-two.job" > "$tmp/two-none.job"
sed 's/^latency_target = .*/latency_target = 100ms/' "$JOBS/lat-hdd.job" > "$tmp/unmet.job"
sed -e 's/^duration = .*/duration = 40s/' -e '/^\[tenant db\]/a stop = 25s' \
    "$tmp/unmet.job" > "$tmp/unmet-stop.job"
grep -q '^stop = 25s' "$tmp/unmet-stop.job"
sed 's/^latency_percentile = 99/&\nlatency_mode = binary/' "$JOBS/lat-hdd.job" > "$tmp/binary.job"
grep -q '^latency_mode = binary' "$tmp/binary.job"
sed 's/^\(\[group .*\]\)$/\1\nlatency_mode = binary\nlatency_percentile = 99/' \
    "$JOBS/weights-hdd.job" > "$tmp/inert.job"
grep -q '^latency_mode = binary' "$tmp/inert.job"

sim "$tmp/lat.json" lat-hdd.job --window 1s
simf "$tmp/none.json" "$tmp/none.job" --window 1s
simf "$tmp/unmet.json" "$tmp/unmet.job" --window 1s
simf "$tmp/unmet-stop.json" "$tmp/unmet-stop.job" --window 1s
sim "$tmp/two.json" lat-hdd-two.job --window 1s
simf "$tmp/two-none.json" "$tmp/two-none.job" --window 1s
simf "$tmp/binary.json" "$tmp/binary.job" --window 1s
sed '/^latency_/d' "$JOBS/lat-ssd.job" > "$tmp/ssd-none.job"
sed 's/^latency_percentile = 99/&\nlatency_mode = binary/' "$JOBS/lat-ssd.job" > "$tmp/ssd-binary.job"
stop=(-e 's/^duration = .*/duration = 30s/' -e '/^\[tenant db\]/a stop = 17s')
sed "${stop[@]}" -e 's/^latency_percentile = 99/&\nlatency_mode = binary/' \
    "$JOBS/lat-ssd.job" > "$tmp/ssd-stop.job"
sed "${stop[@]}" -e '/^latency_/d' "$JOBS/lat-ssd.job" > "$tmp/ssd-stop-none.job"
grep -q '^latency_mode = binary' "$tmp/ssd-stop.job"
grep -q '^stop = 17s' "$tmp/ssd-stop.job"
sim "$tmp/ssd.json" lat-ssd.job --window 1s
simf "$tmp/ssd-none.json" "$tmp/ssd-none.job" --window 1s
simf "$tmp/ssd-binary.json" "$tmp/ssd-binary.job" --window 1s
simf "$tmp/ssd-stop.json" "$tmp/ssd-stop.job" --window 1s
simf "$tmp/ssd-stop-none.json" "$tmp/ssd-stop-none.job" --window 1s
sim "$tmp/plain.json" weights-hdd.job
simf "$tmp/inert.json" "$tmp/inert.job"

check <<'PY'
import statistics
def p99(j, g):
    return group(j, g)["windows"]["p99_us"][2:]

def met(j, g, target_us):
    w = p99(j, g)
    return sum(1 for x in w if x <= target_us), len(w)

lat, none = J("lat"), J("none")
m, n = met(lat, "db", 300000)
ok(m >= 0.9 * n, f"graded: db meets p99 300 ms in {m}/{n} windows (>= 90%)")
m0, n0 = met(none, "db", 300000)
ok(m0 <= 0.1 * n0, f"without the target it meets it in {m0}/{n0} windows"
   f" (median p99 {statistics.median(p99(none, 'db')) / 1000:.0f} ms)")
L = group(lat, "db")["latency"]
ok(L["windows"] >= 55 and L["misses"] <= 0.2 * L["windows"],
   f"the scheduler judged {L['windows']:.0f} windows, {L['misses']:.0f}"
   " missed")
ok(L["unmet"] == 0, "a target the disk meets is not reported unmet")
for t in ("seq", "wr", "rr"):
    a, b = group(lat, t)["ios"], group(none, t)["ios"]
    ok(a >= b / 10, f"{t} keeps {a}/{b} requests with db's target (>= 1/10)")
tot = sum(g["ios"] for g in lat["groups"])
tot0 = sum(g["ios"] for g in none["groups"])
print(f"      requests in all: {tot} with the target, {tot0} without;"
      f" MiB/s {sum(g['mib_s'] for g in lat['groups']):.1f} and"
      f" {sum(g['mib_s'] for g in none['groups']):.1f}")

u = J("unmet")
U = group(u, "db")["latency"]
ok(U["unmet"] == 1 and U["unmet_found"] >= 1,
   f"a 100 ms target is reported unmet ({U['unmet_found']:.0f} times)")
U = group(J("unmet-stop"), "db")["latency"]
ok(U["unmet"] == 0 and U["unmet_found"] >= 1,
   f"stopped at 25 s, it was found unmet {U['unmet_found']:.0f} times and"
   " is no longer")
for t in ("seq", "wr", "rr"):
    a, b = group(u, t)["ios"], group(none, t)["ios"]
    ok(a >= b / 20, f"{t} keeps {a}/{b} requests beside it (>= 1/20)")

two, two0 = J("two"), J("two-none")
r = {g: statistics.median(p99(two, g)) / t
     for g, t in (("db", 300000), ("db2", 400000))}
r0 = {g: statistics.median(p99(two0, g)) / t
      for g, t in (("db", 300000), ("db2", 400000))}
ok(max(r.values()) <= 1.25 * min(r.values()),
   f"two targets: median p99/target db {r['db']:.2f}, db2 {r['db2']:.2f}"
   " (within 25%)")
ok(all(r[g] < r0[g] for g in r),
   f"both better than without targets ({r0['db']:.2f}, {r0['db2']:.2f})")

mb, nb = met(J("binary"), "db", 300000)
print(f"      binary mode: db meets it in {mb}/{nb} windows")

ssd, ssd0, ssdb = J("ssd"), J("ssd-none"), J("ssd-binary")
def ios(j):
    return sum(g["ios"] for g in j["groups"])
m, n = met(ssd, "db", 135)
m0, _ = met(ssd0, "db", 135)
mb, _ = met(ssdb, "db", 135)
ok(m >= 0.9 * n and ios(ssd) >= 0.85 * ios(ssd0),
   f"SSD: db meets p99 135 us in {m}/{n} windows (without the target"
   f" {m0}), {ios(ssd) / ios(ssd0):.2f} of the requests kept")
ok(m0 <= 0.1 * n, f"SSD: without the target it meets it in {m0}/{n}")
ok(mb < m and ios(ssdb) < ios(ssd), f"SSD, binary: {mb}/{n} windows,"
   f" {ios(ssdb) / ios(ssd0):.2f} of the requests kept")

st, st0 = J("ssd-stop"), J("ssd-stop-none")
for g in st0["groups"]:
    if g["name"] == "db":
        continue
    a = min(group(st, g["name"])["windows"]["ios"][20:29])
    b = min(g["windows"]["ios"][20:29])
    ok(a >= 0.9 * b, f"SSD, binary, db stopped: {g['name']} does {a}"
       f" requests a window from 20 s on, {b} with no target (>= 0.9)")

plain, inert = J("plain"), J("inert")
for g in plain["groups"]:
    h = group(inert, g["name"])
    ok(g["ios"] == h["ios"] and g["bytes"] == h["bytes"],
       f"no target: {g['name']} the same ({g['ios']} requests)")
PY
