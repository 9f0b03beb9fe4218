#!/bin/bash
# bench/guestmem.sh [-n ROUNDS] [-w WAIT_S] [FILE]
#
# Does this VM charge for memory it handed back to the host?  A cold
# buffered read of FILE (default: a 1 GiB scratch file under /var/tmp), run
# twice per round after dropping the page cache: at once, while the pages
# the drop freed are still the guest's, and WAIT_S seconds later (default
# 15), after free page reporting (virtio-balloon) may have handed them to
# the host.  On a VM that reports, the second read is several times slower,
# nearly all of it system time: each page-cache page it allocates costs a
# host fault on first touch.  It is what makes a buffered server's
# sequential reads bimodal in `make bench` (bench/README.md, "guest memory").  Root,
# for drop_caches.
set -euo pipefail
ROUNDS=3 WAIT=15
while getopts n:w: o; do
  case $o in
    n) ROUNDS=$OPTARG ;;
    w) WAIT=$OPTARG ;;
    *) echo "usage: $0 [-n ROUNDS] [-w WAIT_S] [FILE]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "$(id -u)" = 0 ] || { echo "guestmem.sh: needs root (drop_caches)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "guestmem.sh: needs GNU time (/usr/bin/time, package time)" >&2; exit 2; }
FILE=${1:-}
if [ -z "$FILE" ]; then
  FILE=$(mktemp /var/tmp/guestmem.XXXXXX)
  trap 'rm -f "$FILE"' EXIT
  dd if=/dev/urandom of="$FILE" bs=1M count=1024 status=none
fi
# What was handed to the host: a counter of this VM's kernel, not mainline's.
R=/sys/module/page_reporting/parameters/reported_kib
rkib() { cat "$R" 2>/dev/null || echo -; }
mib_between() { [ "$1" = - ] || [ "$2" = - ] && echo n/a || echo $((($2 - $1) / 1024)); }

# One cold read: prints "elapsed_s sys_s MB/s".
cold_read() {
  local t0 t1 sys bytes tf
  bytes=$(stat -c %s "$FILE")
  tf=$(mktemp)
  t0=$(date +%s.%N)
  /usr/bin/time -f '%S' -o "$tf" dd if="$FILE" of=/dev/null bs=256k status=none
  t1=$(date +%s.%N)
  sys=$(tail -n1 "$tf"); rm -f "$tf"
  awk -v a="$t0" -v b="$t1" -v s="$sys" -v n="$bytes" \
    'BEGIN { printf "%.2f %.2f %.0f\n", b - a, s, n / (b - a) / 1e6 }'
}

printf '%-5s %-12s %9s %7s %8s %14s\n' round when elapsed_s sys_s MB/s reported_MiB
for r in $(seq "$ROUNDS"); do
  for when in now "after ${WAIT}s"; do
    cat "$FILE" >/dev/null            # the file's pages: used, then freed
    sync; echo 3 >/proc/sys/vm/drop_caches
    a=$(rkib)
    [ "$when" = now ] || sleep "$WAIT"
    read -r e s m < <(cold_read)
    b=$(rkib)
    printf '%-5s %-12s %9s %7s %8s %14s\n' "$r" "$when" "$e" "$s" "$m" "$(mib_between "$a" "$b")"
  done
done
