#!/usr/bin/env bash
# test-sim-latency-start.sh: a latency target's first windows, with the
# client that has it starting after the others, as one does that
# connects after the target was set.  lat-hdd-turns.job (db's 300 ms p99
# target beside three greedy tenants on the emulated disk) with db
# starting 350 ms, then 400 ms, after the others:
#  - the windows open with db's first request, not when the target is
#    set, so they are db's seconds: the scheduler's first verdict comes
#    one window after it (not at 1 s, on part of a second), and misses
#    (db's p99 at whole turns is about 400 ms), so the turns are cut then;
#  - db's windows 2 to 5, as the scheduler judges them, are met: its
#    second second is the first after the cut.  At 400 ms db is in its
#    turn when the first window closes: that turn is charged as a short
#    one, or db waits while the others catch up on their short turns
#    (window 2 at 403 ms).
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

for ms in 350 400; do
  sed "s/^\[tenant db\]\$/&\nstart = ${ms}ms/" "$JOBS/lat-hdd-turns.job" \
    > "$tmp/late$ms.job"
  grep -q "^start = ${ms}ms\$" "$tmp/late$ms.job"
  simf "$tmp/late$ms.json" "$tmp/late$ms.job" --duration 6s --trace
  grep -E ' group db: p99 | latency: turns cut' "$tmp/late$ms.json.err" \
    > "$tmp/verdicts$ms"
  cat "$tmp/verdicts$ms"
done

check <<'PY'
for ms in (350, 400):
    start = ms / 1000
    v = []
    cut = None
    for line in open(f"{tmp}/verdicts{ms}"):
        f = line.split()
        if "turns" in f and cut is None:
            cut = float(f[0])
        elif "p99" in f:
            v.append((float(f[0]), int(f[f.index("p99") + 1]), f[-1]))
    t = v[0][0] if v else None
    ok(v and start + 1 <= t < start + 1.1, f"db from {ms} ms: first verdict"
       f" at {t} s (want {start + 1:.2f}-{start + 1.1:.2f})")
    ok(v and v[0][2] == "missed" and cut == v[0][0],
       f"db from {ms} ms: it missed and cut the turns then (cut at {cut})")
    w = [(round(t, 2), round(p / 1000), r) for t, p, r in v[1:5]]
    ok(len(w) == 4 and all(r == "met" for _, _, r in w),
       f"db from {ms} ms: windows 2-5 met: {w}")
PY
