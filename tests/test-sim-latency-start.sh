#!/usr/bin/env bash
# test-sim-latency-start.sh: the latency windows open with the first
# request of a group with a target, not when the target is set, so the
# scheduler's windows are that client's seconds.  lat-hdd-turns.job (db's
# 300 ms p99 target beside three greedy tenants on the emulated disk)
# with db starting 350 ms after the others, as a client does that
# connects after the target was set:
#  - the scheduler's first verdict on db comes one window after db's
#    first request (at 1.35 s, not at 1 s on 0.65 s of it), and misses
#    (db's p99 at whole turns is about 400 ms), so the turns are cut
#    then;
#  - db's windows 2 to 5, as the scheduler judges them, are met: its
#    second second is the first after the cut.
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sed 's/^\[tenant db\]$/&\nstart = 350ms/' "$JOBS/lat-hdd-turns.job" \
  > "$tmp/late.job"
grep -q '^start = 350ms$' "$tmp/late.job"
simf "$tmp/late.json" "$tmp/late.job" --duration 6s --trace
grep -E ' group db: p99 | latency: turns cut' "$tmp/late.json.err" \
  > "$tmp/verdicts"
cat "$tmp/verdicts"

check <<'PY'
v = []
cut = None
for line in open(f"{tmp}/verdicts"):
    f = line.split()
    if "turns" in f and cut is None:
        cut = float(f[0])
    elif "p99" in f:
        v.append((float(f[0]), int(f[f.index("p99") + 1]), f[-1]))
ok(v and 1.35 <= v[0][0] < 1.45, f"first verdict at {v[0][0] if v else None}"
   " s (db's first request at 0.35 s: want 1.35-1.45)")
ok(v and v[0][2] == "missed" and cut == v[0][0],
   f"it missed and cut the turns then (cut at {cut})")
w = [(round(t, 2), round(p / 1000), r) for t, p, r in v[1:5]]
ok(len(w) == 4 and all(r == "met" for _, _, r in w),
   f"windows 2-5 met: {w}")
PY
