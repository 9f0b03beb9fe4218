#!/usr/bin/env bash
# bench/demo.sh: three tenants share one emulated disk; watch CFQ split it
# by their groups' weights.
#
#   make demo                      (or bench/demo.sh)
#   DEMO_SECONDS=40 make demo      run the tenants' load for 40 s (default 20)
#   DEMO_EMULATE=ssd make demo     the same tenants on an emulated one-channel
#                                  SSD (2 ms a request, IOPS mode, no idling
#                                  on queues) instead of demo.conf's disk
#   DEMO=simple make demo          the single-export demo: serve a 1 GiB
#                                  image on 127.0.0.1:10809, show how to
#                                  connect (DEMO_PORT, DEMO_SIZE,
#                                  DEMO_SCHEDULER)
#
# The tenants demo: builds (make), installs what is missing (make deps:
# nbdkit, fio), creates a sparse 1 GiB image in a fresh directory under
# /var/tmp and serves it with nbdkit on a Unix socket in that directory,
# configured by configs/demo.conf (exports small/medium/large in groups of
# weight 100/200/400 on an emulated hard disk; the config's device path is
# replaced by the image with a file= override), with a control socket.  One
# fio client (nbd engine, 64 KiB random reads, depth 16) per tenant runs for
# DEMO_SECONDS while `tools/cfqctl -s CTL stats -i 2` prints the live table;
# then each tenant's measured share of the throughput is shown beside its
# weight's share.  Everything runs without a terminal (CI) and is cleaned up
# at exit; exit 0 when the demo ran.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

PYTHON=/usr/bin/python3

need_deps ()
{
  local c
  for c in nbdkit nbdinfo "$@"; do
    command -v "$c" >/dev/null || return 0
  done
  pkg-config --exists nbdkit 2>/dev/null || return 0
  return 1
}

# ---- DEMO=simple: the single-export demo -------------------------------------------
demo_simple ()
{
  local port=${DEMO_PORT:-10809} size=${DEMO_SIZE:-1G} sched=${DEMO_SCHEDULER:-fifo}
  local uri secs end

  if need_deps; then
    echo "demo: nbdkit is missing: running make deps"
    make deps
  fi
  make -s -j2 plugin/nbdkit-cfq-plugin.so

  dir=$(mktemp -d /var/tmp/nbdkit-cfq-demo.XXXXXX)
  img=$dir/demo.img
  truncate -s "$size" "$img"
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
}

# ---- the tenants demo (default) -----------------------------------------------------
demo_tenants ()
{
  local secs=${DEMO_SECONDS:-20} conf=configs/demo.conf sock ctl i n
  local over=()

  case ${DEMO_EMULATE:-} in
    '') ;;
    ssd) over=(emulate=ssd mode=iops model.channels=1 model.read=2ms
               model.write=2ms slice_idle=0 rotational=0) ;;
    *) echo "demo: DEMO_EMULATE=$DEMO_EMULATE: want ssd (or nothing)" >&2; exit 2 ;;
  esac

  case $secs in ''|*[!0-9]*|0) echo "demo: DEMO_SECONDS=$secs: want a positive integer" >&2; exit 2 ;; esac
  if need_deps fio; then
    echo "=== nbdkit or fio is missing: running make deps"
    make deps
  fi
  echo "=== building"
  make -s -j2
  fio --enghelp=nbd >/dev/null 2>&1 || { echo "demo: this fio has no nbd engine" >&2; exit 1; }

  dir=$(mktemp -d /var/tmp/nbdkit-cfq-demo.XXXXXX)
  img=$dir/disk.img
  sock=$dir/nbd.sock
  ctl=$dir/control.sock
  truncate -s 1G "$img"

  echo "=== serving $img with $conf (the config's file= replaced by the image)"
  grep -E '^\[(group|export)|^weight|^emulate' "$conf" | paste -sd' ' | sed 's/^/    /'
  [ ${#over[@]} = 0 ] || echo "    overrides: ${over[*]}"
  nbdkit -f -U "$sock" -P "$dir/nbdkit.pid" ./plugin/nbdkit-cfq-plugin.so \
    config="$conf" file="$img" control="$ctl" stats="$dir/final-stats.json" \
    ${over[@]+"${over[@]}"} 2>"$dir/nbdkit.log" &
  pid=$!
  for (( i = 0; i < 300; i++ )); do
    [ -S "$sock" ] && [ -S "$ctl" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "demo: nbdkit failed to start:" >&2; cat "$dir/nbdkit.log" >&2; exit 1
    fi
    sleep 0.1
  done
  if ! { [ -S "$sock" ] && [ -S "$ctl" ]; }; then
    echo "demo: nbdkit did not start in 30 s" >&2; cat "$dir/nbdkit.log" >&2; exit 1
  fi
  nbdinfo --list "nbd+unix:///?socket=$sock" | grep -E '^export=' | sed 's/^/    /' || true

  cat >"$dir/demo.fio" <<EOF
[global]
ioengine=nbd
rw=randread
bs=64k
iodepth=16
time_based=1
runtime=$secs
[small]
uri=nbd+unix:///small?socket=$sock
[medium]
uri=nbd+unix:///medium?socket=$sock
[large]
uri=nbd+unix:///large?socket=$sock
EOF
  echo "=== three fio clients (64 KiB random reads, depth 16), one per tenant, for $secs s"
  echo "=== live: tools/cfqctl -s $ctl stats -i 2"
  fio --output-format=json --output="$dir/fio.json" "$dir/demo.fio" \
    >"$dir/fio.log" 2>&1 &
  fio_pid=$!
  sleep 2                        # a first rate tick, so the table has rates
  n=$(( (secs - 2) / 2 )); [ "$n" -ge 1 ] || n=1
  tools/cfqctl -s "$ctl" stats -i 2 -c "$n" || echo "demo: cfqctl stats failed"
  if ! wait "$fio_pid"; then
    fio_pid=
    echo "demo: fio failed:" >&2; tail -20 "$dir/fio.log" >&2; exit 1
  fi
  fio_pid=

  echo
  echo "=== each tenant's share of the throughput next to its weight's share"
  "$PYTHON" - "$dir/fio.json" "$conf" <<'EOF'
import json, re, sys
fio = json.load(open(sys.argv[1]))
# Weights from the config: [export X] group = G, [group G] weight = W.
sec, groups, exp_group = None, {}, {}
for line in open(sys.argv[2]):
    line = line.split("#")[0].strip()
    m = re.match(r"\[(group|export)\s+\"?([^\"\]]+)\"?\]", line)
    if m:
        sec = m.groups(); continue
    if line.startswith("["):
        sec = None; continue
    m = re.match(r"(\w+)\s*=\s*(\S+)", line)
    if m and sec:
        if sec[0] == "group" and m.group(1) == "weight":
            groups[sec[1]] = int(m.group(2))
        if sec[0] == "export" and m.group(1) == "group":
            exp_group[sec[1]] = m.group(2)
jobs = {j["jobname"]: j for j in fio["jobs"]}
w = {k: groups.get(exp_group.get(k, "default"), 500) for k in jobs}
tw = sum(w.values())
tb = sum(j["read"]["io_bytes"] for j in jobs.values()) or 1
print("%-8s %7s %13s %15s %9s %9s %10s" % ("tenant", "weight", "weight share",
      "measured share", "MiB/s", "IOPS", "p99 (ms)"))
for k in sorted(jobs, key=lambda k: w[k]):
    r = jobs[k]["read"]
    p99 = r.get("clat_ns", {}).get("percentile", {}).get("99.000000", 0) / 1e6
    print("%-8s %7d %12.1f%% %14.1f%% %9.2f %9.1f %10.1f" % (k, w[k], 100.0 * w[k] / tw,
          100.0 * r["io_bytes"] / tb, r["bw_bytes"] / 2**20, r["iops"], p99))
EOF
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
  if [ -s "$dir/final-stats.json" ]; then
    echo "=== the server wrote its final statistics (stats=FILE): $(wc -c <"$dir/final-stats.json") bytes of JSON"
  fi
  echo "=== demo over"
}

dir='' pid='' fio_pid=''
cleanup ()
{
  local p
  for p in $fio_pid $pid; do
    if kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  [ -n "$dir" ] && rm -rf "$dir"
  return 0
}
trap cleanup EXIT
trap 'echo; echo "demo: stopping"; exit 0' INT TERM

case ${DEMO:-tenants} in
  simple) demo_simple ;;
  tenants) demo_tenants ;;
  *) echo "demo: DEMO=${DEMO}: want tenants or simple" >&2; exit 2 ;;
esac
