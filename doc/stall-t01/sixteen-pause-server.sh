#!/bin/bash
# sixteen-pause-server.sh PAUSE_MS [ROOT [DIR]]: server + two fio processes
# (t01 alone; t02..t16), pause the second at 5 s for PAUSE_MS ms.  ROOT: the
# build tree (default /work/main); DIR: the run directory, which must hold
# a 4 GiB image `img` (default /var/tmp/stall/man).  fio writes "fio:
# connected to NBD server" before the JSON in a.json and b.json.
ms=$1 root=${2:-/work/main} d=${3:-/var/tmp/stall/man}
here=$(cd "$(dirname "$0")" && pwd)
cd "$d" || exit 1
for f in a b; do sed "s|/var/tmp/stall/man/nbd.sock|$d/nbd.sock|" "$here/$f.fio" > $f.fio; done
sync; echo 3 > /proc/sys/vm/drop_caches
nbdkit -f --exit-with-parent -U $d/nbd.sock --threads 16 $root/plugin/nbdkit-cfq-plugin.so config=$root/bench/scenarios/sixteen-mixed.conf file=$d/img control=$d/ctl.sock scheduler=cfq -v -D cfq.trace=1 2> server.log &
srv=$!
for i in $(seq 50); do [ -S nbd.sock ] && break; sleep 0.1; done
fio --output-format=json --output=a.json a.fio & fa=$!
fio --output-format=json --output=b.json b.fio & fb=$!
sleep 5
kill -STOP $fb; date +%s.%N > stop.at; sleep $(echo "scale=3; $ms/1000" | bc); kill -CONT $fb; date +%s.%N >> stop.at
wait $fa $fb
$root/tools/cfqctl -s $d/ctl.sock stats --json > stats.json
kill $srv; wait $srv
