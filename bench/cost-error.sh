#!/usr/bin/env bash
# cost-error.sh: how far the calibrated cost model's predictions stray
# from the device under a mixed load, after its online correction (the
# manual's [device] calibrate and cfqctl cost; doc/design.md "The cost
# model of a real device").
#
#   bench/cost-error.sh [IMAGE]
#
# The page cache is dropped (as root), the server started on IMAGE with
# calibrate=CALIBRATE and a control socket, then three clients run for
# SECONDS_RUN at once through NBD (fio's nbd engine): 4k random reads 8 deep,
# 64k random writes 4 deep, 1 MiB sequential reads 2 deep.  Every second
# `cfqctl cost` is read: the last window's error (the model's corrected
# prediction of the busy time against the busy time that passed, over
# windows of 250 ms of busy time) and vrate.  Prints one line per sample,
# then the share of samples whose error is within 20%, the median and
# largest |error|, and vrate's range.
#
# The writes overwrite IMAGE: give only a scratch file.  Without IMAGE,
# BENCH_DIR/calib-check.img (SIZE, default 4G, the file
# bench/calibrate-check.sh uses) is made of random data once and kept.
# Environment: SECONDS_RUN (60), CALIBRATE (read), SIZE (4G), BENCH_DIR
# (/var/tmp), BENCH_LOCK (a lock file held for the run).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
RUN=${SECONDS_RUN:-60} CALIBRATE=${CALIBRATE:-read}
PY=/usr/bin/python3
# shellcheck source=bench/calib-functions.sh
. "$top/bench/calib-functions.sh"
calib_setup cost-error "$@"
if [ -n "${BENCH_LOCK:-}" ]; then exec 9>"$BENCH_LOCK"; flock 9; fi

calib_server "$CALIBRATE"
"$top/tools/cfqctl" -s "$dir/s.ctl" cost | sed 's/^/# /'

size=$(stat -L -c %s "$img")
third=$(( size / 3 / 1048576 * 1048576 ))
uri="nbd+unix:///?socket=$dir/s.sock"
cat >"$dir/mix.fio" <<EOF
[global]
ioengine=nbd
uri=$uri
runtime=$RUN
time_based
size=$third
[rr4k]
rw=randread
bs=4k
iodepth=8
offset=0
[rw64k]
rw=randwrite
bs=64k
iodepth=4
offset=$third
[seq1m]
rw=read
bs=1M
iodepth=2
offset=$(( 2 * third ))
EOF
fio --output-format=json "$dir/mix.fio" >"$dir/fio.json" 2>"$dir/fio.err" &
fpid=$!
printf '%4s %9s %7s %8s\n' sec error vrate windows
: >"$dir/samples"
for (( s = 1; s <= RUN; s++ )); do
  sleep 1
  "$top/tools/cfqctl" -s "$dir/s.ctl" cost >"$dir/cost" || break
  e=$(sed -n 's/^error: last \([-+0-9.]*\)%.*(\([0-9]*\) windows.*/\1 \2/p' "$dir/cost")
  v=$(sed -n 's/^vrate: \([0-9.]*\)$/\1/p' "$dir/cost")
  read -r err win <<<"$e"
  printf '%4d %8s%% %7s %8s\n' "$s" "$err" "$v" "$win"
  echo "$err $v $win" >>"$dir/samples"
done
wait "$fpid" || { cat "$dir/fio.err" >&2; exit 1; }
"$PY" - "$dir/samples" "$dir/fio.json" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
# Only samples after a new window closed say something new.
seen, errs, vr = None, [], []
for e, v, w in rows:
    if w != seen and int(w) > 0:
        errs.append(abs(float(e)))
        vr.append(float(v))
    seen = w
text = open(sys.argv[2]).read()
j = json.loads(text[text.index("{"):])   # fio's engine may print first
for job in j["jobs"]:
    d = job["read"] if job["read"]["io_bytes"] else job["write"]
    print("# %-6s %8.0f IOPS %7.1f MiB/s" % (job["jobname"], d["iops"],
                                             d["bw_bytes"] / 1048576))
if not errs:
    sys.exit("no window of busy time closed: the device never had the"
             " model's depth of requests at it")
inside = sum(1 for x in errs if x <= 20.0)
print("samples with a new window: %d; |error| <= 20%%: %d (%.0f%%);"
      " median |error| %.1f%%, largest %.1f%%; vrate %.3f..%.3f"
      % (len(errs), inside, 100.0 * inside / len(errs),
         statistics.median(errs), max(errs), min(vr), max(vr)))
PY
