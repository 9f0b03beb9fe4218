#!/usr/bin/env bash
# tests/kernel/mkinitramfs.sh: build the tiny initramfs that boots the
# check-kernel VM.
#
# The VM needs only enough to reach the host's root filesystem: a static
# busybox for the shell and mount, the modules for virtio-pci, 9p over virtio
# and overlayfs of the kernel being booted, and tests/kernel/init.sh as /init.
# Everything else (nbdkit, nbd-client, mkfs, fio, the plugin) is run from the
# host root, shared read-only over 9p.  Modules are taken from the installed
# Debian kernel with modinfo, dependencies first, decompressed when shipped as
# .ko.xz/.ko.zst/.ko.gz since busybox insmod reads plain ELF only.
#
# Usage: mkinitramfs.sh KVER OUT.cpio.gz
# Exits non-zero with a message on stderr if anything is missing.
set -euo pipefail

kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
# The modules the init needs; their dependencies are found by modinfo.
want=(virtio_pci 9pnet_virtio 9p overlay)

busybox=$(command -v busybox || true)
[ -n "$busybox" ] || { echo "mkinitramfs: busybox not found" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1; then
  echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2
  exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/cfq-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,lower,rw,newroot,mod}
cp "$busybox" "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
chmod 0755 "$root/init" "$root/bin/busybox"
# The kernel opens /dev/console for init's output before /init runs; its
# built-in initramfs has one too, but do not rely on that when we can mknod.
mknod -m 0600 "$root/dev/console" c 5 1 2>/dev/null || true

# add_mod NAME: copy NAME and (first) everything it depends on, once each,
# appending to the load order.  Built-in modules need nothing.
declare -A seen=()
order=()
add_mod() {
  local name=$1 file deps d base
  [ -z "${seen[$name]:-}" ] || return 0
  seen[$name]=1
  file=$(modinfo -k "$kver" -F filename "$name") ||
    { echo "mkinitramfs: module $name not found for $kver" >&2; return 1; }
  case "$file" in
    "(builtin)"|"") return 0 ;;
  esac
  deps=$(modinfo -k "$kver" -F depends "$name")
  for d in ${deps//,/ }; do
    add_mod "$d"
  done
  base=$(basename "$file")
  case "$file" in
    *.ko.xz)  xz -dc "$file" >"$root/mod/${base%.xz}"; base=${base%.xz} ;;
    *.ko.zst) zstd -qdc "$file" >"$root/mod/${base%.zst}"; base=${base%.zst} ;;
    *.ko.gz)  gzip -dc "$file" >"$root/mod/${base%.gz}"; base=${base%.gz} ;;
    *.ko)     cp "$file" "$root/mod/$base" ;;
    *) echo "mkinitramfs: unexpected module file $file" >&2; return 1 ;;
  esac
  order+=("$base")
}
for m in "${want[@]}"; do
  add_mod "$m"
done
printf '%s\n' "${order[@]}" >"$root/mod/order"

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
   cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$out"
