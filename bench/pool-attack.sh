#!/usr/bin/env bash
# bench/pool-attack.sh: a tenant's latency while another floods the
# request buffer pool (plugin/bounce.c) with large unaligned reads.
#
#   bench/pool-attack.sh [PLUGIN.so]      default: this tree's build
#
# Three groups on one image on the real disk (BENCH_DIR, O_DIRECT):
#   gold   weight 800: 4k random reads, one at a time (its own export)
#   bulk   weight 500: one connection with 8 unaligned 32 MiB reads in
#          flight, and 4 connections with 16 unaligned 960 KiB reads each
# Three runs (BENCH_RUNS, default "alone flood cap") of BENCH_RUNTIME s
# (default 10), each with a fresh server,
# buffer_pool = BENCH_POOL (default 256M, the default):
#   alone   gold only (its baseline)
#   flood   gold beside bulk, no cap
#   cap     gold beside bulk with bps_max = 4M
# The clients are tests/nbd/readload (fio's nbd engine refuses unaligned
# requests).  For each run: gold's reads, mean, p99 and max latency, and the
# pool's peak and waits from the server's stats.  The benchmark target:
# gold's max <= 100 ms and p99 <= 5x its baseline p99 in "flood" and "cap".
# Numbers go to bench/README.md ("Buffer pool").
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
plugin=${1:-$top/plugin/nbdkit-cfq-plugin.so}
dir=${BENCH_DIR:-/var/tmp}
runtime=${BENCH_RUNTIME:-10}
pool=${BENCH_POOL:-256M}
dflags=()
[ "${BENCH_BOUNCE:-1}" = 0 ] || dflags=(-D cfq.bounce=1)
load=$top/tests/nbd/readload
work=$(mktemp -d "$dir/pool-attack.XXXXXX")
img=$dir/pool-attack.img
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# 2 GiB of data (not a hole: reads must reach the disk), made once.
if [ "$(stat -c %s "$img" 2>/dev/null || echo 0)" != $((2 << 30)) ]; then
  dd if=/dev/urandom of="$img" bs=16M count=128 status=none
fi

conf ()
{
  cat <<EOF
[device]
file = $img
buffer_pool = $pool

[group gold]
weight = 800
[group bulk]
weight = 500
$1

[export gold]
group = gold
size = 512M
[export bulk]
group = bulk
offset = 512M
EOF
}

run ()
{
  local name=$1 cap=$2 sock=$work/$1.sock uri pids=()
  conf "$cap" >"$work/$name.conf"
  # shellcheck disable=SC2086 # BENCH_ARGS: any number of arguments
  nbdkit -f -U "$sock" --exit-with-parent "${dflags[@]}" "$plugin" config="$work/$name.conf" \
    stats="$work/$name.stats.json" control="$work/$name.ctl" ${BENCH_ARGS:-} \
    2>"$work/$name.log" &
  local pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  uri="nbd+unix:///bulk?socket=$sock"
  if [ "$name" != alone ]; then
    "$load" -c 1 -d 8 -b 32M -u 1 -t $((runtime + 2)) "$uri" \
      >"$work/$name.big" 2>&1 & pids+=($!)
    "$load" -c 4 -d 16 -b "${BENCH_MID:-960K}" -u 1 -t $((runtime + 2)) "$uri" \
      >"$work/$name.mid" 2>&1 & pids+=($!)
    sleep 1
  fi
  "$load" -c 1 -d 1 -b 4K -t "$runtime" "nbd+unix:///gold?socket=$sock" \
    >"$work/$name.gold" || { cat "$work/$name.gold"; exit 1; }
  # The capped reads still queued would take a minute at 4 MB/s: lift it.
  [ -z "$cap" ] || "$top/tools/cfqctl" -s "$work/$name.ctl" qos bulk bps_max 0 \
    >/dev/null
  for p in "${pids[@]}"; do wait "$p" || true; done
  kill "$pid"; wait "$pid" || true
  /usr/bin/python3 - "$name" "$work/$name.gold" "$work/$name.stats.json" <<'PY'
import json, re, sys
name, gf, sj = sys.argv[1:4]
v = dict(re.findall(r"(\w+) ([\d.]+)", open(gf).read()))
b = json.load(open(sj))["device"]["buffers"]
print("%-6s gold reads %6s  mean %8s ms  p99 %8s ms  max %9s ms"
      "  | pool peak %.1f MiB, waits %d" % (name, v["reads"], v["mean"], v["p99"],
                                        v["max"], b["peak"] / 1048576., b["waits"]))
for g in b.get("groups", []):
    print("       pool: %-5s gets %6d waits %6d wait max %9.3f ms, over share %d"
          % (g["group"], g["gets"], g["waits"], g["wait_max_ms"], g["over_share"]))
PY
  for f in big mid; do
    [ -f "$work/$name.$f" ] && echo "       $f: $(cat "$work/$name.$f")"
  done
  return 0
}

echo "plugin $plugin, buffer_pool $pool, ${runtime} s a run, ${dflags[*]:-no -D}"
for r in ${BENCH_RUNS:-alone flood cap}; do
  case $r in
    alone|flood) run "$r" "" ;;
    cap) run cap "bps_max = 4M" ;;
  esac
done
