#!/usr/bin/env bash
# test-hdd-32-readers.sh: seed 002's latency test 2 through the server
# (seed 002: Jeff Moyer's low-latency tests).  32 fio jobs, each its own NBD connection, read 4 KiB at
# random at depth 1 on the emulated disk (about 100 IOPS in all: the
# device decides, not the CPU).  Run with fifo, then with cfq's defaults.
# With the kernel's rules every new random reader is idled for until its
# fifth seek (67 idle windows armed in 8 s), and seeky readers preempting
# one another starve the tree new readers start on: worst read 3.2 s
# against fifo's 0.4 s (deviations 20 and 25).  Asserted here:
#  - the mechanism: cfq arms at most 8 idle windows for these seeky
#    readers in the whole run (the server's own count, stats=FILE; 1-4
#    here, 53 with the kernel's seek history, whose worst was 2.47 s);
#  - cfq's IOPS >= 0.95x fifo's, and its worst read latency <= 2x fifo's
#    (fifo: one round of 32 seeks, about 0.45 s), which the kernel's
#    rules, at 5-8x, fail.
# The finer target, worst <= 1.1x fifo, is a timing target: it is
# measured by make bench-seeds (medians of rounds), not here.  One run of
# 10 s gave 1.03-1.38x on a quiet machine (fifo's max is one round of
# seeks, cfq's depends on how the 32 readers' first requests interleave).
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
plugin_is_ours || skip "scheduler comparison needs our plugin"
requires_fio_nbd

secs=${READERS_SECONDS:-10}
make_image "$TESTDIR/disk.img" $((64 << 20))

for sched in fifo cfq; do
  start_nbdkit "$sched" file="$TESTDIR/disk.img" scheduler="$sched" \
    emulate=hdd model.seed=1 stats="$TESTDIR/$sched.stats"
  fio --name=rr --ioengine=nbd --uri="nbd+unix:///?socket=${NBDKIT_SOCK[$sched]}" \
    --rw=randread --bs=4k --iodepth=1 --numjobs=32 --size=64M \
    --time_based --runtime="$secs" \
    --output-format=json --output="$TESTDIR/$sched.json" \
    >"$TESTDIR/fio-$sched.log" 2>&1 \
    || fail "fio ($sched) failed: $(tail -5 "$TESTDIR/fio-$sched.log")"
  stop_nbdkit "$sched"
done

"$PYTHON" - "$TESTDIR" <<'EOF' || fail "32 readers: cfq's worst latency is above fifo's"
import json, sys
d = sys.argv[1]
def load(s):
    j = json.load(open(f"{d}/{s}.json"))
    r = [x["read"] for x in j["jobs"]]
    return len(r), sum(x["iops"] for x in r), max(x["clat_ns"]["max"] for x in r) / 1e6
bad = []
nf, fi, fm = load("fifo")
nc, ci, cm = load("cfq")
print(f"fifo: {nf} readers, {fi:.1f} IOPS, worst {fm:.1f} ms")
print(f"cfq:  {nc} readers, {ci:.1f} IOPS, worst {cm:.1f} ms")
if nf != 32 or nc != 32:
    bad.append("not every reader ran")
dev = json.load(open(f"{d}/cfq.stats"))["device"]
print(f"cfq: {dev['slices']} slices, {dev['idle_arms']} idle windows armed;"
      f" worst/fifo {cm / fm:.2f} (the bench target: <= 1.10)")
if dev["idle_arms"] > 8:
    bad.append(f"cfq armed {dev['idle_arms']} idle windows for seeky readers (want <= 8)")
if cm > 2 * fm:
    bad.append(f"cfq worst latency {cm:.1f} ms > 2 x fifo's {fm:.1f}")
if ci < 0.95 * fi:
    bad.append(f"cfq IOPS {ci:.1f} < 0.95 x fifo's {fi:.1f}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
