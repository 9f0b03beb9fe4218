#!/usr/bin/env bash
# tests/kernel/run.sh: `make check-kernel`, the Linux kernel's own NBD
# client (nbd.ko, /dev/nbd0) against our plugin, in a software-emulated VM.
#
# The host kernel has no nbd driver, so the test boots Debian's kernel
# (linux-image-amd64) under qemu-system-x86_64 with TCG (never KVM: the
# /dev/kvm here belongs to a nested hypervisor that cannot run this kernel).
# A tiny initramfs (mkinitramfs.sh) mounts the host's root read-only over
# virtio-9p under a tmpfs overlay and runs tests/kernel/guest.sh there; the
# guest prints its verdict on the serial console, which is all we read.
#
# Exit 0 pass, 1 fail, 77 skip (packages missing and not installable).
# The last line is "PASS: check-kernel ..." / "FAIL: ..." / "SKIP: ...".
#
# Environment:
#   CFQ_KERNEL_PLUGIN   the nbdkit plugin the guest serves with: default our
#                       plugin/nbdkit-cfq-plugin.so (missing = FAIL); "file"
#                       runs nbdkit's file plugin as a stand-in
#   CFQ_KERNEL_PLUGIN_ARGS  more parameters for the plugin, space-separated
#                       (no commas inside); default "scheduler=cfq" for our
#                       plugin, none for the stand-in
#   CFQ_KERNEL_SERVERS  "one" (one nbdkit, two named exports: two tenant
#                       regions of one device; default) or "two" (two nbdkit
#                       on two ports); see guest.sh
#   CFQ_KERNEL_BACKING  "loop" (default) or "file"; see guest.sh
#   CFQ_KERNEL_TIMEOUT  seconds the VM may run, default 900
#   CFQ_KERNEL_VERSION  kernel to boot, default the newest installed Debian
#                       kernel that has nbd.ko
#   CFQ_KERNEL_KEEP=1   keep the temp dir (serial log, initramfs)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/kernel
cd "$top" || exit 1

plugin=${CFQ_KERNEL_PLUGIN:-$top/plugin/nbdkit-cfq-plugin.so}
servers=${CFQ_KERNEL_SERVERS:-one}
backing=${CFQ_KERNEL_BACKING:-loop}
limit=${CFQ_KERNEL_TIMEOUT:-900}

t0=$(date +%s)
since() { echo $(( $(date +%s) - $1 )); }
say() { echo "check-kernel: $*"; }
skip() { echo "SKIP: check-kernel: $*"; exit 77; }
fail() { echo "FAIL: check-kernel: $*"; exit 1; }

# ---- packages ---------------------------------------------------------------
# kernel_version: newest /boot/vmlinuz-VER whose modules include nbd.
kernel_version() {
  local v best=
  for f in /boot/vmlinuz-*; do
    [ -r "$f" ] || continue
    v=${f#/boot/vmlinuz-}
    modinfo -k "$v" -F filename nbd >/dev/null 2>&1 || continue
    if [ -z "$best" ] ||
       [ "$(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -1)" = "$v" ]; then
      best=$v
    fi
  done
  echo "$best"
}
have_all() {
  command -v qemu-system-x86_64 >/dev/null &&
  [ -x /usr/sbin/nbd-client ] &&
  command -v busybox >/dev/null && ! ldd "$(command -v busybox)" >/dev/null 2>&1 &&
  command -v cpio >/dev/null && command -v modinfo >/dev/null &&
  [ -n "${CFQ_KERNEL_VERSION:-$(kernel_version)}" ]
}
if ! have_all; then
  [ "$(id -u)" = 0 ] ||
    skip "needs linux-image-amd64 qemu-system-x86 nbd-client busybox-static cpio kmod (run make deps-kernel as root)"
  say "installing packages (make deps-kernel)"
  make -s -C "$top" deps-kernel >"${TMPDIR:-/tmp}/cfq-deps-kernel.$$.log" 2>&1 ||
    { tail -n 20 "${TMPDIR:-/tmp}/cfq-deps-kernel.$$.log"
      rm -f "${TMPDIR:-/tmp}/cfq-deps-kernel.$$.log"
      skip "make deps-kernel failed"; }
  rm -f "${TMPDIR:-/tmp}/cfq-deps-kernel.$$.log"
  have_all || skip "packages still missing after make deps-kernel"
fi
t_deps=$(since "$t0")
kver=${CFQ_KERNEL_VERSION:-$(kernel_version)}
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || skip "$kernel not readable"

# ---- what the guest will run -------------------------------------------------
if [ "$plugin" = file ]; then
  say "using nbdkit's file plugin as a STAND-IN for ours"
else
  case "$plugin" in /*) ;; *) plugin=$top/$plugin ;; esac
  [ -f "$plugin" ] || fail "$plugin missing (run make first)"
  # The guest sees the host's root, so the host path works there too; load
  # it once here so a broken plugin fails fast, not after the boot.
  nbdkit "$plugin" --dump-plugin >/dev/null 2>&1 ||
    fail "nbdkit cannot load $plugin"
fi
for c in nbdkit nbdinfo fio mkfs.ext4 e2fsck losetup blockdev; do
  command -v "$c" >/dev/null || PATH=$PATH:/usr/sbin:/sbin command -v "$c" >/dev/null ||
    skip "$c not installed (make deps)"
done

# ---- initramfs and boot -------------------------------------------------------
# The kernel command line splits at spaces: paths on it must have none.
case "$top$plugin" in
  *[[:space:]]*) skip "the repository path has a space: $top" ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfq-kernel.XXXXXX")
qpid=
cleanup() {
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
    kill "$qpid" 2>/dev/null
    wait "$qpid" 2>/dev/null
  fi
  if [ "${CFQ_KERNEL_KEEP:-0}" = 1 ]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

t1=$(date +%s)
"$here/mkinitramfs.sh" "$kver" "$tmp/initramfs.cpio.gz" ||
  fail "building the initramfs for $kver failed"
t_initrd=$(since "$t1")

nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
log=$tmp/serial.log
append="console=ttyS0 panic=-1 loglevel=4"
append="$append cfqtest=$here/guest.sh cfqnonce=$nonce cfqplugin=$plugin"
append="$append cfqservers=$servers cfqbacking=$backing"
# Our plugin runs the CFQ scheduler unless told otherwise (set
# CFQ_KERNEL_PLUGIN_ARGS= to get the plugin's own default); the stand-in
# takes no extra parameters.
if [ "$plugin" = file ]; then
  pargs=${CFQ_KERNEL_PLUGIN_ARGS-}
else
  pargs=${CFQ_KERNEL_PLUGIN_ARGS-scheduler=cfq}
fi
pargs=$(echo "$pargs" | tr -s ' ' , | sed 's/^,//; s/,$//')
[ -z "$pargs" ] || append="$append cfqpluginargs=$pargs"
say "booting $kver under TCG (timeout ${limit}s), serial log $log"
t2=$(date +%s)
# TCG only, whatever /dev/kvm claims (see docs: kvm_pvm cannot run this).
timeout -k 10 "$limit" qemu-system-x86_64 \
  -accel tcg,thread=multi -cpu max -M q35 -m 2048 -smp 2 \
  -nic none -display none -serial "file:$log" -monitor none -no-reboot \
  -kernel "$kernel" -initrd "$tmp/initramfs.cpio.gz" -append "$append" \
  -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
  >"$tmp/qemu.out" 2>&1 </dev/null &
qpid=$!
wait "$qpid"
qrc=$?
qpid=
t_vm=$(since "$t2")

# ---- verdict --------------------------------------------------------------------
tr -d '\r' <"$log" >"$tmp/serial.txt" 2>/dev/null
timing="deps ${t_deps}s, initramfs ${t_initrd}s, VM ${t_vm}s, total $(since "$t0")s"
boot=$(sed -n 's/^cfq-init: root ready at \([0-9.]*\)s.*/\1/p' "$tmp/serial.txt" | head -1)
[ -z "$boot" ] || timing="$timing (guest booted in ${boot}s)"
# The nonce is only ever printed after "PASS " by guest.sh (the kernel echoes
# it as cfqnonce=...), so nothing else can match.
if grep -aq "CFQ-KERNEL-TEST: PASS $nonce" "$tmp/serial.txt"; then
  grep -a '^cfq-guest: \[' "$tmp/serial.txt"
  if [ "$plugin" = file ]; then
    echo "PASS: check-kernel with the STAND-IN file plugin ($timing)"
  else
    echo "PASS: check-kernel with $(basename "$plugin") ${pargs//,/ } ($timing)"
  fi
  exit 0
fi

why="no PASS line on the serial console"
[ $qrc -eq 124 ] || [ $qrc -eq 137 ] && why="VM timed out after ${limit}s"
[ -s "$tmp/qemu.out" ] && { echo "---- qemu output"; tail -n 20 "$tmp/qemu.out"; }
echo "---- serial console (from init on, last 150 lines)"
if grep -aq '^cfq-init:' "$tmp/serial.txt"; then
  sed -n '/^cfq-init:/,$p' "$tmp/serial.txt" | tail -n 150
else
  tail -n 150 "$tmp/serial.txt"
fi
echo "FAIL: check-kernel: $why, qemu exit $qrc ($timing)"
exit 1
