#!/bin/busybox sh
# shellcheck shell=dash
# tests/kernel/init.sh: /init of the check-kernel VM (runs as pid 1 under
# the initramfs's static busybox).
#
# It loads the virtio/9p/overlay modules listed in /mod/order, mounts the
# host's root (9p tag "root", read-only) under a tmpfs overlay at /newroot so
# the guest may write anywhere without touching the host, mounts the kernel
# filesystems there, and then chroots into it *as pid 1* (exec): pid 1 shares
# its fs_struct with the kernel threads, so the modprobe the kernel's own
# request_module() starts also sees the host's /sbin/modprobe and
# /lib/modules.
#
# The kernel command line names the work:
#   cfqtest=PATH      the script to run in the chroot, with /bin/sh
#   cfqNAME=VALUE     exported to it as CFQ_NAME=VALUE (NAME upper-cased)
# When the script returns, the guest powers off; run.sh reads the verdict
# from the serial console, since QEMU's exit status says nothing.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

say() { echo "cfq-init: $*"; }
die() {
  say "FAIL: $*"
  poweroff -f
  sleep 10
  exit 1
}
say "up at $(cut -d' ' -f1 /proc/uptime)s"

for m in $(cat /mod/order); do
  insmod "/mod/$m" || die "insmod $m"
done

mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose \
  root /lower || die "mount 9p root"
mount -t tmpfs -o size=80% rw /rw || die "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
  overlay /newroot || die "mount overlay"
mount -t proc proc /newroot/proc || die "mount proc"
mount -t sysfs sysfs /newroot/sys || die "mount sysfs"
mount -t devtmpfs devtmpfs /newroot/dev || die "mount devtmpfs"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/run || die "mount /run"
mount -t tmpfs tmpfs /newroot/tmp || die "mount /tmp"

# The guest has no network card (-nic none) and nothing brings up lo: do it,
# the kernel then gives it 127.0.0.1, where nbdkit listens.
ip link set lo up || die "ip link set lo up"

# The CFQ_NAME=VALUE words for the test's environment collect in "$@".
test=
set --
for w in $(cat /proc/cmdline); do
  case "$w" in
    cfqtest=*) test=${w#cfqtest=} ;;
    cfq*=*)
      name=${w%%=*}
      name=CFQ_$(echo "${name#cfq}" | tr a-z A-Z)
      set -- "$@" "$name=${w#*=}"
      ;;
  esac
done
[ -n "$test" ] || die "no cfqtest= on the kernel command line"
# The guest mounts fresh tmpfs on /tmp and /run: a checkout that lives
# there on the host (CI clones anywhere) would be hidden, so bind its
# read-only view from the shared root over it.
top=${test%/tests/kernel/guest.sh}
case "$top" in
  /tmp/*|/run/*|/dev/shm/*)
    mkdir -p "/newroot$top" && mount -o bind "/lower$top" "/newroot$top" ||
      die "bind-mount $top from the shared root"
    ;;
esac
[ -f "/newroot$test" ] || die "$test not found in the shared root"
say "root ready at $(cut -d' ' -f1 /proc/uptime)s, running $test"

# From here on pid 1 is the host's /bin/sh inside the overlay; the host's
# busybox (busybox-static) or sysrq powers off when the test is over.
cd /newroot || die "cd /newroot"
exec chroot /newroot /usr/bin/env -i \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root TERM=dumb LANG=C.UTF-8 \
  CFQ_TEST="$test" "$@" \
  /bin/sh -c '
    /bin/sh "$CFQ_TEST"
    echo "cfq-init: test exited $? at $(cut -d" " -f1 /proc/uptime)s"
    sync
    busybox poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 30'
