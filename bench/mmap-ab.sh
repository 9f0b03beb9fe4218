#!/bin/bash
# bench/mmap-ab.sh: the mmap threshold fixed at 128 KiB (the plugin's default,
# for RSS under churn) against glibc's dynamic threshold
# (MALLOC_MMAP_THRESHOLD_ set large), 256k sequential reads at depth 8
# through the server, alternating, 3 rounds.  Run under the bench lock.
# Needs an image at /var/tmp/lead/img (2 GiB of data).

P=/work/main/plugin/nbdkit-cfq-plugin.so
for round in 1 2 3; do
 for v in fix dyn; do
  sync; echo 3 > /proc/sys/vm/drop_caches
  S=/var/tmp/lead/s.sock; rm -f $S
  if [ $v = dyn ]; then export MALLOC_MMAP_THRESHOLD_=33554432; else unset MALLOC_MMAP_THRESHOLD_; fi
  nbdkit -f -U $S $P file=/var/tmp/lead/img & pid=$!
  unset MALLOC_MMAP_THRESHOLD_
  for _ in $(seq 50); do [ -S $S ] && break; sleep 0.1; done
  r=$(fio --name=s --ioengine=nbd --uri="nbd+unix:///?socket=$S" --rw=read --bs=256k --iodepth=8 --runtime=6 --time_based --ramp_time=1 --output-format=json 2>/dev/null | sed -n "/^{/,\$p" | /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print("%.0f MiB/s p50 %.2f ms"%(j["bw"]/1024, j["clat_ns"]["percentile"]["50.000000"]/1e6))')
  cpu=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null
  echo "round $round $v: $r cpu_ticks $cpu load $(cut -d' ' -f1 /proc/loadavg)"
 done
done
