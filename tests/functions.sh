# shellcheck shell=bash
# tests/functions.sh: what every shell test sources.
#
# A test is a bash script that does
#
#     . "$(dirname "$0")/functions.sh"
#     requires_plugin                # our plugin must be built (else FAIL)
#     requires_cmd nbdsh             # or skip (exit 77) with a reason
#     start_nbdkit srv file=$TESTDIR/disk.img
#     "$SHADOW" -s 1 "${NBDKIT_SOCK[srv]}"
#
# and gets, for free:
#  - TESTDIR: a private directory from mktemp (sockets, images, logs, mounts),
#    removed at exit;
#  - cleanup at exit, whatever the exit path (success, failed assertion under
#    set -e, signal from the runner's timeout): hooks run last-registered
#    first, so a mount made on a loop device on an image is unmounted before
#    the loop device is detached before the image is removed;
#  - skip (exit 77) with a one-line reason that tests/run.sh shows: the reason
#    is printed again after the cleanup so it stays the last line of the log.
#
# Which plugin is under test: CFQ_PLUGIN, by default our build
# (plugin/nbdkit-cfq-plugin.so).  CFQ_PLUGIN=file runs the same tests against
# nbdkit's own file plugin: that is how the tests were developed before our
# plugin served I/O, and it keeps the tests honest (a test that fails on the
# reference server is a broken test).  Options only our plugin has
# (scheduler=, queue_depth=) are dropped for the file plugin.  When
# CFQ_PLUGIN names our .so and it is missing, the test FAILS: a missing build
# must never look like a pass or a skip.

set -eu
set -o pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CFQ_PLUGIN=${CFQ_PLUGIN:-$top/plugin/nbdkit-cfq-plugin.so}
# The integrity client.  Tests call it with -u: our plugin advertises its
# O_DIRECT alignment as the minimum block size but documents that it serves
# smaller requests by read-modify-write, so the client sends them anyway.
SHADOW=$top/tests/nbd/shadow
PYTHON=/usr/bin/python3             # the libnbd bindings live only here
# The servers the tests start measure no cost model (calibrate= given to a
# server still wins): each would spend seconds measuring a small image at
# start.  tests/test-calibration.sh measures; CFQ_CALIBRATE=read make check
# runs every test with the default.
export CFQ_CALIBRATE=${CFQ_CALIBRATE:-off}

# ---- cleanup ---------------------------------------------------------------

_cleanup_hooks=()
# How a sanitizer report starts (ASan, LSan, TSan; UBSan's "runtime error").
SAN_REPORT_RE=': runtime error: |ERROR: (Address|Leak|Thread)Sanitizer'
_skip_reason=
_in_cleanup=0

# cleanup_fn CMD [ARGS...]: run CMD at exit (hooks run in reverse order).
cleanup_fn ()
{
  local q
  q=$(printf '%q ' "$@")
  _cleanup_hooks+=("$q")
}

_run_cleanup ()
{
  local status=$? i log
  [ "$_in_cleanup" = 1 ] && return
  _in_cleanup=1
  set +e
  trap '' INT QUIT TERM
  if [ "$status" != 0 ] && [ "$status" != 77 ]; then
    for log in "$TESTDIR"/*.log; do
      [ -f "$log" ] || continue
      echo "---- last lines of $log ----"
      tail -40 "$log"
    done
  fi
  # Every hook but the first (rm -rf TESTDIR): servers are stopped now.
  for (( i = ${#_cleanup_hooks[@]} - 1; i >= 1; i-- )); do
    eval "${_cleanup_hooks[i]}" >/dev/null 2>&1 </dev/null
  done
  # A sanitizer report in a server's log fails the test: UBSan in a gcc
  # ASan build writes to stderr whatever log_path says.
  if grep -H -E "$SAN_REPORT_RE" "${TESTDIR:-/nonexistent}"/*.log 2>/dev/null
  then
    echo "sanitizer report in a server log (above)"
    [ "$status" = 0 ] && status=1
  fi
  [ ${#_cleanup_hooks[@]} = 0 ] ||
    eval "${_cleanup_hooks[0]}" >/dev/null 2>&1 </dev/null
  if [ "$status" = 77 ]; then
    echo "$_skip_reason"
  elif [ "$status" != 0 ]; then
    echo "$0: FAILED (exit $status)"
  fi
  exit "$status"
}
trap _run_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 131' QUIT

# skip REASON: this test cannot run here.
skip ()
{
  _skip_reason="SKIP: $*"
  echo "$_skip_reason"
  exit 77
}

# fail MESSAGE: an assertion failed.
fail ()
{
  echo "FAIL: $*" >&2
  exit 1
}

# ---- requirements ----------------------------------------------------------

# requires CMD [ARGS...]: skip unless the command succeeds.
requires ()
{
  "$@" >/dev/null 2>&1 </dev/null || skip "requires: $*"
}

# requires_cmd NAME...: skip unless every program is on PATH.
requires_cmd ()
{
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null 2>&1 || skip "requires the program $c"
  done
}

# requires_fio_nbd: skip unless fio is on PATH and has its nbd engine.
requires_fio_nbd ()
{
  requires_cmd fio
  fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd engine"
}

requires_root ()
{
  [ "$(id -u)" = 0 ] || skip "requires root"
}

# requires_loop: loop devices can be created and attached here.
requires_loop ()
{
  requires_root
  requires_cmd losetup
  [ -e /dev/loop-control ] || skip "no /dev/loop-control (no loop driver)"
  losetup -f >/dev/null 2>&1 || skip "no free loop device (losetup -f failed)"
}

requires_fuse ()
{
  requires_root
  [ -c /dev/fuse ] || skip "no /dev/fuse"
  grep -qw fuse /proc/filesystems || skip "kernel has no fuse filesystem"
}

# fuse_start MOUNT/FILE SIZE NBDFUSE-ARGS...: nbdfuse shows an NBD export
# as the file MOUNT/FILE (MOUNT is made if missing), SIZE bytes; waits for
# it, sets FUSEPID, and at exit stops it and undoes the mount.  Its stderr
# goes to MOUNT.log.  (Needs requires_fuse and requires_cmd nbdfuse.)
fuse_start ()
{
  local file=$1 size=$2 mnt i; shift 2
  mnt=$(dirname "$file")
  mkdir -p "$mnt"
  rm -f "$mnt.pid"
  nbdfuse -P "$mnt.pid" "$file" "$@" 2>"$mnt.log" &
  FUSEPID=$!
  cleanup_fn kill_nbdfuse "$FUSEPID" "$file"
  cleanup_fn umount -l "$mnt"
  for (( i = 0; i < 300; i++ )); do
    [ -s "$mnt.pid" ] && [ -f "$file" ] && break
    kill -0 "$FUSEPID" 2>/dev/null || { cat "$mnt.log" >&2; fail "nbdfuse exited"; }
    sleep 0.1
  done
  [ -f "$file" ] || { cat "$mnt.log" >&2; fail "nbdfuse did not show $file"; }
  [ "$(stat -c %s "$file")" = "$size" ] ||
    fail "the fuse file $file has $(stat -c %s "$file") bytes, want $size"
}

# kill_nbdfuse PID FILE: SIGTERM PID if it is still our nbdfuse for FILE
# (at exit the number may belong to another process by now).
kill_nbdfuse ()
{
  local cmd
  cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 0
  case "$cmd" in
    nbdfuse*"$2"*) kill -TERM "$1" ;;
  esac
}

requires_python_nbd ()
{
  [ -x "$PYTHON" ] || skip "no $PYTHON"
  "$PYTHON" -c 'import nbd' >/dev/null 2>&1 ||
    skip "$PYTHON has no libnbd bindings (python3-libnbd)"
}

# requires_plugin: the plugin under test is there.  Never a skip: a missing
# plugin is a failure (run make).
requires_plugin ()
{
  if plugin_is_ours; then
    [ -f "$CFQ_PLUGIN" ] ||
      fail "plugin $CFQ_PLUGIN is not built (run make), or set CFQ_PLUGIN=file"
    nbdkit "$CFQ_PLUGIN" --dump-plugin >/dev/null 2>&1 ||
      fail "nbdkit cannot load $CFQ_PLUGIN: $(nbdkit "$CFQ_PLUGIN" --dump-plugin 2>&1 | tail -3)"
  else
    echo "NOTE: testing nbdkit's plugin '$CFQ_PLUGIN', not ours"
  fi
}

# requires_shadow: the libnbd integrity client is built (else FAIL).
requires_shadow ()
{
  [ -x "$SHADOW" ] || fail "$SHADOW is not built (run make)"
}

# The shadow client's runs, SHADOW_N requests per connection (the test's)
# with the options in the array SHADOW_ARGS (the test's; none by default):
#   shadow_served NAME SEED ORIG PLUGIN-PARAMS...: serve PLUGIN-PARAMS as
#     NAME, run the client on it from ORIG's contents (the read-back in
#     $TESTDIR/back.img), stop the server; fail unless both exited 0;
#   shadow_hot NAME SOCKET SEED: many small unaligned requests in 64 KiB;
#   shadow_lost_write SOCKET: the negative control: the client drops its
#     own write #900 of ~940 (one connection: deterministic), and must say
#     DATA INTEGRITY ERROR, or the test proves nothing.
SHADOW_ARGS=()
shadow_served ()
{
  local name=$1 seed=$2 orig=$3 rc=0; shift 3
  start_nbdkit "$name" -- "$@"
  "$SHADOW" -u -s "$seed" -n "$SHADOW_N" "${SHADOW_ARGS[@]}" -i "$orig" \
    -o "$TESTDIR/back.img" "${NBDKIT_SOCK[$name]}" || rc=$?
  stop_nbdkit "$name"
  [ "$rc" = 0 ] || fail "$name: shadow failed (exit $rc), seed $seed"
  [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
    fail "$name: nbdkit exited with status ${NBDKIT_STATUS[$name]}"
}
shadow_hot ()
{
  local rc=0
  "$SHADOW" -u -s "$3" -n "$SHADOW_N" -r 4096:65536 -l 300 "$2" || rc=$?
  [ "$rc" = 0 ] || fail "$1: hot-sector run failed (exit $rc), seed $3"
  echo "== $1: hot-sector run OK"
}
shadow_lost_write ()
{
  local rc=0
  "$SHADOW" -u -s 11 -c 1 -n 3000 --lose-write 900 "$1" \
    >"$TESTDIR/neg.out" 2>&1 || rc=$?
  cat "$TESTDIR/neg.out"
  [ "$rc" = 1 ] && grep -q 'DATA INTEGRITY ERROR' "$TESTDIR/neg.out" ||
    fail "negative control (lost client write) not detected: exit $rc"
  echo "== negative control, lost client write: detected"
}

# nbdkit_hangup_safe: true when a client that hangs up with replies in
# flight cannot abort this nbdkit: its version has no such bug (1.32.4 -
# 1.33.9 have it), or the plugin under test guards it (hangup.c; its state
# in --dump-plugin).  Prints why on stdout when it is not safe.
nbdkit_hangup_safe ()
{
  local v guard
  v=$(nbdkit --version | awk '{print $2}')
  if ! { printf '%s\n' 1.32.4 "$v" | sort -V -C &&
         ! printf '%s\n' 1.33.10 "$v" | sort -V -C; }; then
    return 0
  fi
  if plugin_is_ours; then
    guard=$(nbdkit "$CFQ_PLUGIN" --dump-plugin 2>/dev/null |
              sed -n 's/^cfq_hangup_guard=//p')
    case "$guard" in
      on|not-needed) return 0 ;;
    esac
    echo "nbdkit $v aborts when a client hangs up with requests in flight, and the plugin's guard is '${guard:-absent}'"
  else
    echo "nbdkit $v aborts when a client hangs up with requests in flight (fixed in 1.33.10), whatever the plugin"
  fi
  return 1
}

# plugin_is_ours: true unless CFQ_PLUGIN names one of nbdkit's plugins.
plugin_is_ours ()
{
  case "$CFQ_PLUGIN" in
    */*|*.so) return 0 ;;
    *) return 1 ;;
  esac
}

# plugin_args KEY=VALUE...: the plugin and its parameters, on stdout one a
# line (read them with mapfile).  Our own parameters are dropped for
# nbdkit's plugins, which do not have them.
plugin_args ()
{
  local a
  echo "$CFQ_PLUGIN"
  for a in "$@"; do
    if ! plugin_is_ours; then
      case "$a" in scheduler=*|queue_depth=*|config=*) continue ;; esac
    fi
    echo "$a"
  done
}

# ---- the per-test directory ------------------------------------------------

TESTDIR=$(mktemp -d /tmp/cfq-test.XXXXXX)
cleanup_fn rm -rf "$TESTDIR"
echo "test directory: $TESTDIR, plugin: $CFQ_PLUGIN"

# ---- sanitizer builds -------------------------------------------------------

# san_runtime FILE: the ASan or TSan runtime FILE (a program or our plugin)
# was linked with, if any: make SANITIZE=address,... adds it.
san_runtime ()
{
  ldd "$1" 2>/dev/null |
    awk '$1 ~ /^lib(asan|tsan|clang_rt\.(asan|tsan))/ { print $3; exit }'
}

# When our plugin carries such a runtime, every nbdkit that loads it must
# have the runtime preloaded: tests/sanitizer/nbdkit does that, first on
# PATH.  tests/run.sh collects the reports.
CFQ_SAN_RUNTIME=
if plugin_is_ours && [ -f "$CFQ_PLUGIN" ]; then
  CFQ_SAN_RUNTIME=$(san_runtime "$CFQ_PLUGIN")
fi
if [ -n "$CFQ_SAN_RUNTIME" ]; then
  # A test that runs another test sources this file twice: the second
  # time tests/sanitizer is already first on PATH, and its nbdkit must
  # not be taken for the real one.
  case ":$PATH:" in
    *":$top/tests/sanitizer:"*) ;;
    *) CFQ_REAL_NBDKIT=$(command -v nbdkit) ||
         fail "nbdkit is not installed"
       PATH=$top/tests/sanitizer:$PATH ;;
  esac
  CFQ_SAN_PLUGIN=$CFQ_PLUGIN
  CFQ_SAN_SHIM=$top/tests/sanitizer/nofreelocale.so
  [ -f "$CFQ_SAN_SHIM" ] ||
    fail "$CFQ_SAN_SHIM is not built (make SANITIZE=... builds it)"
  export CFQ_SAN_RUNTIME CFQ_REAL_NBDKIT CFQ_SAN_PLUGIN CFQ_SAN_SHIM
  echo "sanitizer build: nbdkit runs our plugin with $CFQ_SAN_RUNTIME preloaded"
fi

# requires_valgrind FILE...: valgrind is installed and can run each FILE
# (valgrind cannot run a program built with ASan or TSan), else skip.
requires_valgrind ()
{
  local f
  requires_cmd valgrind
  for f in "$@"; do
    [ -z "$(san_runtime "$f")" ] ||
      skip "valgrind cannot run $f: it is a sanitizer build"
  done
}

# make_image PATH SIZE: a regular file of random content (random, so a read
# from the wrong place or a lost write cannot pass by reading zeroes).
make_image ()
{
  local path=$1 size=$2
  rm -f "$path"
  head -c "$size" /dev/urandom >"$path"
  [ "$(stat -c %s "$path")" = "$((size))" ] || fail "could not make $path"
}

# ---- servers ---------------------------------------------------------------

# What start_nbdkit and stop_nbdkit know about each server, by its NAME:
#   NBDKIT_SOCK[NAME]    its Unix socket, $TESTDIR/NAME.sock
#   NBDKIT_URI[NAME]     nbd+unix:///?socket=... for that socket
#   NBDKIT_PID[NAME]     the process (the wrapper's, under NBDKIT_WRAPPER)
#   NBDKIT_STATUS[NAME]  its exit status, once stop_nbdkit has stopped it
declare -A NBDKIT_SOCK=() NBDKIT_URI=() NBDKIT_PID=() NBDKIT_STATUS=()

# start_nbdkit NAME [NBDKIT-OPTIONS...] -- KEY=VALUE...
#   Start nbdkit in the foreground of a background job, on a Unix socket in
#   TESTDIR, serving the plugin under test with the given parameters.  Waits
#   (bounded) until it listens.  Sets NBDKIT_SOCK[NAME], NBDKIT_URI[NAME],
#   NBDKIT_PID[NAME] and registers the kill at exit.  Without "--", every
#   argument is a plugin parameter.  NBDKIT_WRAPPER (e.g. "valgrind --...")
#   is put in front.  nbdkit's stderr goes to $TESTDIR/NAME.log and is
#   copied to ours at stop.
start_nbdkit ()
{
  local name=$1; shift
  local opts=() params=() sock=$TESTDIR/$name.sock pidf log i pid
  if printf '%s\n' "$@" | grep -qx -- '--'; then
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
  fi
  mapfile -t params < <(plugin_args "$@")
  pidf=$TESTDIR/$name.pid
  log=$TESTDIR/$name.log
  rm -f "$sock" "$pidf"
  echo "start: ${NBDKIT_WRAPPER:-} nbdkit -f -U $sock ${opts[*]} ${params[*]}"
  # shellcheck disable=SC2086
  ${NBDKIT_WRAPPER:-} nbdkit -f --exit-with-parent -U "$sock" -P "$pidf" \
    "${opts[@]}" "${params[@]}" 2>"$log" &
  pid=$!
  cleanup_fn _kill_nbdkit "$pid" "$log"
  # Wait until it has bound the socket (it writes the pid file then).
  for (( i = 0; i < 600; i++ )); do
    [ -s "$pidf" ] && [ -S "$sock" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2
      fail "nbdkit $name exited at start-up"
    fi
    sleep 0.1
  done
  [ -S "$sock" ] || { cat "$log" >&2; fail "nbdkit $name did not start in 60 s"; }
  NBDKIT_SOCK[$name]=$sock
  NBDKIT_URI[$name]="nbd+unix:///?socket=$sock"
  NBDKIT_PID[$name]=$pid
  echo "nbdkit $name: pid ${NBDKIT_PID[$name]} on ${NBDKIT_SOCK[$name]}," \
    "${NBDKIT_URI[$name]}"
}

# stop_nbdkit NAME: SIGTERM, wait (bounded), copy its log to our stderr and
# set NBDKIT_STATUS[NAME] to nbdkit's exit status.
stop_nbdkit ()
{
  local name=$1 pid=${NBDKIT_PID[$1]} st=0 i
  kill -TERM "$pid" 2>/dev/null || true
  for (( i = 0; i < 1200; i++ )); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "nbdkit $name did not exit in 120 s after SIGTERM: killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" || st=$?
  sed "s/^/[$name] /" "$TESTDIR/$name.log" >&2 || true
  NBDKIT_STATUS[$name]=$st
  echo "nbdkit $name: exit status ${NBDKIT_STATUS[$name]}"
}

_kill_nbdkit ()
{
  local pid=$1 log=$2 i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for (( i = 0; i < 100; i++ )); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
}

# ---- block devices and mounts ----------------------------------------------

# loop_attach FILE [LOSETUP-OPTIONS...]: attach FILE to a free loop device,
# set LOOPDEV, detach at exit.  (Not in $(...): the hook must be ours.)
loop_attach ()
{
  local file=$1; shift
  LOOPDEV=$(losetup -f --show "$@" "$file") || skip "losetup $* $file failed"
  cleanup_fn loop_detach "$LOOPDEV" "$file"
  echo "attached $file at $LOOPDEV"
}

# loop_detach DEV FILE: detach DEV if it is still FILE's loop device.  The
# check matters: once we detached it, the number may already belong to
# someone else on this machine.
loop_detach ()
{
  local dev=$1 file=$2 back
  back=$(losetup -n -O BACK-FILE "$dev" 2>/dev/null) || return 0
  [ "$(readlink -f "$back")" = "$(readlink -f "$file")" ] || return 0
  losetup -d "$dev"
}

# mount_tmpfs DIR SIZE: a private tmpfs on DIR, unmounted at exit.
mount_tmpfs ()
{
  local dir=$1 size=$2
  mkdir -p "$dir"
  mount -t tmpfs -o "size=$size" tmpfs "$dir" || return 1
  cleanup_fn umount -l "$dir"
}

# requires_lab: what tools/cfqlab's tests need: our plugin, fio's nbd
# engine, and cfqconf and cfqsim built (a missing build FAILS).
requires_lab ()
{
  local t
  requires_plugin
  plugin_is_ours || skip "the lab needs our plugin (CFQ_PLUGIN=$CFQ_PLUGIN)"
  requires_fio_nbd
  for t in cfqconf cfqsim; do
    [ -x "$top/tools/$t" ] || fail "tools/$t is not built (run make)"
  done
}

# lab_image_dir: set imgdir to a private 1G tmpfs when we may mount one
# (the modelled device then alone decides the timing, whatever else the
# real disk is doing), else to $TESTDIR.
# shellcheck disable=SC2034 # imgdir is the caller's
lab_image_dir ()
{
  imgdir=$TESTDIR
  if [ "$(id -u)" = 0 ] && mount_tmpfs "$TESTDIR/img" 1G 2>/dev/null; then
    imgdir=$TESTDIR/img
  fi
}

# wait_for DESCRIPTION SECONDS CMD...: poll CMD every 0.1 s (bounded).
wait_for ()
{
  local what=$1 secs=$2 i; shift 2
  for (( i = 0; i < secs * 10; i++ )); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "timed out after $secs s waiting for $what"
}
