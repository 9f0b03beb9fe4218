#!/bin/sh
# tests/kernel/guest.sh: the check-kernel test, run inside the VM (as pid 1,
# chrooted into the overlay of the host's root; see init.sh).
#
# It proves that the Linux kernel's own NBD client (nbd.ko, /dev/nbdX) works
# against our server: two exports attached at once as /dev/nbd0 and
# /dev/nbd1, each formatted, mounted, filled, unmounted, checked with e2fsck
# and verified after a remount with every cache dropped; then fio writes both
# raw devices at once with crc32c verification, the devices are detached,
# attached again and fio verifies the same blocks once more, which proves the
# data lives in the server and not in the guest's page cache.
#
# Everything stays inside the guest: the disk images are in tmpfs, nbdkit
# listens on the guest's 127.0.0.1.  The verdict is one line on the serial
# console, "CFQ-KERNEL-TEST: PASS <nonce>", printed only if every step
# passed; run.sh greps for it (with the nonce it put on the command line, so
# nothing else in the log can match).
#
# Knobs (from the kernel command line, see init.sh):
#   CFQ_PLUGIN   path of nbdkit-cfq-plugin.so, or "file" for nbdkit's file
#                plugin as a stand-in
#   CFQ_PLUGINARGS  more plugin parameters, comma-separated
#                (scheduler=cfq,queue_depth=8); default none
#   CFQ_NONCE    the token to print with the verdict
#   CFQ_SERVERS  how the two exports are served: "one" nbdkit with two
#                named exports (two tenants' regions of one device) on one
#                port (default), or "two" nbdkit instances on two ports with
#                the default export ""
#   CFQ_BACKING  what the server opens: "loop" (default): a loop device over
#                a tmpfs image, which accepts O_DIRECT (tmpfs in 6.1 does
#                not); "file": the tmpfs image itself
set -u

plugin=${CFQ_PLUGIN:?CFQ_PLUGIN not set}
nonce=${CFQ_NONCE:?CFQ_NONCE not set}
servers=${CFQ_SERVERS:-one}
backing=${CFQ_BACKING:-loop}
plugin_args=$(echo "${CFQ_PLUGINARGS:-}" | tr , ' ')

img_mb=256              # size of each export, MiB
fio_mb=8                # bytes fio writes and verifies per device, MiB
port=10809              # first TCP port on the guest's loopback
nexp=2                  # exports, attached as /dev/nbd0 .. /dev/nbd$((nexp-1))

work=$(mktemp -d /tmp/cfq-guest.XXXXXX)
pids=                   # nbdkit processes to stop at the end

t() { cut -d' ' -f1 /proc/uptime; }
step() { echo "cfq-guest: [$(t)s] $*"; }

# A heartbeat on the console every 30 s with each device's completed reads
# and writes and requests in flight, so a slow run can be told from a hung
# one in the serial log.
heartbeat() {
  while sleep 30; do
    line=
    for i in $(seq 0 $((nexp - 1))); do
      # Fields 1, 5 and 9: reads and writes completed, requests in flight.
      read -r rd _ _ _ wr _ _ _ inflight _ 2>/dev/null \
        <"/sys/block/nbd$i/stat" || continue
      [ -n "$inflight" ] && line="$line nbd$i: r=$rd w=$wr inflight=$inflight"
    done
    echo "cfq-guest: [$(t)s] heartbeat:$line"
  done
}
heartbeat &
hb_pid=$!

# Tear down whatever is up, in reverse order; never fails.
cleanup() {
  kill "$hb_pid" 2>/dev/null
  for i in $(seq 0 $((nexp - 1))); do
    mountpoint -q "$work/mnt$i" 2>/dev/null && umount "$work/mnt$i"
    nbd-client -c "/dev/nbd$i" >/dev/null 2>&1 &&
      nbd-client -d "/dev/nbd$i" >/dev/null 2>&1
  done
  for p in $pids; do
    kill "$p" 2>/dev/null
  done
  for p in $pids; do
    wait "$p" 2>/dev/null
  done
  pids=
  losetup -D 2>/dev/null
}

# verdict PASS|FAIL: the line run.sh looks for.  Kernel messages are
# silenced on the console first so none can land in the middle of it.
verdict() {
  dmesg -n 1 2>/dev/null
  echo "CFQ-KERNEL-TEST: $1 $nonce"
}

sub=0                   # 1 in a background subshell: fail there only exits it
fail() {
  echo "cfq-guest: [$(t)s] FAIL: $*"
  [ $sub = 0 ] || exit 1
  for f in "$work"/nbdkit*.log; do
    [ -s "$f" ] || continue
    echo "---- $f (tail)"
    tail -n 20 "$f"
  done
  echo "---- dmesg (tail)"
  dmesg | tail -n 30
  cleanup
  verdict FAIL
  exit 1
}

# run NAME CMD...: run CMD with its output in $work/NAME.log, shown only if
# CMD fails.
run() {
  name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    echo "---- $name: $*"
    tail -n 40 "$work/$name.log"
    fail "$name"
  fi
}

if [ "$plugin" != file ] && [ ! -f "$plugin" ]; then
  fail "plugin $plugin not found"
fi
step "plugin=$plugin args='$plugin_args' servers=$servers backing=$backing kernel=$(uname -r)"

run modprobe-nbd modprobe nbd nbds_max=4
run modprobe-loop modprobe loop
run modprobe-ext4 modprobe ext4
for i in $(seq 0 $((nexp - 1))); do
  [ -b "/dev/nbd$i" ] || fail "/dev/nbd$i missing after modprobe nbd"
done

# ---- disk images and servers ----------------------------------------------
# export_port I, export_name I: where the kernel finds export I.
export_port() {
  if [ "$servers" = one ]; then echo $port; else echo $((port + $1)); fi
}
export_name() {
  if [ "$servers" = one ]; then echo "disk$1"; else echo ""; fi
}

mkdir -p "$work/exports"
for i in $(seq 0 $((nexp - 1))); do
  img="$work/exports/disk$i"
  run truncate-$i truncate -s "${img_mb}M" "$img"
  case "$backing" in
    loop) dev=$(losetup -f --show "$img") || fail "losetup $img"
          echo "$dev" >"$work/backing$i" ;;
    file) echo "$img" >"$work/backing$i" ;;
    *) fail "unknown CFQ_BACKING=$backing" ;;
  esac
done

# start_nbdkit LOG ARGS...: start one nbdkit in the foreground, in the
# background of this shell.
start_nbdkit() {
  log=$1
  shift
  nbdkit -f -i 127.0.0.1 "$@" >"$log" 2>&1 &
  pids="$pids $!"
}
case "$servers" in
  two)
    for i in $(seq 0 $((nexp - 1))); do
      start_nbdkit "$work/nbdkit$i.log" -p "$(export_port "$i")" \
        "$plugin" file="$(cat "$work/backing$i")" $plugin_args
    done
    ;;
  one)
    # One server, export names disk0, disk1.  With our plugin: one device
    # (a loop device over one image), a tenant group and a region per
    # export, as a multi-tenant server is meant to be used.  nbdkit's file
    # plugin (the stand-in) serves the regular files of a directory by name.
    if [ "$plugin" = file ]; then
      [ "$backing" = file ] ||
        fail "CFQ_SERVERS=one with CFQ_PLUGIN=file needs CFQ_BACKING=file"
      start_nbdkit "$work/nbdkit0.log" -p "$port" file dir="$work/exports"
    else
      all="$work/all.img"
      run truncate-all truncate -s "$((img_mb * nexp))M" "$all"
      case "$backing" in
        loop) dev=$(losetup -f --show "$all") || fail "losetup $all" ;;
        *) dev=$all ;;
      esac
      conf="$work/tenants.conf"
      printf '[device]\nfile = %s\n' "$dev" >"$conf"
      for i in $(seq 0 $((nexp - 1))); do
        printf '[group g%d]\nweight = %d\n[export disk%d]\ngroup = g%d\noffset = %dM\nsize = %dM\n' \
          "$i" $((200 * (i + 1))) "$i" "$i" $((img_mb * i)) "$img_mb" >>"$conf"
      done
      cat "$conf"
      start_nbdkit "$work/nbdkit0.log" -p "$port" \
        "$plugin" config="$conf" $plugin_args
    fi
    ;;
  *) fail "unknown CFQ_SERVERS=$servers" ;;
esac

want=$((img_mb * 1024 * 1024))
for i in $(seq 0 $((nexp - 1))); do
  uri="nbd://127.0.0.1:$(export_port "$i")/$(export_name "$i")"
  end=$(($(t | cut -d. -f1) + 120))
  until size=$(nbdinfo --size "$uri" 2>"$work/nbdinfo.log"); do
    for p in $pids; do
      kill -0 "$p" 2>/dev/null || fail "nbdkit $p exited"
    done
    [ "$(t | cut -d. -f1)" -lt $end ] || {
      cat "$work/nbdinfo.log"
      fail "no server at $uri after 120 s"
    }
    sleep 1
  done
  [ "$size" = "$want" ] || fail "$uri: size $size, want $want"
done
step "servers up"

# ---- attach ---------------------------------------------------------------
# attach I: connect /dev/nbdI to export I and check the kernel sees it whole.
# -t: a request the server never answers fails after that many seconds
# instead of hanging the guest until run.sh's timeout.
attach() {
  dev=/dev/nbd$1
  run attach-nbd$1 nbd-client -N "$(export_name "$1")" -t 120 \
    127.0.0.1 "$(export_port "$1")" "$dev"
  got=$(blockdev --getsize64 "$dev") || fail "blockdev $dev"
  [ "$got" = "$want" ] || fail "$dev: size $got, want $want"
}
detach() {
  dev=/dev/nbd$1
  run detach-nbd$1 nbd-client -d "$dev"
  n=0
  while nbd-client -c "$dev" >/dev/null 2>&1; do
    n=$((n + 1))
    [ $n -lt 30 ] || fail "$dev still connected 30 s after nbd-client -d"
    sleep 1
  done
}
for i in $(seq 0 $((nexp - 1))); do
  attach "$i"
done
step "attached /dev/nbd0../dev/nbd$((nexp - 1))"

# ---- ext4 on each device --------------------------------------------------
# Writes a tree of random files, unmounts, drops every cache (page cache and
# the block device's buffers), checks the filesystem and compares checksums.
fs_test() {
  dev=/dev/nbd$1
  mnt=$work/mnt$1
  sums=$work/sums$1
  mkdir -p "$mnt"
  run mkfs-nbd$1 mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
  run mount-nbd$1 mount -t ext4 "$dev" "$mnt"
  mkdir -p "$mnt/d/a" "$mnt/d/b/c" || fail "mkdir on $dev"
  {
    head -c 8M /dev/urandom >"$mnt/big" &&
    head -c 1000001 /dev/urandom >"$mnt/odd" &&
    for k in $(seq 1 40); do
      case $((k % 3)) in
        0) d=d/a ;; 1) d=d/b ;; *) d=d/b/c ;;
      esac
      head -c $((k * 3001 + 17)) /dev/urandom >"$mnt/$d/f$k" ||
        fail "writing $d/f$k on $dev"
    done
  } || fail "writing files on $dev"
  (cd "$mnt" && find . -path ./lost+found -prune -o -type f -print |
     LC_ALL=C sort | xargs sha256sum) >"$sums" || fail "sha256sum on $dev"
  [ "$(wc -l <"$sums")" = 42 ] || fail "$dev: expected 42 files"
  run sync-nbd$1 sync
  run umount-nbd$1 umount "$mnt"
  run flush-nbd$1 blockdev --flushbufs "$dev"
  echo 3 >/proc/sys/vm/drop_caches
  run fsck-nbd$1 e2fsck -fn "$dev"
  run remount-nbd$1 mount -t ext4 -o ro "$dev" "$mnt"
  (cd "$mnt" && sha256sum -c --quiet "$sums") >"$work/verify$1.log" 2>&1 || {
    cat "$work/verify$1.log"
    fail "checksums differ on $dev after remount"
  }
  run umount2-nbd$1 umount "$mnt"
  step "$dev: ext4 mkfs, 42 files, umount, e2fsck, remount, sha256 ok"
}
# Both devices at once: two busy exports, and half the wait.
fs_pids=
for i in $(seq 0 $((nexp - 1))); do
  (sub=1; fs_test "$i") &
  fs_pids="$fs_pids $!"
done
i=0
for p in $fs_pids; do
  wait "$p" || {
    kill $fs_pids 2>/dev/null
    wait $fs_pids 2>/dev/null
    fail "ext4 test on /dev/nbd$i"
  }
  i=$((i + 1))
done

# ---- fio on the raw devices, all at once ----------------------------------
fio_args="--rw=randwrite --bs=4k --size=${fio_mb}M --direct=1 --ioengine=libaio
  --iodepth=8 --verify=crc32c --verify_fatal=1 --randrepeat=1 --randseed=4242"
fio_jobs=
for i in $(seq 0 $((nexp - 1))); do
  fio_jobs="$fio_jobs --name=nbd$i --filename=/dev/nbd$i"
done
# shellcheck disable=SC2086
run fio-write fio $fio_args $fio_jobs
step "fio randwrite+verify ${fio_mb} MiB on each device at once: ok"

for i in $(seq 0 $((nexp - 1))); do
  detach "$i"
done
step "detached"
for i in $(seq 0 $((nexp - 1))); do
  attach "$i"
done
# shellcheck disable=SC2086
run fio-reverify fio $fio_args --verify_only $fio_jobs
step "reattached, fio verify_only of the same blocks: ok"
for i in $(seq 0 $((nexp - 1))); do
  detach "$i"
done
step "detached again"

# The servers must still be alive (nothing crashed under the load), then
# stop cleanly.
for p in $pids; do
  kill -0 "$p" 2>/dev/null || fail "nbdkit $p died"
done
cleanup
step "done"
verdict PASS
