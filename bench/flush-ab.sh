#!/usr/bin/env bash
# flush-ab.sh: two builds of the plugin side by side on writes and
# flushes (doc/design.md, "Flushes: a descriptor per connection").
#
#   bench/flush-ab.sh OLD.so NEW.so
#
# fio's nbd engine over a Unix socket: JOBS jobs (each its own
# connection) of 4k random writes at depth QD, with a flush after every
# FSYNC writes (0: none), for RUNTIME seconds; ROUNDS rounds, the two
# builds alternating, a fresh server and a dropped page cache (as root)
# before each.  The server: scheduler=cfq, CACHE (none|page), WRITES
# (auto|sync|async: sync makes every write FUA).  Prints each run's write
# IOPS and p50, then the medians and new/old.
# Environment: JOBS (4), QD (1), FSYNC (1), CACHE (none), WRITES (auto),
# ROUNDS (3), RUNTIME (8), BENCH_DIR (/var/tmp), SIZE (1G).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD.so NEW.so" >&2; exit 2; }
old=$(readlink -f "$1") new=$(readlink -f "$2")
JOBS=${JOBS:-4} QD=${QD:-1} FSYNC=${FSYNC:-1} CACHE=${CACHE:-none}
WRITES=${WRITES:-auto} ROUNDS=${ROUNDS:-3} RUNTIME=${RUNTIME:-8}
PY=/usr/bin/python3
dir=$(mktemp -d "${BENCH_DIR:-/var/tmp}/flush-ab.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fallocate -l "${SIZE:-1G}" "$dir/disk.img"
dd if=/dev/urandom of="$dir/disk.img" bs=1M count=64 oflag=direct conv=notrunc status=none
printf '[device]\nfile = %s\ncache = %s\n[scheduler]\nscheduler = cfq\n[export]\nwrites = %s\n' \
  "$dir/disk.img" "$CACHE" "$WRITES" >"$dir/s.conf"
echo "jobs=$JOBS qd=$QD fsync=$FSYNC cache=$CACHE writes=$WRITES rounds=$ROUNDS runtime=${RUNTIME}s load: $(cut -d' ' -f1-3 /proc/loadavg)"

run ()
{
  local tag=$1 so=$2 r=$3 pid i
  rm -f "$dir/s.sock"
  if [ "$(id -u)" = 0 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
  nbdkit -f -U "$dir/s.sock" --threads 32 "$so" config="$dir/s.conf" &
  pid=$!
  for (( i = 0; i < 100; i++ )); do [ -S "$dir/s.sock" ] && break; sleep 0.1; done
  fio --name=w --ioengine=nbd --uri="nbd+unix:///?socket=$dir/s.sock" \
    --rw=randwrite --bs=4k --iodepth="$QD" --numjobs="$JOBS" --fsync="$FSYNC" \
    --size="${SIZE:-1G}" --runtime="$RUNTIME" --time_based --group_reporting \
    --output-format=json 2>/dev/null | sed -n '/^{/,$p' >"$dir/$tag.$r.json"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  "$PY" - "$dir/$tag.$r.json" "$tag" "$r" <<'EOP'
import json, sys
w = json.load(open(sys.argv[1]))["jobs"][0]["write"]
print("%s round %s: %.0f IOPS, p50 %.0f us" % (sys.argv[2], sys.argv[3], w["iops"],
      w["clat_ns"]["percentile"]["50.000000"] / 1e3))
EOP
}

for (( r = 1; r <= ROUNDS; r++ )); do
  if (( r % 2 )); then run old "$old" "$r"; run new "$new" "$r"
  else run new "$new" "$r"; run old "$old" "$r"; fi
done
"$PY" - "$dir" "$ROUNDS" <<'EOP'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
med = {t: statistics.median(json.load(open("%s/%s.%d.json" % (d, t, r)))["jobs"][0]["write"]["iops"]
                            for r in range(1, n + 1)) for t in ("old", "new")}
print("median IOPS: old %.0f, new %.0f, new/old %.2fx" % (med["old"], med["new"], med["new"] / med["old"]))
EOP
