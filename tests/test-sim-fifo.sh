#!/usr/bin/env bash
# test-sim-fifo.sh: the simulator itself, on the FIFO baseline.
#  - FIFO gives a sequential reader no protection against random readers
#    on the disk (what CFQ's idling is for): it falls below a tenth of its
#    solo throughput, while the random readers get what they would alone.
#  - Same job file and seed give byte-identical output (text and JSON);
#    another seed gives different numbers.
#  - Malformed scenarios (and cfqsim's old job format, with the new
#    spelling) and bad options are rejected with FILE:LINE:.
#  - The watchdog turns a stalled policy into an error, not a hang.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"

sim "$tmp/mix.json" idle.job --sched fifo
sim "$tmp/solo.json" idle.job --sched fifo --only seq
sim "$tmp/rsolo.json" idle.job --sched fifo --only rand1
check <<'PY'
mix, solo, rsolo = J("mix"), J("solo"), J("rsolo")
s, s0 = job(mix, "seq")["mib_s"], job(solo, "seq")["mib_s"]
print(f"seq reader: solo {s0:.2f} MiB/s, with 4 random readers {s:.3f} MiB/s")
ok(s0 > 120, "the disk model streams at >120 MiB/s alone")
ok(s < 0.1 * s0, "FIFO: the sequential reader keeps < 10% of its solo rate")
r = [job(mix, f"rand{i}")["iops"] for i in range(1, 5)]
r0 = job(rsolo, "rand1")["iops"]
print(f"random readers: solo {r0:.1f} IOPS, mixed {r}")
ok(all(abs(x - r[0]) < 0.1 * r[0] for x in r), "FIFO serves the random readers alike")
ok(job(mix, "seq")["ios"] > 0.8 * job(mix, "rand1")["ios"], "FIFO: the sequential reader gets its turn per request, no more")
ok(mix["jain"] > 0 and mix["sched"] == "fifo", "report names the policy")
PY

# Determinism.
"$SIM" "$JOBS/fifo-mix.job" > "$tmp/a.txt"
"$SIM" "$JOBS/fifo-mix.job" > "$tmp/b.txt"
cmp "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL: text output differs between runs"; exit 1; }
"$SIM" --json "$JOBS/fifo-mix.job" > "$tmp/a.json"
"$SIM" --json "$JOBS/fifo-mix.job" > "$tmp/b.json"
cmp "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: JSON output differs between runs"; exit 1; }
"$SIM" --json --seed 6 "$JOBS/fifo-mix.job" > "$tmp/c.json"
if cmp -s "$tmp/a.json" "$tmp/c.json"; then echo "FAIL: --seed changed nothing"; exit 1; fi
echo "ok:   same input and seed -> byte-identical output; another seed differs"
check <<'PY'
a = J("a")
ok(all(j["ios"] > 0 for j in a["tenants"]), "every tenant of fifo-mix.job ran")
ok(job(a, "db")["flushes"] > 0 and job(a, "logger")["flushes"] > 0, "fsync jobs flushed")
lg = job(a, "logger")
ok(lg["flushes"] == lg["ios"] or lg["flushes"] == lg["ios"] - 1, "fsync=1: one flush per write")
ok(abs(sum(j["share"] for j in a["tenants"]) - 1) < 1e-3, "tenant shares add up to 1")
ok(a["duration_s"] == 20 and a["seed"] == 5 and a["queue_depth"] == 4, "globals echoed")
PY

# Bad input: each case must fail with "FILE:LINE: message".
bad () {
  local line=$1 pattern=$2
  shift 2
  if "$SIM" "$@" "$tmp/bad.job" > /dev/null 2> "$tmp/err"; then
    echo "FAIL: accepted bad input (expect line $line: $pattern)"; cat "$tmp/bad.job"; exit 1
  fi
  if ! grep -q "^$tmp/bad.job:$line: .*$pattern" "$tmp/err"; then
    echo "FAIL: expected '$tmp/bad.job:$line: ...$pattern', got:"; cat "$tmp/err"; exit 1
  fi
  echo "ok:   rejected: $(cat "$tmp/err")"
}
printf '[sim]\nduration = 1s\n[tenant a]\nrw = sideways\n' > "$tmp/bad.job"
bad 4 "rw = sideways: want read, write, randread, randwrite, rw or randrw"
printf '[sim]\nduration = 1s\n[tenant a]\nbs = 4k\n\n[tenant b]\niodepth = lots\n' > "$tmp/bad.job"
bad 7 "iodepth = lots: not a number"
printf 'duration = 1s\n[tenant a]\n' > "$tmp/bad.job"
bad 1 "outside any section"
printf '[sim]\n[tenants a]\n' > "$tmp/bad.job"
bad 2 "unknown section"
printf '[sim]\nduraton = 3s\n[tenant a]\n' > "$tmp/bad.job"
bad 2 "unknown key 'duraton' in \[sim\]"
printf '[tenant a]\nrw = read\n[tenant a]\n' > "$tmp/bad.job"
bad 3 "duplicate section \[tenant a\]"
printf '[group g]\nweight = 5000\n[tenant a]\n' > "$tmp/bad.job"
bad 2 "weight = 5000: out of range"
printf '[device]\nemulate = hdd\nmodel.warp = 9\n[tenant a]\n' > "$tmp/bad.job"
bad 3 "model.warp: not a parameter of the hdd model"
printf '[scheduler]\nslice_idel = 8ms\n[tenant a]\n' > "$tmp/bad.job"
bad 2 "unknown key 'slice_idel' in \[scheduler\]"
printf '[device]\nemulate = hdd\n[export e]\n[tenant a]\nexport = e\noffset = 2t\n' > "$tmp/bad.job"
bad 6 "offset 2T is at or beyond the end of export \"e\" (size 1T)"
printf '[sim]\nduration = 1s\n[tenant a\n' > "$tmp/bad.job"
bad 3 "missing ']' in section header"
printf '[tenant a]\nthinktime 5ms\n' > "$tmp/bad.job"
bad 2 "expected 'key = value'"
printf '[tenant a]\nthinktime = 5\n' > "$tmp/bad.job"
bad 2 "thinktime = 5: not a time (want a number with ns, us, ms or s)"
printf '[device]\nemulate = hdd\n[export e]\n[tenant a]\nexport = e\nstart = 2s\n' > "$tmp/bad.job"
bad 4 "starts at or after the end" --duration 1s
printf '[device]\nfile = /nonexistent\n[export e]\n[tenant a]\nexport = e\n' > "$tmp/bad.job"
bad 1 "the simulator needs a device model"
# cfqsim's old format: each old spelling is refused with the new one.
printf '[global]\nduration = 1s\n' > "$tmp/bad.job"
bad 1 "\[global\] is now \[sim\] (duration, seed) and \[device\] (queue_depth)"
printf '[sched]\npolicy = cfq\n' > "$tmp/bad.job"
bad 2 "\[sched\] policy= is now \[scheduler\] scheduler="
printf '[device]\nmodel = hdd\nrpm = 5400\n' > "$tmp/bad.job"
bad 2 "\[device\] model= is now \[device\] emulate="
bad 3 "\[device\] rpm= is now \[device\] model.rpm="
printf '[job a]\ndepth = 4\npattern = rand\n' > "$tmp/bad.job"
bad 1 "\[job NAME\] is now \[tenant NAME\]"
bad 2 "\[job\] depth= is now \[tenant\] iodepth="
bad 3 "\[job\] pattern= is now part of \[tenant\] rw="
printf '[tenant a]\n' > "$tmp/bad.job"
if "$SIM" --set quantum "$tmp/bad.job" 2> "$tmp/err"; then echo "FAIL: --set without ="; exit 1; fi
grep -q "expected KEY=VALUE" "$tmp/err" || { cat "$tmp/err"; exit 1; }
if "$SIM" --sched nonesuch "$tmp/bad.job" 2> "$tmp/err"; then echo "FAIL: unknown sched"; exit 1; fi
grep -q "scheduler=nonesuch: want cfq or fifo" "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "ok:   bad options rejected"

# The scenario's CFQ tunables do not apply under fifo (as in the server):
# the same scenario runs under both, and the report says which applied.
sim "$tmp/gf.json" group-idle.job --sched fifo
sim "$tmp/gc.json" group-idle.job
check <<'PY'
gf, gc = J("gf"), J("gc")
ok(gf["sched"] == "fifo" and gf["tunables"] == {}, "fifo: no tunables applied")
ok(gc["sched"] == "cfq" and gc["tunables"] == {"slice_idle": "0ns"}, "cfq: the scenario's slice_idle applied")
PY

# Watchdog: a policy that never dispatches is reported, exit 3.  The
# broken policies are the test build's (tests/sim/broken-scheds.c).
BROKEN=$top/tests/sim/cfqsim-broken
[ -x "$BROKEN" ] || { echo "tests/sim/cfqsim-broken not built (run make)"; exit 1; }
set +e
"$BROKEN" --sched test-stall --duration 1s "$JOBS/idle.job" > /dev/null 2> "$tmp/err"; rc=$?
"$BROKEN" --sched test-spin --duration 1s "$JOBS/idle.job" > /dev/null 2> "$tmp/err2"; rc2=$?
set -e
[ $rc = 3 ] && grep -q "STALL at t=0" "$tmp/err" || { echo "FAIL: stall not caught (rc $rc)"; cat "$tmp/err"; exit 1; }
[ $rc2 = 3 ] && grep -q "STALL" "$tmp/err2" || { echo "FAIL: spin not caught (rc $rc2)"; cat "$tmp/err2"; exit 1; }
echo "ok:   watchdog reports stalled schedulers"
