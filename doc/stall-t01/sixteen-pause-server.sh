#!/bin/bash
# server + two fio processes (t01 alone; t02..t16), pause the second at 5 s for $1 ms.
cd /var/tmp/stall/man
sync; echo 3 > /proc/sys/vm/drop_caches
nbdkit -f --exit-with-parent -U /var/tmp/stall/man/nbd.sock --threads 16 /work/main/plugin/nbdkit-cfq-plugin.so config=/work/main/bench/scenarios/sixteen-mixed.conf file=/var/tmp/stall/man/img control=/var/tmp/stall/man/ctl.sock scheduler=cfq -v -D cfq.trace=1 2> server.log &
srv=$!
for i in $(seq 50); do [ -S nbd.sock ] && break; sleep 0.1; done
fio --output-format=json --output=a.json a.fio & fa=$!
fio --output-format=json --output=b.json b.fio & fb=$!
sleep 5
kill -STOP $fb; date +%s.%N > stop.at; sleep $(echo "scale=3; $1/1000" | bc); kill -CONT $fb; date +%s.%N >> stop.at
wait $fa $fb
/work/main/tools/cfqctl -s /var/tmp/stall/man/ctl.sock stats --json > stats.json
kill $srv; wait $srv
