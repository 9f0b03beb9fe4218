# shellcheck shell=bash
# bench/targets.sh: the rows of the benchmark table (sourced by bench/run.sh).
#
# A target is one way of getting the same fio job to the same image file.
# Each target NAME is four shell functions:
#
#   t_NAME_label          one line naming the row in the table
#   t_NAME_check          runnable here?  Prints nothing and returns 0, or
#                         prints why not and returns 1: the row is then
#                         skipped with that note (never a harness error)
#   t_NAME_start WL EP LOG
#                         start the server for workload WL (the fio job's
#                         name) in the background listening on endpoint EP
#                         (see below), stdout+stderr to LOG, and set SRV_PID
#                         to the server's own pid (the process whose CPU time
#                         is charged to the row); targets without a server
#                         leave SRV_PID empty
#   t_NAME_fio EP         print the fio options that point a job at the target
#   t_NAME_warm           (optional) defined: the measured run starts with
#                         the whole image in the page cache instead of a
#                         dropped one (run.sh: warm_cache)
#
# To add a row: write the four functions and add NAME to BENCH_TARGETS (or to
# the default list in run.sh).  Everything here may use IMG (the image path),
# IMG_BYTES, THREADS (server worker threads) and PLUGIN (our .so) from run.sh.
# An endpoint EP is a Unix socket's path, or tcp:PORT for 127.0.0.1:PORT;
# nbdkit_listen, qsd_addr and nbd_uri turn it into each program's options.
# Servers listen on Unix sockets or on 127.0.0.1 only.  nbdkit runs with
# --exit-with-parent and qemu-storage-daemon under setpriv --pdeathsig, so
# even a killed harness leaves no server behind.

nbd_uri() {
  case $1 in
    tcp:*) printf 'nbd://127.0.0.1:%s/' "${1#tcp:}" ;;
    *) printf 'nbd+unix:///?socket=%s' "$1" ;;
  esac
}
# nbdkit's options to listen on EP, one a line (for mapfile).
nbdkit_listen() {
  case $1 in
    tcp:*) printf -- '-i\n127.0.0.1\n-p\n%s\n' "${1#tcp:}" ;;
    *) printf -- '-U\n%s\n' "$1" ;;
  esac
}
# qemu-storage-daemon's --nbd-server address for EP.
qsd_addr() {
  case $1 in
    tcp:*) printf 'addr.type=inet,addr.host=127.0.0.1,addr.port=%s' "${1#tcp:}" ;;
    *) printf 'addr.type=unix,addr.path=%s' "$1" ;;
  esac
}
# Start nbdkit in the background on EP with output to LOG: nbdkit_bg EP LOG ARGS...
nbdkit_bg() {
  local -a l
  local log=$2
  mapfile -t l < <(nbdkit_listen "$1")
  shift 2
  nbdkit -f --exit-with-parent "${l[@]}" --threads "$THREADS" "$@" >"$log" 2>&1 &
  SRV_PID=$!
}
nbd_fio() { printf -- '--ioengine=nbd\n--uri=%s\n' "$(nbd_uri "$1")"; }

# fio's access pattern of workload WL, from its job file: "random" or
# "sequential".  Used to give the file plugin its best fadvise hint.
wl_pattern() {
  if grep -Eq '^[[:space:]]*rw[[:space:]]*=[[:space:]]*rand' "$BENCH_HOME/$1.fio"; then
    echo random
  else
    echo sequential
  fi
}

# ---- raw: fio straight on the file, io_uring + O_DIRECT --------------------
# The physical limit: no NBD, no server, no copy over a socket.
t_raw_label() { echo "raw file, fio io_uring O_DIRECT (physical limit)"; }
t_raw_check() { return 0; }
t_raw_start() { SRV_PID=; }
t_raw_fio() { printf -- '--ioengine=io_uring\n--direct=1\n--filename=%s\n' "$IMG"; }

# ---- null: nbdkit null plugin -------------------------------------------------
# The NBD path ceiling: fio's NBD client, the socket and nbdkit's request
# loop with no storage behind them (reads return zeroes, writes are dropped).
t_null_label() { echo "nbdkit null plugin (NBD path ceiling)"; }
t_null_check() { return 0; }
t_null_start() { nbdkit_bg "$2" "$3" null size="$IMG_BYTES"; }
t_null_fio() { nbd_fio "$1"; }

# ---- fcache: nbdkit file plugin as a user runs it ----------------------------
# The stock way to serve a file: `nbdkit file FILE`, default cache (reads and
# writes through the page cache).  run.sh drops the cache before the measured
# run, so reads start cold; writes are absorbed by the page cache (fio sends
# no flush), which the O_DIRECT rows cannot do.
t_fcache_label() { echo "nbdkit file plugin, default cache (page cache, cold)"; }
t_fcache_check() { return 0; }
t_fcache_start() { nbdkit_bg "$2" "$3" file file="$IMG"; }
t_fcache_fio() { nbd_fio "$1"; }

# ---- file: nbdkit file plugin, cache=none -----------------------------------
# It reads through the page cache, so here it runs
# with cache=none (evict each range after pread; write, flush and evict after
# pwrite) and the fadvise hint that matches the workload (random: no
# readahead; sequential: readahead), and run.sh drops the page cache before
# every measured run.  It thus does real disk I/O like the O_DIRECT rows, with
# its best readahead setting.
t_file_label() { echo "nbdkit file plugin cache=none fadvise=<pattern>"; }
t_file_check() { return 0; }
t_file_start() {
  nbdkit_bg "$2" "$3" file file="$IMG" cache=none fadvise="$(wl_pattern "$1")"
}
t_file_fio() { nbd_fio "$1"; }

# ---- qsd: qemu-storage-daemon -----------------------------------------------
# QEMU's block layer exporting NBD: io_uring, O_DIRECT (cache.direct=on), one
# event loop thread (qsd has no worker-thread knob; depth is io_uring's).
t_qsd_label() { echo "qemu-storage-daemon aio=io_uring cache.direct=on"; }
t_qsd_check() {
  if ! command -v qemu-storage-daemon >/dev/null; then
    echo "qemu-storage-daemon not installed (apt-get install qemu-system-common, or make deps)"
    return 1
  fi
}
t_qsd_start() {
  setpriv --pdeathsig KILL qemu-storage-daemon \
    --blockdev driver=file,node-name=f,filename="$IMG",aio=io_uring,cache.direct=on \
    --nbd-server "$(qsd_addr "$2")" \
    --export type=nbd,id=e,node-name=f,name=,writable=on >"$3" 2>&1 &
  SRV_PID=$!
}
t_qsd_fio() { nbd_fio "$1"; }

# ---- qnull: qemu-storage-daemon on the null-co driver (opt-in) --------------
# QEMU's NBD path with no disk behind it, the counterpart of the "null"
# row: null/qnull compares the two NBD servers themselves, which bounds
# what any nbdkit plugin can reach against qsd at queue depth 1.
# read-zeroes=off: with it on, qsd knows the range is zero and answers a
# read with a 32-byte hole chunk instead of the data, which nbdkit's null
# plugin does send (4 KiB): not the same work.
t_qnull_label() { echo "qemu-storage-daemon null-co (QEMU's NBD path ceiling)"; }
t_qnull_check() { t_qsd_check; }
t_qnull_start() {
  setpriv --pdeathsig KILL qemu-storage-daemon \
    --blockdev driver=null-co,node-name=f,size="$(stat -c %s "$IMG")",read-zeroes=off \
    --nbd-server "$(qsd_addr "$2")" \
    --export type=nbd,id=e,node-name=f,name=,writable=on >"$3" 2>&1 &
  SRV_PID=$!
}
t_qnull_fio() { nbd_fio "$1"; }

# ---- fifo / cfq: our plugin ---------------------------------------------------
# nbdkit-cfq-plugin with one scheduler.  BENCH_QUEUE_DEPTH sets queue_depth=
# (else the plugin's default); BENCH_OURS_ARGS adds more KEY=VALUE arguments.
# BENCH_OURS_STANDIN=1 puts the nbdkit file plugin (as in the "file" row) in
# the "fifo" slot, clearly labelled, to debug the harness before the plugin
# serves I/O.
ours_args() {
  echo "file=$IMG"
  echo "scheduler=$1"
  [ -z "${BENCH_QUEUE_DEPTH:-}" ] || echo "queue_depth=$BENCH_QUEUE_DEPTH"
  # shellcheck disable=SC2086
  [ -z "${BENCH_OURS_ARGS:-}" ] || printf '%s\n' ${BENCH_OURS_ARGS}
}
ours_start() {  # SCHED WL EP LOG [NBDKIT-OPTION...]
  local -a args
  local sched=$1 ep=$3 log=$4
  shift 4
  mapfile -t args < <(ours_args "$sched")
  nbdkit_bg "$ep" "$log" "$@" "$PLUGIN" "${args[@]}"
}
# Can our plugin with scheduler SCHED start and serve one read?  Runs it
# once on the image and prints the reason if not.
ours_check() {
  # A fresh path: nbdkit does not unlink its socket when it exits.
  local sock log why=""
  sock=$(mktemp -u "$WORK/check.XXXXXX")
  log=$sock.log
  if [ ! -f "$PLUGIN" ]; then
    echo "plugin not built ($PLUGIN)"
    return 1
  fi
  ours_start "$1" - "$sock" "$log"
  if ! wait_ready "$SRV_PID" "$sock"; then
    why="nbdkit ... scheduler=$1 did not start: $(grep -v '^$' "$log" | tail -n1)"
  elif ! fio --name=check --ioengine=nbd --uri="$(nbd_uri "$sock")" \
    --rw=read --bs=4k --size=4k >"$log.read" 2>&1; then
    why="scheduler=$1 started but a 4k read failed: $(grep -v '^$' "$log.read" | tail -n1)"
  fi
  stop_server "$SRV_PID"
  SRV_PID=
  [ -z "$why" ] && return 0
  echo "$why"
  return 1
}

if [ "${BENCH_OURS_STANDIN:-0}" = 1 ]; then
  t_fifo_label() { echo "STAND-IN: nbdkit file plugin in our fifo slot (BENCH_OURS_STANDIN=1)"; }
  t_fifo_check() { return 0; }
  t_fifo_start() { t_file_start "$@"; }
else
  t_fifo_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo"; }
  t_fifo_check() { ours_check fifo; }
  t_fifo_start() { ours_start fifo "$@"; }
fi
t_fifo_fio() { nbd_fio "$1"; }

t_cfq_label() { echo "ours: nbdkit-cfq-plugin scheduler=cfq"; }
t_cfq_check() { ours_check cfq; }
t_cfq_start() { ours_start cfq "$@"; }
t_cfq_fio() { nbd_fio "$1"; }

# ---- page / pwarm: our plugin with cache=page ----------------------------------
# scheduler=fifo cache=page: buffered io_uring through the page cache, the
# scheduler still in front.  "page" starts cold like fcache (run.sh drops
# the cache before the measured run); "pwarm" starts with the whole image
# in the page cache, next to "fwarm", the file plugin's default cache warm.
t_page_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo cache=page (cold)"; }
t_page_check() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} cache=page" ours_check fifo; }
t_page_start() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} cache=page" ours_start fifo "$@"; }
t_page_fio() { nbd_fio "$1"; }
t_pwarm_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo cache=page (warm: image in the page cache)"; }
t_pwarm_check() { t_page_check; }
t_pwarm_start() { t_page_start "$@"; }
t_pwarm_fio() { nbd_fio "$1"; }
t_pwarm_warm() { :; }
# The same as page with -D cfq.inline=0: the ring does the buffered I/O
# instead of the worker (engine.c, the inline path), to measure what the
# inline path buys.  Opt-in: BENCH_TARGETS="... page pring".
t_pring_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo cache=page -D cfq.inline=0 (cold, ring)"; }
t_pring_check() { t_page_check; }
t_pring_start() { t_page_start "$@" -D cfq.inline=0; }
t_pring_fio() { nbd_fio "$1"; }

# The same as fifo with -D cfq.aligned_buffers=0: nbdkit's request buffers
# as glibc aligns them, so every O_DIRECT request is copied through the
# bounce pool (plugin/reqbuf.c), to measure what aligned buffers buy.
# Opt-in: BENCH_TARGETS="... fifo fbounce".
t_fbounce_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo -D cfq.aligned_buffers=0 (every request bounced)"; }
t_fbounce_check() { ours_check fifo; }
t_fbounce_start() { ours_start fifo "$@" -D cfq.aligned_buffers=0; }
t_fbounce_fio() { nbd_fio "$1"; }

# ---- fwarm: nbdkit file plugin, default cache, warm --------------------------
t_fwarm_label() { echo "nbdkit file plugin, default cache (warm: image in the page cache)"; }
t_fwarm_check() { return 0; }
t_fwarm_start() { t_fcache_start "$@"; }
t_fwarm_fio() { nbd_fio "$1"; }
t_fwarm_warm() { :; }

# ---- bfifo / bcfq: another build of our plugin (opt-in) ----------------------
# BENCH_BASE_PLUGIN=PATH names another build's nbdkit-cfq-plugin.so (to
# measure this build against it in the same run, rounds interleaved):
# scheduler=fifo and scheduler=cfq with the same arguments as fifo and cfq,
# and bpage, the same as page.
base_start() {  # SCHED WL EP LOG
  local -a args
  local sched=$1 ep=$3 log=$4
  mapfile -t args < <(ours_args "$sched")
  nbdkit_bg "$ep" "$log" "$BENCH_BASE_PLUGIN" "${args[@]}"
}
base_check() {
  if [ -z "${BENCH_BASE_PLUGIN:-}" ]; then
    echo "BENCH_BASE_PLUGIN is not set (another build's nbdkit-cfq-plugin.so)"
    return 1
  fi
  PLUGIN=$BENCH_BASE_PLUGIN ours_check "$1"
}
t_bfifo_label() { echo "base: ${BENCH_BASE_PLUGIN:-BENCH_BASE_PLUGIN} scheduler=fifo"; }
t_bfifo_check() { base_check fifo; }
t_bfifo_start() { base_start fifo "$@"; }
t_bfifo_fio() { nbd_fio "$1"; }
t_bcfq_label() { echo "base: ${BENCH_BASE_PLUGIN:-BENCH_BASE_PLUGIN} scheduler=cfq"; }
t_bcfq_check() { base_check cfq; }
t_bcfq_start() { base_start cfq "$@"; }
t_bcfq_fio() { nbd_fio "$1"; }
# bpage: the base build as the "page" row (scheduler=fifo cache=page, cold).
t_bpage_label() { echo "base: ${BENCH_BASE_PLUGIN:-BENCH_BASE_PLUGIN} scheduler=fifo cache=page (cold)"; }
t_bpage_check() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} cache=page" base_check fifo; }
t_bpage_start() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} cache=page" base_start fifo "$@"; }
t_bpage_fio() { nbd_fio "$1"; }

# ---- floop: our plugin without the direct path (opt-in) -----------------------
# scheduler=fifo with -D cfq.direct=0: every request goes through the
# dispatcher's loop (two extra thread hand-offs), as before the direct path.
# Side by side with "fifo" it measures what the direct path buys (queue
# depth 1) or costs (deep queues).  BENCH_TARGETS="... fifo floop".
t_floop_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo -D cfq.direct=0 (loop only)"; }
t_floop_check() { ours_check fifo; }
t_floop_start() { ours_start fifo "$@" -D cfq.direct=0; }
t_floop_fio() { nbd_fio "$1"; }
# The same for scheduler=cfq (opt-in: BENCH_TARGETS="... cfq cloop").
t_cloop_label() { echo "ours: nbdkit-cfq-plugin scheduler=cfq -D cfq.direct=0 (loop only)"; }
t_cloop_check() { ours_check cfq; }
t_cloop_start() { ours_start cfq "$@" -D cfq.direct=0; }
t_cloop_fio() { nbd_fio "$1"; }

# ---- onull: our plugin with backend=null (opt-in) -----------------------------
# Our request path (nbdkit glue, scheduler, dispatcher thread) with no storage
# behind it: compare with the nbdkit null row to see our per-request cost
# apart from the disk.  Not in the default list; BENCH_TARGETS="... onull".
t_onull_label() { echo "ours: nbdkit-cfq-plugin scheduler=fifo backend=null (no disk)"; }
t_onull_check() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} backend=null" ours_check fifo; }
t_onull_start() { BENCH_OURS_ARGS="${BENCH_OURS_ARGS:-} backend=null" ours_start fifo "$@"; }
t_onull_fio() { nbd_fio "$1"; }
