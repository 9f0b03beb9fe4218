#!/bin/sh
# bench/srvstat.sh PID: what server PID has used so far, for run.sh.
#
# Prints "cpu TICKS" (utime+stime of the whole process, exited threads
# included, in clock ticks: /proc/PID/stat fields 14 and 15), then one line
# "task TID VOLUNTARY NONVOLUNTARY" per live thread (its context switches,
# /proc/PID/task/TID/status).  The kernel keeps no process-wide count of
# context switches that survives a thread's exit, and nbdkit's worker
# threads exit with their connection, so run.sh takes the second snapshot
# from fio's exec_postrun, while the measured connection is still open, and
# sums the per-thread differences.
pid=$1
sed -e 's/^.*) //' "/proc/$pid/stat" | awk '{ print "cpu", $12 + $13 }'
for st in /proc/"$pid"/task/*/status; do
  awk '/^Pid:/ { t = $2 }
       /^voluntary_ctxt_switches:/ { v = $2 }
       /^nonvoluntary_ctxt_switches:/ { n = $2 }
       END { if (t != "") print "task", t, v + 0, n + 0 }' "$st" 2>/dev/null
done
exit 0
