#!/usr/bin/env bash
# bench/run.sh: `make bench`.  Our plugin against its peers, side by side.
#
# What it answers: how close does nbdkit-cfq (scheduler=fifo) come to the
# disk and to the NBD path, what does each row's server spend per request,
# and does it beat the servers people would use instead (nbdkit's file
# plugin, with and without the page cache, and qemu-storage-daemon)?  Every
# row runs the same fio job file (bench/WORKLOAD.fio) against the same
# preallocated image on the real disk; only the path to the image changes
# (bench/targets.sh):
#
#   raw    fio io_uring O_DIRECT on the file       the physical limit
#   null   nbdkit null plugin                      the NBD path ceiling
#   fcache nbdkit file plugin, default cache, cold the stock nbdkit server
#   file   nbdkit file plugin, cache=none          the same without the cache
#   qsd    qemu-storage-daemon io_uring, O_DIRECT  QEMU's block layer
#   fifo   our plugin, scheduler=fifo              what we ship
#   cfq    our plugin, scheduler=cfq               target: >= 0.95x fifo
#   page   our plugin, fifo, cache=page, cold      next to fcache
#   pwarm  the same, the image in the page cache   next to fwarm
#   fwarm  nbdkit file plugin, default cache, warm
#
# and, opt-in (BENCH_TARGETS): floop/cloop (no direct path), pring (no inline path),
# fbounce (fifo with nbdkit's buffers unaligned: every request bounced), onull
# (backend=null), qnull (qsd on null-co), bfifo/bcfq/bpage (another build of the
# plugin, BENCH_BASE_PLUGIN=PATH: two builds side by side in one run).
#
# each over a Unix socket and over TCP on 127.0.0.1 (BENCH_TRANSPORTS), then
# the "tenants" section (bench/tenants.sh): three weighted tenants on one
# server, cfq against fifo, on the disk and on an emulated SSD.
#
# Noise: the machine is shared, so one run means little.  Each round runs
# every (workload x transport x target) once, targets interleaved within the
# workload and their order rotated from round to round, so a noisy spell hits
# all rows alike; the table reports medians over rounds and the spread.  Each
# run starts a fresh server, warms it with a short unmeasured fio run, syncs
# and drops the page cache (the warm rows: reads the whole image into it
# instead), then measures: fio's JSON for IOPS, bandwidth and
# completion latency, and the server's utime+stime and context switches
# (bench/srvstat.sh, before the run and from fio's exec_postrun, while the
# measured connection and its threads still exist) for CPU and context
# switches per request.  With BENCH_LOCK=FILE each (round, workload,
# transport) group of runs holds flock(1) on FILE, so that benchmarks sharing a
# machine never measure at once while none holds the lock for long.
#
# Exit status: non-zero only when the harness itself fails (cannot build the
# image, a peer server will not run, fio or the report breaks).  A missed
# target, a skipped row or a failure of our plugin is reported, not fatal.
#
# Environment (defaults; BENCH_QUICK=1 changes the starred ones):
#   BENCH_ROUNDS=5*         rounds (quick: 1)
#   BENCH_RUNTIME=5*        measured seconds per run (quick: 3)
#   BENCH_RAMP=1*           unmeasured warm-up seconds per run (quick: 1)
#   BENCH_IMAGE_SIZE=4G*    image size, preallocated with real data (quick: 512M)
#   BENCH_THREADS=32        nbdkit --threads for every nbdkit row (>= deepest iodepth)
#   BENCH_WORKLOADS="randread-4k-qd1 randread-4k-qd32 seqread-256k-qd8 randwrite-4k-qd32"
#   BENCH_TARGETS="raw null fcache file qsd fifo cfq page pwarm fwarm"
#   BENCH_TRANSPORTS="unix tcp"  (raw, which has none, runs once per round)
#   BENCH_DIR=/var/tmp      where the image goes (must be a real disk, not tmpfs)
#   BENCH_RESULTS=bench/results
#   BENCH_DROP_CACHES=1     sync + drop the page cache before each measured run
#   BENCH_START_TIMEOUT=10  seconds a server may take to answer
#   BENCH_LOCK=             a file to flock around each group of runs (none)
#   BENCH_QUEUE_DEPTH, BENCH_OURS_ARGS, BENCH_OURS_STANDIN: see targets.sh
set -euo pipefail

BENCH_HOME=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$BENCH_HOME")
PLUGIN=$ROOT/plugin/nbdkit-cfq-plugin.so

if [ "${BENCH_QUICK:-0}" = 1 ]; then
  ROUNDS=${BENCH_ROUNDS:-1}; RUNTIME=${BENCH_RUNTIME:-3}
  RAMP=${BENCH_RAMP:-1}; SIZE=${BENCH_IMAGE_SIZE:-512M}
else
  ROUNDS=${BENCH_ROUNDS:-5}; RUNTIME=${BENCH_RUNTIME:-5}
  RAMP=${BENCH_RAMP:-1}; SIZE=${BENCH_IMAGE_SIZE:-4G}
fi
THREADS=${BENCH_THREADS:-32}
WORKLOADS=${BENCH_WORKLOADS:-randread-4k-qd1 randread-4k-qd32 seqread-256k-qd8 randwrite-4k-qd32}
TARGETS=${BENCH_TARGETS-raw null fcache file qsd fifo cfq page pwarm fwarm}
TRANSPORTS=${BENCH_TRANSPORTS:-unix tcp}
LOCK=${BENCH_LOCK:-}
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

# Wait until server PID answers an NBD handshake on endpoint EP (a Unix
# socket's path, or tcp:PORT; see targets.sh).
wait_ready() {
  local pid=$1 ep=$2 i
  SRV_LIVE+=("$pid")
  for ((i = 0; i < START_TIMEOUT * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    case $ep in tcp:*) ;; *) [ -S "$ep" ] || { sleep 0.1; continue; } ;; esac
    if nbdinfo --size "$(nbd_uri "$ep")" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# CPU ticks and context switches between two bench/srvstat.sh snapshots
# BEFORE and AFTER: prints "TICKS VOLUNTARY NONVOLUNTARY".  Threads are
# matched by tid; one that is new in AFTER counts from zero, one gone from
# AFTER (it exited before the measured connection was made) counts nothing.
srv_delta() {
  awk 'FNR == NR { if ($1 == "cpu") c0 = $2; else { v0[$2] = $3; n0[$2] = $4 }; next }
       $1 == "cpu" { c1 = $2; next }
       { v += $3 - v0[$2]; n += $4 - n0[$2] }
       END { print c1 - c0, v + 0, n + 0 }' "$1" "$2"
}

# A free TCP port on 127.0.0.1 (the kernel's pick; released at once).
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

drop_caches() {
  [ "$DROP" = 1 ] || return 0
  sync
  if ! echo 3 2>/dev/null >/proc/sys/vm/drop_caches; then
    say "cannot drop the page cache (not root?): continuing with BENCH_DROP_CACHES=0"
    DROP=0
  fi
}

# The whole image in the page cache (the warm rows): written back first,
# then read once (from memory if it is there already).
warm_cache() {
  sync
  dd if="$IMG" of=/dev/null bs=4M status=none || die "cannot read $IMG"
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
for tr in $TRANSPORTS; do
  case $tr in unix | tcp) ;; *) die "BENCH_TRANSPORTS: unknown transport $tr (unix, tcp)" ;; esac
done
[ -n "$TRANSPORTS" ] || die "BENCH_TRANSPORTS is empty"
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
# Hold BENCH_LOCK (if set) around one group of runs, and around the fill:
# 4 GiB of O_DIRECT writes would disturb whoever is measuring meanwhile.
LOCK_FD=
lock_take() {
  [ -n "$LOCK" ] || return 0
  exec {LOCK_FD}>>"$LOCK"
  flock "$LOCK_FD"
}
lock_give() {
  [ -n "$LOCK_FD" ] || return 0
  exec {LOCK_FD}>&-
  LOCK_FD=
}

say "image: $SIZE on $DIR ($fstype), filling with data"
lock_take
fallocate -l "$IMG_BYTES" "$IMG" || die "fallocate $IMG"
fio --name=fill --filename="$IMG" --size="$IMG_BYTES" --rw=write --bs=1M \
  --iodepth=16 --ioengine=io_uring --direct=1 --end_fsync=1 \
  --output="$WORK/fill.out" >/dev/null 2>&1 || die "filling the image failed: $(tail -n3 "$WORK/fill.out" 2>/dev/null)"
lock_give

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

# The disk under BENCH_DIR: its scheduler, and its readahead, which decides
# what the page-cache rows (fcache, file's fadvise=sequential) read ahead.
disk_settings() {
  local src name q
  src=$(findmnt -no SOURCE --target "$DIR" 2>/dev/null) || return 0
  name=$(basename "$(readlink -f "$src")")
  q=/sys/class/block/$name
  [ -e "$q/partition" ] && q=$(dirname "$(readlink -f "$q")")
  [ -r "$q/queue/read_ahead_kb" ] || return 0
  echo "disk=$(basename "$q") disk_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/queue/scheduler")" \
    "read_ahead_kb=$(cat "$q/queue/read_ahead_kb")"
}

# Free page reporting (virtio-balloon): the guest hands free memory back to
# the host, which drops it, and the guest pays a host fault on each page of
# it that it uses again (bench/README.md, "guest memory").  A server that reads through
# the page cache allocates such pages; one that reuses its own buffers does
# not.  Recorded, with what was reported while the bench ran, because it
# decides the buffered peers' sequential rows on such a VM.
page_reporting() {
  local d f r=/sys/module/page_reporting/parameters
  for d in /sys/bus/virtio/devices/*; do
    [ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] || continue
    f=$(cat "$d/features" 2>/dev/null)
    [ "${f:5:1}" = 1 ] || continue       # VIRTIO_BALLOON_F_REPORTING
    echo "page_reporting=on page_reporting_order=$(cat "$r/page_reporting_order" 2>/dev/null || echo '?')"
    return 0
  done
  echo "page_reporting=off"
}
reported_kib() { cat /sys/module/page_reporting/parameters/reported_kib 2>/dev/null || echo '?'; }

{
  echo "date_utc=$STAMP"
  echo "host=$(hostname) cpus=$(nproc) kernel=$(uname -r)"
  disk_settings
  page_reporting
  echo "reported_kib_start=$(reported_kib)"
  echo "rounds=$ROUNDS runtime_s=$RUNTIME ramp_s=$RAMP image=$SIZE dir=$DIR($fstype)"
  echo "nbdkit_threads=$THREADS drop_caches=$DROP clk_tck=$(getconf CLK_TCK)"
  echo "transports=${TRANSPORTS// /,} lock=${LOCK:-none}"
  echo "fio=$(fio --version) nbdkit=$(nbdkit --version | head -n1)"
  if command -v qemu-storage-daemon >/dev/null; then
    echo "qsd=$(qemu-storage-daemon --version | head -n1)"
  fi
  echo "git=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/settings.txt"

# ---- one measured run -------------------------------------------------------------
FAILED_PEERS=0
printf 'round\tworkload\ttransport\ttarget\tstatus\tjson\tsrv_ticks\tsrv_vcsw\tsrv_ivcsw\tnote\n' >"$OUT/runs.tsv"

run_one() {  # ROUND WORKLOAD TRANSPORT TARGET
  local r=$1 w=$2 tr=$3 t=$4 ep id="r$1-$2-$3-$4"
  local log="$OUT/logs/$id.log" json="json/$id.json" status=ok note=""
  local delta="" s0="$WORK/srv.before" s1="$WORK/$2.postrun.txt"
  local -a fioargs post=()
  if [ "$tr" = tcp ]; then
    ep=tcp:$(free_port) || die "no free TCP port"
  else
    ep="$WORK/$t.sock"
    rm -f "$ep"
  fi
  mapfile -t fioargs < <("t_${t}_fio" "$ep")
  SRV_PID=
  "t_${t}_start" "$w" "$ep" "$log"
  if [ -n "$SRV_PID" ] && ! wait_ready "$SRV_PID" "$ep"; then
    status=failed note="server did not start: $(grep -v '^$' "$log" | tail -n1)"
  fi
  if [ $status = ok ] && [ "$RAMP" -gt 0 ] &&
    ! BENCH_RUNTIME=$RAMP BENCH_SEED=$((999 + r)) fio "${fioargs[@]}" \
      --output-format=json --output="$WORK/warm.json" "$BENCH_HOME/$w.fio" \
      >>"$log" 2>&1; then
    status=failed note="fio warm-up failed (see logs/${log##*/})"
  fi
  if [ $status = ok ]; then
    if declare -F "t_${t}_warm" >/dev/null; then
      warm_cache
    else
      drop_caches
    fi
    rm -f "$s1"
    if [ -n "$SRV_PID" ]; then
      "$BENCH_HOME/srvstat.sh" "$SRV_PID" >"$s0"
      # fio runs it (into ./JOBNAME.postrun.txt) after the job, before it
      # closes the connection: the server's threads for it are still there.
      post=("--exec_postrun=$BENCH_HOME/srvstat.sh $SRV_PID")
    fi
    if ! (cd "$WORK" && BENCH_RUNTIME=$RUNTIME BENCH_SEED=$((1000 + r)) \
      fio "${fioargs[@]}" "${post[@]}" --output-format=json \
      --output="$OUT/$json" "$BENCH_HOME/$w.fio") >>"$log" 2>&1; then
      status=failed note="fio failed (see logs/${log##*/})"
    elif [ -n "$SRV_PID" ] && ! kill -0 "$SRV_PID" 2>/dev/null; then
      status=failed note="server died during the run (see logs/${log##*/})"
    elif [ -n "$SRV_PID" ]; then
      [ -s "$s1" ] || "$BENCH_HOME/srvstat.sh" "$SRV_PID" >"$s1"
      delta=$(srv_delta "$s0" "$s1")
    fi
  fi
  stop_server "$SRV_PID"
  SRV_PID=
  [ $status = ok ] || json=
  local -a d
  read -ra d <<<"$delta"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$w" "$tr" "$t" "$status" \
    "$json" "${d[0]:-}" "${d[1]:-}" "${d[2]:-}" "$note" >>"$OUT/runs.tsv"
  if [ $status != ok ]; then
    say "round $r $w $tr $t: $note"
    case $t in fifo | cfq) ;; *) FAILED_PEERS=$((FAILED_PEERS + 1)) ;; esac
  fi
}


n=${#RUN_TARGETS[@]}
nw=$(wc -w <<<"$WORKLOADS")
ntr=$(wc -w <<<"$TRANSPORTS")
say "$ROUNDS round(s) x $nw workload(s) x $ntr transport(s) x $n target(s) x (${RAMP}s + ${RUNTIME}s); results in $OUT"
for ((r = 1; r <= ROUNDS; r++)); do
  for w in $WORKLOADS; do
    k=0
    for tr in $TRANSPORTS; do
      lock_take
      for ((i = 0; i < n; i++)); do
        t=${RUN_TARGETS[$(((i + r - 1) % n))]}
        # raw has no transport: once per round, in the first transport's group
        if [ "$t" = raw ]; then
          [ $k = 0 ] || continue
          say "round $r/$ROUNDS  $w  $t"
          run_one "$r" "$w" none "$t"
          continue
        fi
        say "round $r/$ROUNDS  $w  $tr  $t"
        run_one "$r" "$w" "$tr" "$t"
      done
      lock_give
      k=$((k + 1))
    done
  done
done
lock_take
tenants_section
{
  echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "reported_kib_end=$(reported_kib)"
} >>"$OUT/settings.txt"

# ---- the table ---------------------------------------------------------------------
lock_give
"$PY" "$BENCH_HOME/report.py" "$OUT" || die "report failed"
[ "$FAILED_PEERS" = 0 ] || die "$FAILED_PEERS run(s) of peer servers failed (see $OUT/runs.tsv)"
