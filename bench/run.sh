#!/usr/bin/env bash
# bench/run.sh: `make bench`.  Our plugin against its peers, side by side.
#
# What it answers: how close does nbdkit-cfq (scheduler=fifo) come to the
# disk and to the NBD path, and does it beat the two servers people would use
# instead (nbdkit's file plugin, qemu-storage-daemon)?  Every row runs the
# same fio job file (bench/WORKLOAD.fio) against the same preallocated image
# on the real disk; only the path to the image changes (bench/targets.sh):
#
#   raw   fio io_uring O_DIRECT on the file       the physical limit
#   null  nbdkit null plugin                      the NBD path ceiling
#   file  nbdkit file plugin, cache=none          the stock nbdkit server
#   qsd   qemu-storage-daemon io_uring, O_DIRECT  QEMU's block layer
#   fifo  our plugin, scheduler=fifo              what we ship
#   cfq   our plugin, scheduler=cfq               target: >= 0.95x fifo
#
# then the "tenants" section (bench/tenants.sh): three weighted tenants on
# one server, cfq against fifo, on the disk and on an emulated SSD.
#
# Noise: the machine is shared, so one run means little.  Each round runs
# every (workload x target) once, targets interleaved within the workload and
# their order rotated from round to round, so a noisy spell hits all rows
# alike; the table reports medians over rounds and the spread.  Each run
# starts a fresh server, warms it with a short unmeasured fio run, syncs and
# drops the page cache, then measures: fio's JSON for IOPS, bandwidth and
# completion latency, and the server's utime+stime (/proc/PID/stat) around
# the measured run for CPU per request.
#
# Exit status: non-zero only when the harness itself fails (cannot build the
# image, a peer server will not run, fio or the report breaks).  A missed
# target, a skipped row or a failure of our plugin is reported, not fatal.
#
# Environment (defaults; BENCH_QUICK=1 changes the starred ones):
#   BENCH_ROUNDS=3*         rounds (quick: 1)
#   BENCH_RUNTIME=10*       measured seconds per run (quick: 3)
#   BENCH_RAMP=2*           unmeasured warm-up seconds per run (quick: 1)
#   BENCH_IMAGE_SIZE=4G*    image size, preallocated with real data (quick: 512M)
#   BENCH_THREADS=32        nbdkit --threads for every nbdkit row (>= deepest iodepth)
#   BENCH_WORKLOADS="randread-4k-qd1 randread-4k-qd32 seqread-256k-qd8 randwrite-4k-qd32"
#   BENCH_TARGETS="raw null qnull file qsd fifo floop cfq"
#   BENCH_DIR=/var/tmp      where the image goes (must be a real disk, not tmpfs)
#   BENCH_RESULTS=bench/results
#   BENCH_DROP_CACHES=1     sync + drop the page cache before each measured run
#   BENCH_START_TIMEOUT=10  seconds a server may take to answer
#   BENCH_QUEUE_DEPTH, BENCH_OURS_ARGS, BENCH_OURS_STANDIN: see targets.sh
set -euo pipefail

BENCH_HOME=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$BENCH_HOME")
PLUGIN=$ROOT/plugin/nbdkit-cfq-plugin.so

if [ "${BENCH_QUICK:-0}" = 1 ]; then
  ROUNDS=${BENCH_ROUNDS:-1}; RUNTIME=${BENCH_RUNTIME:-3}
  RAMP=${BENCH_RAMP:-1}; SIZE=${BENCH_IMAGE_SIZE:-512M}
else
  ROUNDS=${BENCH_ROUNDS:-3}; RUNTIME=${BENCH_RUNTIME:-10}
  RAMP=${BENCH_RAMP:-2}; SIZE=${BENCH_IMAGE_SIZE:-4G}
fi
THREADS=${BENCH_THREADS:-32}
WORKLOADS=${BENCH_WORKLOADS:-randread-4k-qd1 randread-4k-qd32 seqread-256k-qd8 randwrite-4k-qd32}
TARGETS=${BENCH_TARGETS-raw null qnull file qsd fifo floop cfq}
DIR=${BENCH_DIR:-/var/tmp}
RESULTS=${BENCH_RESULTS:-$BENCH_HOME/results}
DROP=${BENCH_DROP_CACHES:-1}
START_TIMEOUT=${BENCH_START_TIMEOUT:-10}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

die() { echo "bench: error: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

# ---- cleanup: no server outlives us -----------------------------------------
WORK=
SRV_PID=
SRV_LIVE=()                     # pids of servers we started and not yet reaped
cleanup() {
  local p
  for p in "${SRV_LIVE[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${SRV_LIVE[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  SRV_LIVE=()
  [ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Stop server PID: TERM, up to 5 s grace, then KILL; reap it.
stop_server() {
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local -a keep=()
  for i in "${SRV_LIVE[@]}"; do [ "$i" = "$pid" ] || keep+=("$i"); done
  SRV_LIVE=("${keep[@]}")
}

# Wait until server PID answers an NBD handshake on SOCK.
wait_ready() {
  local pid=$1 sock=$2 i
  SRV_LIVE+=("$pid")
  for ((i = 0; i < START_TIMEOUT * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if [ -S "$sock" ] && nbdinfo --size "$(nbd_uri "$sock")" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# utime + stime of PID in clock ticks (all its threads, live and exited).
cpu_ticks() {
  [ -n "$1" ] || { echo 0; return; }
  # Fields 14 and 15, counted after the ")" closing the command name.
  sed -e 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

drop_caches() {
  [ "$DROP" = 1 ] || return 0
  sync
  if ! echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then
    say "cannot drop the page cache (not root?): continuing with BENCH_DROP_CACHES=0"
    DROP=0
  fi
}

# shellcheck source=bench/targets.sh
. "$BENCH_HOME/targets.sh"

# shellcheck source=bench/tenants.sh
. "$BENCH_HOME/tenants.sh"

# ---- checks --------------------------------------------------------------------
for t in fio nbdkit nbdinfo setpriv numfmt; do
  command -v "$t" >/dev/null || die "$t not found (make deps)"
done
"$PY" -c 'import json, statistics' || die "$PY cannot import json"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS=$ROUNDS"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNTIME=$RUNTIME"
[[ "$RAMP" =~ ^[0-9]+$ ]] || die "BENCH_RAMP=$RAMP"
[[ "$THREADS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS=$THREADS"
IMG_BYTES=$(numfmt --from=iec "$SIZE") || die "BENCH_IMAGE_SIZE=$SIZE"
for w in $WORKLOADS; do
  [ -f "$BENCH_HOME/$w.fio" ] || die "no job file bench/$w.fio"
done
for t in $TARGETS; do
  declare -F "t_${t}_start" >/dev/null || die "unknown target $t (see bench/targets.sh)"
done
fstype=$(stat -f -c %T "$DIR") || die "BENCH_DIR=$DIR"
case $fstype in
  tmpfs | ramfs) die "BENCH_DIR=$DIR is $fstype: the image must be on a real disk" ;;
esac

WORK=$(mktemp -d "$DIR/nbdkit-cfq-bench.XXXXXX")
IMG=$WORK/disk.img
STAMP=$(date -u +%Y%m%d-%H%M%S)
OUT=$RESULTS/$STAMP
mkdir -p "$OUT/json" "$OUT/logs"
ln -sfn "$STAMP" "$RESULTS/latest"

# ---- the image: real blocks, so reads hit the disk --------------------------
# fallocate alone leaves unwritten extents that read back as zeroes without
# touching the device; fill it once with O_DIRECT writes of fio's random data.
say "image: $SIZE on $DIR ($fstype), filling with data"
fallocate -l "$IMG_BYTES" "$IMG" || die "fallocate $IMG"
fio --name=fill --filename="$IMG" --size="$IMG_BYTES" --rw=write --bs=1M \
  --iodepth=16 --ioengine=io_uring --direct=1 --end_fsync=1 \
  --output="$WORK/fill.out" >/dev/null 2>&1 || die "filling the image failed: $(tail -n3 "$WORK/fill.out" 2>/dev/null)"

# ---- which rows can run -------------------------------------------------------
RUN_TARGETS=()
: >"$OUT/targets.tsv"
for t in $TARGETS; do
  if why=$("t_${t}_check"); then
    RUN_TARGETS+=("$t")
    printf '%s\tok\t%s\t\n' "$t" "$("t_${t}_label")" >>"$OUT/targets.tsv"
  else
    say "skipping $t: $why"
    printf '%s\tskipped\t%s\t%s\n' "$t" "$("t_${t}_label")" "$why" >>"$OUT/targets.tsv"
  fi
done
[ -z "$TARGETS" ] || [ "${#RUN_TARGETS[@]}" -gt 0 ] || die "no target can run"

{
  echo "date_utc=$STAMP"
  echo "host=$(hostname) cpus=$(nproc) kernel=$(uname -r)"
  echo "rounds=$ROUNDS runtime_s=$RUNTIME ramp_s=$RAMP image=$SIZE dir=$DIR($fstype)"
  echo "nbdkit_threads=$THREADS drop_caches=$DROP clk_tck=$(getconf CLK_TCK)"
  echo "fio=$(fio --version) nbdkit=$(nbdkit --version | head -n1)"
  if command -v qemu-storage-daemon >/dev/null; then
    echo "qsd=$(qemu-storage-daemon --version | head -n1)"
  fi
  echo "git=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/settings.txt"

# ---- one measured run -------------------------------------------------------------
FAILED_PEERS=0
printf 'round\tworkload\ttarget\tstatus\tjson\tsrv_ticks\tnote\n' >"$OUT/runs.tsv"

run_one() {  # ROUND WORKLOAD TARGET
  local r=$1 w=$2 t=$3 sock="$WORK/$3.sock" log="$OUT/logs/r$1-$2-$3.log"
  local json="json/r$1-$2-$3.json" status=ok note="" c0=0 c1=0 ticks=""
  local -a fioargs
  mapfile -t fioargs < <("t_${t}_fio" "$sock")
  rm -f "$sock"
  SRV_PID=
  "t_${t}_start" "$w" "$sock" "$log"
  if [ -n "$SRV_PID" ] && ! wait_ready "$SRV_PID" "$sock"; then
    status=failed note="server did not start: $(grep -v '^$' "$log" | tail -n1)"
  fi
  if [ $status = ok ] && [ "$RAMP" -gt 0 ] &&
    ! BENCH_RUNTIME=$RAMP BENCH_SEED=$((999 + r)) fio "${fioargs[@]}" \
      --output-format=json --output="$WORK/warm.json" "$BENCH_HOME/$w.fio" \
      >>"$log" 2>&1; then
    status=failed note="fio warm-up failed (see logs/${log##*/})"
  fi
  if [ $status = ok ]; then
    drop_caches
    c0=$(cpu_ticks "$SRV_PID")
    if ! BENCH_RUNTIME=$RUNTIME BENCH_SEED=$((1000 + r)) fio "${fioargs[@]}" \
      --output-format=json --output="$OUT/$json" "$BENCH_HOME/$w.fio" \
      >>"$log" 2>&1; then
      status=failed note="fio failed (see logs/${log##*/})"
    elif [ -n "$SRV_PID" ] && ! kill -0 "$SRV_PID" 2>/dev/null; then
      status=failed note="server died during the run (see logs/${log##*/})"
    else
      c1=$(cpu_ticks "$SRV_PID")
      [ -z "$SRV_PID" ] || ticks=$((c1 - c0))
    fi
  fi
  stop_server "$SRV_PID"
  SRV_PID=
  [ $status = ok ] || json=
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$w" "$t" "$status" "$json" \
    "$ticks" "$note" >>"$OUT/runs.tsv"
  if [ $status != ok ]; then
    say "round $r $w $t: $note"
    case $t in fifo | cfq) ;; *) FAILED_PEERS=$((FAILED_PEERS + 1)) ;; esac
  fi
}

n=${#RUN_TARGETS[@]}
nw=$(wc -w <<<"$WORKLOADS")
say "$ROUNDS round(s) x $nw workload(s) x $n target(s) x (${RAMP}s + ${RUNTIME}s); results in $OUT"
for ((r = 1; r <= ROUNDS; r++)); do
  for w in $WORKLOADS; do
    for ((i = 0; i < n; i++)); do
      t=${RUN_TARGETS[$(((i + r - 1) % n))]}
      say "round $r/$ROUNDS  $w  $t"
      run_one "$r" "$w" "$t"
    done
  done
done
tenants_section
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/settings.txt"

# ---- the table ---------------------------------------------------------------------
"$PY" "$BENCH_HOME/report.py" "$OUT" || die "report failed"
[ "$FAILED_PEERS" = 0 ] || die "$FAILED_PEERS run(s) of peer servers failed (see $OUT/runs.tsv)"
