#!/usr/bin/env bash
# bench/qos.sh: a cap, ours against qemu-storage-daemon's throttle groups.
#
# What it answers: with the same limit on one of three tenants reading the
# same image on the real disk, how close does each server hold the capped
# tenant to its limit second by second, and how much do the two others get
# (the capacity the cap leaves, which a cap must not waste)?
#
#   ours  config= with [group capped] iops_max = LIMIT; groups a and b
#         unlimited (scheduler cfq, BENCH_QOS_CFQ tuning, as tenants.sh)
#   qsd   qemu-storage-daemon: one file blockdev (io_uring, O_DIRECT); the
#         capped export goes through a throttle filter node in a
#         throttle-group with limits.iops-total = LIMIT (QEMU's own bucket:
#         LIMIT/10 deep); a and b are exported from the file node directly
#
# Each tenant is one fio job (one NBD connection) reading 4k at random
# BENCH_QOS_DEPTH deep in its own third of the image, BENCH_RAMP s
# unmeasured, then BENCH_RUNTIME s with fio's IOPS logged per second
# (log_avg_msec=1000).  Rounds alternate the order of the two servers;
# the page cache is dropped before each.  Per server, medians over rounds:
# the capped tenant's IOPS, the share of its 1 s windows (after the first)
# within 5% of the limit, its worst window, and a+b's IOPS; then the ratio
# ours/qsd of a+b (what the others keep).
#
# Environment (defaults):
#   BENCH_QOS_LIMIT=2000      the cap, requests/s
#   BENCH_QOS_DEPTH=16        iodepth of each tenant
#   BENCH_ROUNDS=3, BENCH_RUNTIME=10, BENCH_RAMP=2
#   BENCH_IMAGE_SIZE=2G       image, preallocated with data, in BENCH_DIR
#   BENCH_DIR=/var/tmp        a real disk (not tmpfs)
#   BENCH_QOS_CFQ="mode=iops slice_idle=0 group_idle=8ms rotational=0"
#   BENCH_RESULTS=bench/results  (results in BENCH_RESULTS/qos-DATE/)
#   BENCH_DROP_CACHES=1
# Run it under the machine's benchmark lock: flock /work/wt/bench.lock ...
set -euo pipefail

BENCH_HOME=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$BENCH_HOME")
PLUGIN=$ROOT/plugin/nbdkit-cfq-plugin.so
LIMIT=${BENCH_QOS_LIMIT:-2000}
DEPTH=${BENCH_QOS_DEPTH:-16}
ROUNDS=${BENCH_ROUNDS:-3}
RUNTIME=${BENCH_RUNTIME:-10}
RAMP=${BENCH_RAMP:-2}
SIZE=${BENCH_IMAGE_SIZE:-2G}
CFQ_ARGS=${BENCH_QOS_CFQ:-mode=iops slice_idle=0 group_idle=8ms rotational=0}
OUT=${BENCH_RESULTS:-$ROOT/bench/results}/qos-$(date +%Y%m%d-%H%M%S)
PY=/usr/bin/python3

die () { echo "bench/qos: error: $*" >&2; exit 1; }
say () { echo "bench/qos: $*" >&2; }

[ -f "$PLUGIN" ] || die "plugin not built ($PLUGIN): run make"
command -v fio >/dev/null || die "no fio"
fio --enghelp=nbd >/dev/null 2>&1 || die "fio has no nbd engine"
QSD=$(command -v qemu-storage-daemon || true)
[ -n "$QSD" ] || say "no qemu-storage-daemon: its rows are skipped"

WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/cfq-qos.XXXXXX")
SRV=
cleanup () {
  [ -z "$SRV" ] || { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT
case $(stat -f -c %T "$WORK") in tmpfs|ramfs) die "$WORK is on tmpfs: set BENCH_DIR" ;; esac
mkdir -p "$OUT"

drop_caches () {
  sync
  [ "${BENCH_DROP_CACHES:-1}" = 1 ] && [ "$(id -u)" = 0 ] &&
    echo 3 >/proc/sys/vm/drop_caches || true
}

IMG=$WORK/disk.img
say "image: $IMG ($SIZE, filled with data)"
fio --name=fill --filename="$IMG" --size="$SIZE" --rw=write --bs=1M \
  --ioengine=io_uring --direct=1 --iodepth=8 >/dev/null || die "cannot fill $IMG"
BYTES=$(stat -c %s "$IMG")
REG=$((BYTES / 3 / 1048576 * 1048576))

cat >"$WORK/ours.conf" <<EOF
[device]
file = $IMG
[group capped]
iops_max = $LIMIT
[group a]
[group b]
[export capped]
group = capped
size = $REG
[export a]
group = a
offset = $REG
size = $REG
[export b]
group = b
offset = $((2 * REG))
size = $REG
EOF

# fio_job SOCK OUT_PREFIX: the three tenants; qsd exports whole-image
# nodes, so each job reads its region there by offset.
fio_job () {
  local sock=$1 pre=$2 sys=$3 i=0 e
  {
    printf '[global]\nioengine=nbd\nrw=randread\nbs=4k\niodepth=%s\n' "$DEPTH"
    printf 'time_based=1\nramp_time=%s\nruntime=%s\nlog_avg_msec=1000\n' "$RAMP" "$RUNTIME"
    for e in capped a b; do
      printf '[%s]\nuri=nbd+unix:///%s?socket=%s\nwrite_iops_log=%s-%s\n' \
        "$e" "$e" "$sock" "$pre" "$e"
      if [ "$sys" = qsd ]; then
        printf 'offset=%s\nsize=%s\n' $((i * REG)) "$REG"
      fi
      i=$((i + 1))
    done
  }
}

wait_sock () {
  local i
  for ((i = 0; i < 100; i++)); do
    [ -S "$1" ] && return 0
    kill -0 "$SRV" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

run_one () {  # ROUND SYSTEM
  local r=$1 sys=$2 sock=$WORK/$2.sock pre=$OUT/r$1-$2 log=$OUT/r$1-$2.log
  rm -f "$sock"
  if [ "$sys" = ours ]; then
    # shellcheck disable=SC2086
    nbdkit -f --exit-with-parent -U "$sock" --threads 32 "$PLUGIN" \
      config="$WORK/ours.conf" $CFQ_ARGS >"$log" 2>&1 &
  else
    setpriv --pdeathsig KILL "$QSD" \
      --blockdev driver=file,node-name=f,filename="$IMG",aio=io_uring,cache.direct=on \
      --object throttle-group,id=tg,limits.iops-total="$LIMIT" \
      --blockdev driver=throttle,node-name=t,file=f,throttle-group=tg \
      --nbd-server addr.type=unix,addr.path="$sock" \
      --export type=nbd,id=ec,node-name=t,name=capped \
      --export type=nbd,id=ea,node-name=f,name=a \
      --export type=nbd,id=eb,node-name=f,name=b >"$log" 2>&1 &
  fi
  SRV=$!
  wait_sock "$sock" || { cat "$log" >&2; die "$sys did not start"; }
  fio_job "$sock" "$pre" "$sys" >"$WORK/job.fio"
  drop_caches
  say "round $r: $sys"
  timeout $((RAMP + RUNTIME + 60)) fio --output-format=json \
    --output="$pre.json" "$WORK/job.fio" >>"$log" 2>&1 || die "fio on $sys failed (see $log)"
  kill "$SRV"; wait "$SRV" 2>/dev/null || true
  SRV=
}

SYSTEMS=(ours)
[ -z "$QSD" ] || SYSTEMS+=(qsd)
say "limit $LIMIT IOPS on 1 of 3 tenants, 4k randread depth $DEPTH each;" \
    "$ROUNDS round(s) x ${#SYSTEMS[@]} x (${RAMP}s + ${RUNTIME}s)"
for ((r = 1; r <= ROUNDS; r++)); do
  for ((i = 0; i < ${#SYSTEMS[@]}; i++)); do
    run_one "$r" "${SYSTEMS[$(((i + r - 1) % ${#SYSTEMS[@]}))]}"
  done
done

"$PY" - "$OUT" "$LIMIT" "$ROUNDS" "${SYSTEMS[@]}" <<'EOF' | tee "$OUT/table.txt"
import glob, json, statistics, sys
out, limit, rounds, systems = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def log(r, s, t):
    f = glob.glob("%s/r%d-%s-%s_iops*.log" % (out, r, s, t))[0]
    return [int(l.split(",")[1]) for l in open(f) if l.strip()]
def fio_iops(r, s, t):
    j = json.load(open("%s/r%d-%s.json" % (out, r, s)))
    return next(x for x in j["jobs"] if x["jobname"] == t)["read"]["iops"]
med = statistics.median
summary = {}
print("cap: iops_max = %d on tenant 'capped'; medians over %d round(s)" % (limit, rounds))
print("%-5s %12s %14s %14s %12s %12s" % ("", "capped IOPS", "windows in 5%",
      "worst window", "a+b IOPS", "total IOPS"))
for s in systems:
    cap, inwin, worst, ab, tot = [], [], [], [], []
    for r in range(1, rounds + 1):
        w = log(r, s, "capped")[1:-1] or log(r, s, "capped")
        cap.append(fio_iops(r, s, "capped"))
        inwin.append(sum(abs(x - limit) <= 0.05 * limit for x in w) / len(w))
        worst.append(max(w, key=lambda x: abs(x - limit)))
        ab.append(fio_iops(r, s, "a") + fio_iops(r, s, "b"))
        tot.append(cap[-1] + ab[-1])
    summary[s] = dict(capped_iops=med(cap), windows_within_5pct=med(inwin),
                      worst_window=med(worst), others_iops=med(ab),
                      total_iops=med(tot), rounds=dict(capped=cap,
                      within=inwin, worst=worst, others=ab))
    print("%-5s %12.0f %13.0f%% %14.0f %12.0f %12.0f" % (s, med(cap),
          100 * med(inwin), med(worst), med(ab), med(tot)))
if "qsd" in summary:
    print("ours/qsd: a+b IOPS %.2fx, capped IOPS %.2fx" % (
        summary["ours"]["others_iops"] / summary["qsd"]["others_iops"],
        summary["ours"]["capped_iops"] / summary["qsd"]["capped_iops"]))
json.dump(summary, open(out + "/summary.json", "w"), indent=1)
EOF
say "results in $OUT"
