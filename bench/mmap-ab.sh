#!/bin/bash
# bench/mmap-ab.sh: the mmap threshold fixed at 128 KiB (the plugin's default,
# for RSS under churn) against glibc's dynamic threshold
# (MALLOC_MMAP_THRESHOLD_ set large), 256k sequential reads at depth 8
# through the server, alternating, 3 rounds, each under flock on BENCH_LOCK
# (default /var/tmp/nbdkit-cfq-bench.lock; empty: no lock).  Root, for
# drop_caches.
#
#   bench/mmap-ab.sh [PLUGIN.so]     (default: this tree's plugin)
#
# MMAP_AB_DIR (default /var/tmp/mmap-ab) holds the socket and the image,
# MMAP_AB_DIR/img, which must hold 2 GiB of data.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
P=${1:-$ROOT/plugin/nbdkit-cfq-plugin.so}
D=${MMAP_AB_DIR:-/var/tmp/mmap-ab}
LOCK=${BENCH_LOCK-/var/tmp/nbdkit-cfq-bench.lock}
[ -f "$D/img" ] || { echo "mmap-ab.sh: no image at $D/img" >&2; exit 2; }
if [ -n "$LOCK" ]; then exec 9>"$LOCK"; fi
for round in 1 2 3; do
 for v in fix dyn; do
  if [ -n "$LOCK" ]; then flock 9; fi
  sync; echo 3 > /proc/sys/vm/drop_caches
  S=$D/s.sock; rm -f "$S"
  if [ $v = dyn ]; then export MALLOC_MMAP_THRESHOLD_=33554432; else unset MALLOC_MMAP_THRESHOLD_; fi
  nbdkit -f -U "$S" "$P" file="$D/img" & pid=$!
  unset MALLOC_MMAP_THRESHOLD_
  for _ in $(seq 50); do [ -S "$S" ] && break; sleep 0.1; done
  r=$(fio --name=s --ioengine=nbd --uri="nbd+unix:///?socket=$S" --rw=read --bs=256k --iodepth=8 --runtime=6 --time_based --ramp_time=1 --output-format=json 2>/dev/null | sed -n "/^{/,\$p" | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print("%.0f MiB/s p50 %.2f ms"%(j["bw"]/1024, j["clat_ns"]["percentile"]["50.000000"]/1e6))')
  cpu=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  if [ -n "$LOCK" ]; then flock -u 9; fi
  echo "round $round $v: $r cpu_ticks $cpu load $(cut -d' ' -f1 /proc/loadavg)"
 done
done
