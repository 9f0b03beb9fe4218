# shellcheck shell=bash
# bench/calib-functions.sh: what bench/calibrate-check.sh and
# bench/cost-error.sh share, sourced by both after they set top and
# their variables.
#
#   calib_setup NAME [IMAGE]  sets img (IMAGE, or BENCH_DIR/calib-check.img:
#                             SIZE, default 4G, of random data, made once
#                             and kept), dir (a private directory, removed
#                             at exit) and pid (the server, killed at exit)
#   drop                      sync and drop the page cache (as root)
#   calib_server CALIBRATE    the cache dropped, nbdkit with our plugin on
#                             img with calibrate=CALIBRATE and a control
#                             socket, in the background (pid), its log in
#                             dir/s.log; returns once it listens, which is
#                             after its calibration

top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

calib_setup ()
{
  local name=$1
  img=${2:-${BENCH_DIR:-/var/tmp}/calib-check.img}
  if [ $# -lt 2 ] && [ ! -s "$img" ]; then
    echo "making $img (${SIZE:-4G} of random data)..."
    head -c "${SIZE:-4G}" /dev/urandom >"$img.new"
    mv "$img.new" "$img"
  fi
  [ -e "$img" ] || { echo "$0: $img: no such file" >&2; exit 2; }
  dir=$(mktemp -d "/tmp/$name.XXXXXX")
  pid=
  trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
}

drop () { if [ "$(id -u)" = 0 ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }

calib_server ()
{
  local i
  drop
  rm -f "$dir/s.sock" "$dir/s.ctl"
  nbdkit -f -v -U "$dir/s.sock" "$top/plugin/nbdkit-cfq-plugin.so" \
    file="$img" calibrate="$1" control="$dir/s.ctl" 2>"$dir/s.log" &
  pid=$!
  for (( i = 0; i < 600; i++ )); do [ -S "$dir/s.sock" ] && break; sleep 0.1; done
  [ -S "$dir/s.sock" ] || { cat "$dir/s.log" >&2; exit 1; }
}
