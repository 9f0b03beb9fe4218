#!/usr/bin/env bash
# calibrate-check.sh: how close the calibrated cost model comes to fio on
# the same file, and how long calibration takes (the manual's [device]
# calibrate; doc/design.md "The cost model of a real device").
#
#   bench/calibrate-check.sh [IMAGE]
#
# Each round: the page cache dropped (as root), the server started on
# IMAGE with calibrate=write (CALIBRATE=read: reads only), its `cfqctl
# cost` read (the model's depth and its predicted 4k random read and
# write IOPS and sequential read MiB/s) and the time the log says the
# measurement took; then fio on IMAGE itself with O_DIRECT and io_uring
# at that depth, RUNTIME s each, the cache dropped before each: 4k
# randread, 4k randwrite, 4 MiB sequential read (the size the predicted
# MiB/s is of; calibration itself reads 1 MiB requests, so this also
# checks the linear model between the two).  Prints each round's
# figures and predicted/fio, then the medians over ROUNDS rounds.
#
# fio's randwrite overwrites IMAGE: give only a scratch file.  Without
# IMAGE, BENCH_DIR/calib-check.img (SIZE, default 4G) is made of random
# data (once; it is kept for the next run).  With CALIBRATE=read the
# predicted randwrite IOPS is the generic model's, not a measurement.
# Environment: ROUNDS (3), RUNTIME (5), CALIBRATE (write), SIZE (4G),
# BENCH_DIR (/var/tmp), BENCH_LOCK (a lock file held for each round).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3} RUNTIME=${RUNTIME:-5} CALIBRATE=${CALIBRATE:-write}
PY=/usr/bin/python3
# shellcheck source=bench/calib-functions.sh
. "$top/bench/calib-functions.sh"
calib_setup calib-check "$@"
if [ -n "${BENCH_LOCK:-}" ]; then exec 9>"$BENCH_LOCK"; fi

# fio_run RW BS DEPTH: IOPS and bytes/s of one fio job on IMAGE.
fio_run ()
{
  drop
  fio --name=c --filename="$img" --direct=1 --ioengine=io_uring \
    --rw="$1" --bs="$2" --iodepth="$3" --runtime="$RUNTIME" --time_based \
    --ramp_time=1 --randrepeat=0 --output-format=json >"$dir/fio.json"
  "$PY" -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
print("%.1f %.1f" % (d["iops"], d["bw_bytes"]))' "$dir/fio.json"
}

echo "image $img ($(stat -L -c %s "$img") bytes), calibrate=$CALIBRATE," \
  "rounds=$ROUNDS runtime=${RUNTIME}s, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %6s %5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s\n' round \
  took depth rr_pred rr_fio ratio rw_pred rw_fio ratio seq_pred seq_fio ratio
: >"$dir/rows"
for (( r = 1; r <= ROUNDS; r++ )); do
  [ -z "${BENCH_LOCK:-}" ] || flock 9
  calib_server "$CALIBRATE"
  "$top/tools/cfqctl" -s "$dir/s.ctl" cost >"$dir/cost"
  kill "$pid"; wait "$pid" || true; pid=
  took=$(sed -n 's/.*calibration of .*: measured in \([0-9.]*\) s .*/\1/p' "$dir/s.log")
  [ -n "$took" ] || { grep -i calib "$dir/s.log" >&2; echo "$0: not calibrated" >&2; exit 1; }
  depth=$(sed -n 's/^model: .* depth=\([0-9]*\)$/\1/p' "$dir/cost")
  read -r rr rw seq < <(sed -n 's/^predicted: randread_4k_iops=\([0-9]*\) randwrite_4k_iops=\([0-9]*\) seqread_mibs=\([0-9.]*\)$/\1 \2 \3/p' "$dir/cost")
  read -r frr _ < <(fio_run randread 4k "$depth")
  read -r frw _ < <(fio_run randwrite 4k "$depth")
  read -r _ fseq < <(fio_run read 4M "$depth")
  fseq=$(awk -v b="$fseq" 'BEGIN { printf "%.1f", b / 1048576 }')
  [ -z "${BENCH_LOCK:-}" ] || flock -u 9
  row=$(awk -v r="$r" -v t="$took" -v d="$depth" -v a="$rr" -v b="$frr" \
    -v c="$rw" -v e="$frw" -v f="$seq" -v g="$fseq" 'BEGIN {
      printf "%-5s %6.2f %5d | %9.0f %9.0f %6.2f | %9.0f %9.0f %6.2f | %9.1f %9.1f %6.2f",
        r, t, d, a, b, a / b, c, e, c / e, f, g, f / g }')
  echo "$row"
  echo "$row" >>"$dir/rows"
done
# Medians of took and of each ratio.
"$PY" - "$dir/rows" <<'EOF'
import statistics, sys
rows = [l.replace('|', ' ').split() for l in open(sys.argv[1])]
col = lambda i: statistics.median(float(r[i]) for r in rows)
print("median: calibration %.2f s; predicted/fio: 4k randread %.2f,"
      " 4k randwrite %.2f, seq read %.2f" % (col(1), col(5), col(8), col(11)))
EOF
