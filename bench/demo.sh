#!/usr/bin/env bash
# bench/demo.sh: serve a demo disk with the cfq plugin and show it in use.
#
#   make demo                      (or bench/demo.sh)
#   DEMO_SECONDS=30 make demo      serve for 30 s, then exit
#
# Creates a 1 GiB sparse image in a fresh directory under /var/tmp, serves
# it with nbdkit in the foreground on 127.0.0.1:${DEMO_PORT:-10809} (loopback
# only), reads and writes a little through it, and prints how to connect.
# Ctrl-C stops it.  When stdin is not a terminal (CI, make demo </dev/null)
# or DEMO_SECONDS is set, it serves for that long (default 10 s) and exits.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

port=${DEMO_PORT:-10809}
size=${DEMO_SIZE:-1G}
sched=${DEMO_SCHEDULER:-fifo}

if ! command -v nbdkit >/dev/null || ! pkg-config --exists nbdkit 2>/dev/null; then
  echo "demo: nbdkit is missing: running make deps"
  make deps
fi
make -s -j2 plugin/nbdkit-cfq-plugin.so

dir=$(mktemp -d /var/tmp/nbdkit-cfq-demo.XXXXXX)
img=$dir/demo.img
truncate -s "$size" "$img"
pid=
cleanup () {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'echo; echo "demo: stopping"; exit 0' INT TERM

nbdkit -f -i 127.0.0.1 -p "$port" ./plugin/nbdkit-cfq-plugin.so \
  file="$img" scheduler="$sched" &
pid=$!
uri="nbd://127.0.0.1:$port"
for _ in $(seq 100); do
  nbdinfo --size "$uri" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "demo: nbdkit failed to start" >&2; exit 1; }
  sleep 0.1
done

echo "=== nbdkit-cfq serving $img ($size, scheduler=$sched) on $uri"
nbdinfo "$uri" | sed 's/^/    /'
if command -v nbdcopy >/dev/null; then
  head -c 4M /dev/urandom > "$dir/sample"
  nbdcopy "$dir/sample" "$uri"
  nbdcopy "$uri" - | head -c 4M | cmp - "$dir/sample" &&
    echo "=== wrote 4 MiB through the plugin and read it back: identical"
  rm -f "$dir/sample"
fi

cat <<MSG

=== Connect to it (from this machine):
    nbdinfo $uri
    nbdcopy $uri - | hexdump -C | head
  As a local block device, through FUSE and a loop device:
    mkdir -p /tmp/nbd && nbdfuse /tmp/nbd $uri &
    dev=\$(losetup -f --show --direct-io=on /tmp/nbd/nbd)
    mkfs.ext4 \$dev && mkdir -p /mnt/demo && mount \$dev /mnt/demo
    ... umount /mnt/demo; losetup -d \$dev; umount /tmp/nbd
  With the kernel NBD client (a kernel with nbd.ko):
    nbd-client -N '' 127.0.0.1 $port /dev/nbd0

MSG

if [ -t 0 ] && [ -z "${DEMO_SECONDS:-}" ]; then
  echo "=== serving until Ctrl-C"
  wait "$pid"
else
  secs=${DEMO_SECONDS:-10}
  echo "=== serving for $secs s (DEMO_SECONDS)"
  end=$((SECONDS + secs))
  while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
  echo "=== demo over"
fi
