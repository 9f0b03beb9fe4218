#!/usr/bin/env bash
# test-sim-events.sh: a scenario's [event NAME] sections act on the
# simulator's virtual clock as the control socket's commands act on the
# server (tests/sim/events.job):
#  - before "weight small 800" at 5s the shares are 1:4 (small 20%), after
#    it 2:1 (small 67%): seconds 1-4 and 6-9 each within 5% (relative);
#  - both events are applied (events_applied), and the group reports its
#    new weight;
#  - the per-second series add up to the totals;
#  - without the events (--duration 5s) the weight never changes.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/ev.json" events.job
sim "$tmp/short.json" events.job --duration 5s
check <<'PY'
a = J("ev")
s, l = job(a, "small"), job(a, "large")
ok(a["events_applied"] == 2, "both events applied")
ok(group(a, "small")["weight"] == 800, "the group has its new weight")
for t in (s, l):
    ok(sum(t["series_bytes"]) == t["bytes"] and sum(t["series_ios"]) == t["ios"],
       "%s: the series add up to the totals" % t["name"])
for sec in range(10):
    tot = s["series_bytes"][sec] + l["series_bytes"][sec]
    print(f"second {sec}: small {s['series_bytes'][sec] / tot:.3f}")
# Seconds 0 (the groups' first turns) and 5 (the change) left out.
for secs, want in ((range(1, 5), 100 / 500), (range(6, 10), 800 / 1200)):
    sm = sum(s["series_bytes"][i] for i in secs)
    share = sm / (sm + sum(l["series_bytes"][i] for i in secs))
    ok(abs(share - want) <= 0.05 * want,
       f"seconds {secs[0]}-{secs[-1]}: small's share {share:.3f} within 5% of {want:.3f}")
b = J("short")
ok(b["events_applied"] == 0 and group(b, "small")["weight"] == 100,
   "a run that ends at 5s applies no event")
PY
