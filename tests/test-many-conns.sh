#!/usr/bin/env bash
# test-many-conns.sh: many connections in one group.  32 fio
# jobs, each its own NBD connection, read 4 KiB at random at depth 2 from
# one export on an emulated one-channel SSD (2 ms a read: about 500 IOPS,
# far below what the NBD path does even on a loaded machine, so the device
# and the scheduler decide, not the CPU).  Run with fifo, then with cfq's
# defaults, on the same image: cfq's per-connection Jain's index >= 0.98,
# its worst latency <= 2x fifo's, its IOPS >= 0.95x fifo's.  Before the
# service tree keys were measured from the default level (and new queues
# judged by their first request), connections that joined while many were
# busy were keyed seconds behind the rest.
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
plugin_is_ours || skip "scheduler comparison needs our plugin"
requires_fio_nbd

secs=${MANY_SECONDS:-10}
n=${MANY_CONNS:-32}
make_image "$TESTDIR/disk.img" $((64 << 20))

for sched in fifo cfq; do
  start_nbdkit "$sched" file="$TESTDIR/disk.img" scheduler="$sched" \
    emulate=ssd model.channels=1 model.read=2ms model.write=2ms model.seed=1
  fio --name=rr --ioengine=nbd --uri="nbd+unix:///?socket=${NBDKIT_SOCK[$sched]}" \
    --rw=randread --bs=4k --iodepth=2 --numjobs="$n" --size=64M \
    --time_based --runtime="$secs" --ramp_time=1 \
    --output-format=json --output="$TESTDIR/$sched.json" \
    >"$TESTDIR/fio-$sched.log" 2>&1 \
    || fail "fio ($sched) failed: $(tail -5 "$TESTDIR/fio-$sched.log")"
  stop_nbdkit "$sched"
done

"$PYTHON" - "$TESTDIR" "$n" <<'EOF' || fail "many connections: cfq is not as fair as fifo"
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
def load(s):
    j = json.load(open(f"{d}/{s}.json"))
    iops = [x["read"]["iops"] for x in j["jobs"]]
    worst = max(x["read"]["clat_ns"]["max"] for x in j["jobs"]) / 1e6
    jain = sum(iops) ** 2 / (len(iops) * sum(v * v for v in iops))
    return len(iops), sum(iops), jain, worst
bad = []
nf, fi, fj, fw = load("fifo")
nc, ci, cj, cw = load("cfq")
print(f"fifo: {nf} connections, {fi:.0f} IOPS, Jain {fj:.4f}, worst {fw:.1f} ms")
print(f"cfq:  {nc} connections, {ci:.0f} IOPS, Jain {cj:.4f}, worst {cw:.1f} ms")
if nf != n or nc != n:
    bad.append("not every connection ran")
if cj < 0.98:
    bad.append(f"cfq per-connection Jain {cj:.4f} < 0.98")
if cw > 2 * fw:
    bad.append(f"cfq worst latency {cw:.1f} ms > 2 x fifo's {fw:.1f}")
if ci < 0.95 * fi:
    bad.append(f"cfq IOPS {ci:.0f} < 0.95 x fifo's {fi:.0f}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
