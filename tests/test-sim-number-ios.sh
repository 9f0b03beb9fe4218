#!/usr/bin/env bash
# test-sim-number-ios.sh: a tenant with number_ios stops after that many
# requests a connection, and the report says when it was done: from its
# start to its last completion.  On tests/sim/number-ios.job's device (2 ms
# a request, one channel; 2.002 ms with the 4k transfer) 300 requests one
# at a time take 0.6006 s alone; 2 connections of 300 share the channel:
# 600 requests, 1.2012 s.  A tenant whose work outlasts the run is not
# done (null), and the text report says so.
# timeout: 60
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

sim "$tmp/one.json" number-ios.job --only one
sim "$tmp/two.json" number-ios.job --only two
sim "$tmp/long.json" number-ios.job --only long
"$SIM" --only one,long "$JOBS/number-ios.job" > "$tmp/all.txt"
cat "$tmp/all.txt"
check <<'PY'
o, t, l = job(J("one"), "one"), job(J("two"), "two"), job(J("long"), "long")
ok(o["ios"] == 300, f"one: {o['ios']} requests == 300 (it stopped)")
ok(o["done_s"] is not None and abs(o["done_s"] - 0.6006) < 0.001,
   f"one: done in {o['done_s']} s == 300 x 2.002 ms")
ok(t["ios"] == 600, f"two: {t['ios']} requests == 2 x 300")
ok(t["done_s"] is not None and abs(t["done_s"] - 1.2012) < 0.002,
   f"two: done in {t['done_s']} s == 600 x 2.002 ms")
ok(l["done_s"] is None and l["number_ios"] == 100000,
   f"long: not done by the end ({l['ios']} requests)")
txt = open(tmp + "/all.txt").read()
ok("one: 300 requests a connection, done in " in txt, "the text report says when one was done")
ok("long: 100000 requests a connection, not done by the end" in txt,
   "the text report says long was not done")
PY
