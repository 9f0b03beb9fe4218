#!/usr/bin/env bash
# bench/qos.sh: caps and reservations through the server.
#
#   bench/qos.sh targets ssd|hdd|real   the caps' and reservations' targets
#   bench/qos.sh unchanged ssd|hdd|real nothing set: this build against the
#                                       build before caps existed (or
#                                       BENCH_QOS_BASE's)
#   bench/qos.sh qsd                    a cap, ours against
#                                       qemu-storage-daemon's throttle groups
#   bench/qos.sh table                  all of the above, each part under
#                                       BENCH_LOCK, then one table
#   bench/qos.sh report DIR...          the table of parts already run
#                                       (their results directories)
# With no argument: qsd (what this script did first).
#
# targets: each tenant is one fio job (fio's nbd engine, one connection)
# with its IOPS and bandwidth logged per second (log_avg_msec=1000), after
# BENCH_RAMP s unmeasured; BENCH_ROUNDS rounds of BENCH_RUNTIME s, the page
# cache dropped before each server.  The windows of all rounds are pooled.
#   - "capped": share of its windows after the first (and before the last,
#     cut short) within 5% of the cap; the target is all of them;
#   - "gold": share of its windows with >= 98% of its reservation while
#     the others saturate the device; the target is >= 98%.
# The devices and their scenarios:
#   ssd   emulate=ssd, 2 channels of 1 ms reads (2,000 IOPS: the device,
#         not the NBD path on a loaded 2-core machine, is the limit), IOPS
#         mode; three 4k random readers 32 deep: capped (weight 500,
#         iops_max = 400), gold (weight 100, iops_min = 500), bulk (500).
#         By weight gold would get 1/11, capped 5/11.
#   hdd   emulate=hdd (7200 rpm, no NCQ), CFQ's defaults in time mode, the
#         simulator's two disk scenarios on a sparse 1 TiB image at the
#         same offsets: tests/sim/qos-cap-hdd.job (a sequential 64k reader
#         32 deep, weight 1000, bps_max = 20MiB/s, beside a sequential
#         reader and a random one of weight 100) and
#         tests/sim/qos-res-hdd.job (gold, 4k random 8 deep, weight 100,
#         iops_min = 40, beside two sequential 64k readers of weight 500).
#   real  the real disk (BENCH_DIR, O_DIRECT), an image filled with data;
#         the ssd scenario's three tenants 16 deep with iops_max = 1000
#         and iops_min = 1000 (BENCH_QOS_REAL_CAP, BENCH_QOS_REAL_RES),
#         BENCH_QOS_CFQ's tuning.
# unchanged: the ssd, hdd (qos-cap-hdd's tenants) or real scenario with no
# cap and no reservation, served by this build and by BENCH_QOS_BASE's (by
# default a build of 2a8973d, the last commit without caps, made in
# /var/tmp/qosres/base;
# any other build, e.g. this tree with the qos hooks compiled out, named
# BENCH_QOS_BASE_NAME in the table), alternating, BENCH_UNCHANGED_ROUNDS
# rounds; medians of the total IOPS and of each tenant's share, and the
# ratio this/base of each (the target: within 2%).  Per round
# also, in the steady state (from 0.5 s after the ramp to 0.5 s before
# the end), the server's CPU per request (utime + stime of the nbdkit
# process, /proc/PID/stat, over the requests its control socket counted
# in between), its context switches per request (voluntary + involuntary,
# summed over its threads) and the IOPS of that interval; and the share
# of each tenant's requests slower than 50 ms (fio's latency_ms buckets).
# On this CPU-bound machine throughput follows CPU per request.
# qsd: with the same limit on one of three tenants reading the same image
# on the real disk, how close does each server hold the capped tenant to
# its limit second by second, and how much do the two others get?
#   ours  config= with [group capped] iops_max = LIMIT; groups a and b
#         unlimited (scheduler cfq, BENCH_QOS_CFQ tuning, as tenants.sh)
#   qsd   qemu-storage-daemon: one file blockdev (io_uring, O_DIRECT); the
#         capped export goes through a throttle filter node in a
#         throttle-group with limits.iops-total = LIMIT (QEMU's own bucket:
#         LIMIT/10 deep); a and b are exported from the file node directly
# Each tenant reads 4k at random BENCH_QOS_DEPTH deep in its own third of
# the image.  Per server, medians over rounds: the capped tenant's IOPS,
# the share of its 1 s windows (after the first) within 5% of the limit,
# its worst window, and a+b's IOPS; then the ratio ours/qsd of a+b.
#
# Every run records the load (uptime) it ran under.
#
# Environment (defaults):
#   BENCH_QOS_LIMIT=2000      qsd: the cap, requests/s
#   BENCH_QOS_DEPTH=16        qsd and real: iodepth of each tenant
#   BENCH_ROUNDS=3, BENCH_RUNTIME=20 (qsd: 10), BENCH_RAMP=2
#   BENCH_UNCHANGED_ROUNDS=5, BENCH_UNCHANGED_RUNTIME=12
#   BENCH_QOS_BASE=/var/tmp/qosres/base/plugin/nbdkit-cfq-plugin.so
#   BENCH_QOS_BASE_NAME=base  unchanged: what the table calls that build
#   BENCH_IMAGE_SIZE=2G       real disk image, preallocated, in BENCH_DIR
#   BENCH_DIR=/var/tmp        a real disk (not tmpfs)
#   BENCH_QOS_CFQ="mode=iops slice_idle=0 group_idle=8ms rotational=0"
#   BENCH_RESULTS=bench/results  (results in BENCH_RESULTS/qos-DATE-PART/)
#   BENCH_LOCK=/var/tmp/nbdkit-cfq-bench.lock  table: each part under flock on it
#   BENCH_DROP_CACHES=1
# Run the parts under the machine's benchmark lock:
#   flock "${BENCH_LOCK:-/var/tmp/nbdkit-cfq-bench.lock}" bench/qos.sh targets ssd
set -euo pipefail

BENCH_HOME=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$BENCH_HOME")
PLUGIN=$ROOT/plugin/nbdkit-cfq-plugin.so
BASE=${BENCH_QOS_BASE:-/var/tmp/qosres/base/plugin/nbdkit-cfq-plugin.so}
BASE_NAME=${BENCH_QOS_BASE_NAME:-base}
CFQCTL=$ROOT/tools/cfqctl
CFQ_ARGS=${BENCH_QOS_CFQ:-mode=iops slice_idle=0 group_idle=8ms rotational=0}
RAMP=${BENCH_RAMP:-2}
PY=/usr/bin/python3
STAMP=$(date +%Y%m%d-%H%M%S)
RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}

die () { echo "bench/qos: error: $*" >&2; exit 1; }
say () { echo "bench/qos: $*" >&2; }

[ -f "$PLUGIN" ] || die "plugin not built ($PLUGIN): run make"
command -v fio >/dev/null || die "no fio"
fio --enghelp=nbd >/dev/null 2>&1 || die "fio has no nbd engine"

PART=${1:-qsd}
ARG=${2:-}

# ---- table: every part, each under the lock, then one table -----------------
if [ "$PART" = table ]; then
  lock=${BENCH_LOCK:-/var/tmp/nbdkit-cfq-bench.lock}
  dirs=()
  for p in "targets ssd" "targets hdd" "targets real" "unchanged ssd" \
           "unchanged real"; do
    say "== $p (under $lock)"
    # shellcheck disable=SC2086
    d=$(BENCH_RESULTS=$RESULTS flock "$lock" "$0" $p | tail -n 1)
    [ -d "$d" ] || die "$p: no results directory ($d)"
    dirs+=("$d")
  done
  PART=report
  set -- report "${dirs[@]}"
fi
# ---- report DIR...: the table of parts already run ------------------------------
if [ "$PART" = report ]; then
  shift
  mkdir -p "$RESULTS"
  "$PY" - "$@" <<'EOF' | tee "$RESULTS/qos-$STAMP-table.txt"
import json, sys
print("| device | target | wanted | measured | met | load |")
print("|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    s = json.load(open(d + "/summary.json"))
    for row in s["rows"]:
        dev = s["device"] + (" (%s)" % row["scenario"] if row.get("scenario",
                             s["device"]) != s["device"] else "")
        print("| %s | %s | %s | %s | %s | %s |" % (dev, row["target"],
              row["wanted"], row["measured"], "met" if row["met"] else "NOT met",
              s["load"]))
EOF
  exit 0
fi

WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/cfq-qos.XXXXXX")
SRV=
cleanup () {
  [ -z "$SRV" ] || { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT
case $(stat -f -c %T "$WORK") in tmpfs|ramfs) die "$WORK is on tmpfs: set BENCH_DIR" ;; esac
OUT=$RESULTS/qos-$STAMP-$PART${ARG:+-$ARG}
mkdir -p "$OUT"

drop_caches () {
  sync
  [ "${BENCH_DROP_CACHES:-1}" = 1 ] && [ "$(id -u)" = 0 ] &&
    echo 3 >/proc/sys/vm/drop_caches || true
}
load () { cut -d' ' -f1-3 /proc/loadavg; }

IMG=$WORK/disk.img
fill_image () {
  local size=${BENCH_IMAGE_SIZE:-2G}
  say "image: $IMG ($size, filled with data)"
  fio --name=fill --filename="$IMG" --size="$size" --rw=write --bs=1M \
    --ioengine=io_uring --direct=1 --iodepth=8 >/dev/null || die "cannot fill $IMG"
}

wait_sock () {
  local i
  for ((i = 0; i < 100; i++)); do
    [ -S "$1" ] && return 0
    kill -0 "$SRV" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# A scenario is a config (written by scenario_conf) and its tenants, one
# line each: NAME RW BS DEPTH (the export and group have the tenant's name).
# scenario_conf NAME QOS(yes|no) > FILE (not in a subshell: it sets
# TENANTS to the tenant lines).
TENANTS=
scenario_conf () {
  local name=$1 qos=$2 reg
  q () { [ "$qos" = yes ] && printf '%s\n' "$1" || true; }
  case $name in
    ssd)
      TENANTS="capped randread 4k 32
gold randread 4k 32
bulk randread 4k 32"
      cat <<EOF
[device]
file = $IMG
emulate = ssd
mode = iops
model.channels = 2
model.read = 1ms
model.write = 1ms
model.seed = 1
[scheduler]
scheduler = cfq
slice_idle = 0
group_idle = 8ms
rotational = 0
[group capped]
weight = 500
$(q "iops_max = 400")
[group gold]
weight = 100
$(q "iops_min = 500")
[group bulk]
weight = 500
[export capped]
group = capped
size = 10G
[export gold]
group = gold
offset = 10G
size = 10G
[export bulk]
group = bulk
offset = 20G
size = 10G
EOF
      ;;
    hdd-cap)
      TENANTS="capped read 64k 32
s1 read 64k 4
r2 randread 4k 8"
      cat <<EOF
[device]
file = $IMG
emulate = hdd
mode = time
model.seed = 1
[scheduler]
scheduler = cfq
[group capped]
weight = 1000
$(q "bps_max = 20MiB/s")
[group s1]
weight = 100
[group r2]
weight = 100
[export capped]
group = capped
size = 300G
[export s1]
group = s1
offset = 300G
size = 300G
[export r2]
group = r2
offset = 600G
size = 100G
EOF
      ;;
    hdd-res)
      TENANTS="gold randread 4k 8
s1 read 64k 4
s2 read 64k 4"
      cat <<EOF
[device]
file = $IMG
emulate = hdd
mode = time
model.seed = 1
[scheduler]
scheduler = cfq
[group gold]
weight = 100
$(q "iops_min = 40")
[group s1]
weight = 500
[group s2]
weight = 500
[export gold]
group = gold
size = 100G
[export s1]
group = s1
offset = 300G
size = 300G
[export s2]
group = s2
offset = 600G
size = 300G
EOF
      ;;
    real)
      local d=${BENCH_QOS_DEPTH:-16}
      TENANTS="capped randread 4k $d
gold randread 4k $d
bulk randread 4k $d"
      reg=$(($(stat -c %s "$IMG") / 3 / 1048576 * 1048576))
      cat <<EOF
[device]
file = $IMG
[group capped]
weight = 500
$(q "iops_max = ${BENCH_QOS_REAL_CAP:-1000}")
[group gold]
weight = 100
$(q "iops_min = ${BENCH_QOS_REAL_RES:-1000}")
[group bulk]
weight = 500
[export capped]
group = capped
size = $reg
[export gold]
group = gold
offset = $reg
size = $reg
[export bulk]
group = bulk
offset = $((2 * reg))
size = $reg
EOF
      ;;
    *) die "unknown scenario $name" ;;
  esac
}

# serve PLUGIN CONF SOCK LOG [KEY=VALUE...]: start nbdkit in the background.
serve () {
  local plugin=$1 conf=$2 sock=$3 log=$4
  shift 4
  rm -f "$sock"
  nbdkit -f --exit-with-parent -U "$sock" --threads 32 "$plugin" \
    config="$conf" "$@" >"$log" 2>&1 &
  SRV=$!
  wait_sock "$sock" || { cat "$log" >&2; die "server did not start ($conf)"; }
}
unserve () { kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=; }

# run_fio SOCK PREFIX RUNTIME: the scenario's TENANTS, one job each.
run_fio () {
  local sock=$1 pre=$2 rt=$3 n rw bs d
  {
    printf '[global]\nioengine=nbd\ntime_based=1\nramp_time=%s\n' "$RAMP"
    printf 'runtime=%s\nlog_avg_msec=1000\n' "$rt"
    while read -r n rw bs d; do
      printf '[%s]\nuri=nbd+unix:///%s?socket=%s\nrw=%s\nbs=%s\niodepth=%s\n' \
        "$n" "$n" "$sock" "$rw" "$bs" "$d"
      printf 'write_iops_log=%s-%s\nwrite_bw_log=%s-%s\n' "$pre" "$n" "$pre" "$n"
    done <<<"$TENANTS"
  } >"$WORK/job.fio"
  timeout $((RAMP + rt + 60)) fio --output-format=json --output="$pre.json" \
    "$WORK/job.fio" >>"$pre.fio.log" 2>&1 || die "fio failed (see $pre.fio.log)"
}

# ---- targets -------------------------------------------------------------------------
run_targets () {
  local dev=$1 rounds=${BENCH_ROUNDS:-3} rt=${BENCH_RUNTIME:-20} scen s r extra=()
  case $dev in
    ssd) scen=(ssd); truncate -s 64G "$IMG" ;;
    hdd) scen=(hdd-cap hdd-res); truncate -s 1T "$IMG" ;;
    real) scen=(real); fill_image; read -r -a extra <<<"$CFQ_ARGS" ;;
    *) die "targets: want ssd, hdd or real, not '$dev'" ;;
  esac
  for s in "${scen[@]}"; do
    scenario_conf "$s" yes >"$WORK/$s.conf"
    cp "$WORK/$s.conf" "$OUT/$s.conf"
    for ((r = 1; r <= rounds; r++)); do
      drop_caches
      serve "$PLUGIN" "$WORK/$s.conf" "$WORK/s.sock" "$OUT/r$r-$s.log" "${extra[@]}"
      echo "$(load)" >"$OUT/r$r-$s.load"
      say "$s round $r/$rounds, load $(load)"
      run_fio "$WORK/s.sock" "$OUT/r$r-$s" "$rt"
      unserve
    done
  done
  "$PY" - "$OUT" "$dev" "$rounds" "${scen[@]}" <<'EOF' | tee "$OUT/table.txt" >&2
import glob, json, sys
out, dev, rounds, scen = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def log(r, s, t, kind):
    f = glob.glob("%s/r%d-%s-%s_%s*.log" % (out, r, s, t, kind))[0]
    return [int(l.split(",")[1]) for l in open(f) if l.strip()]
# The targets of each scenario: (tenant, kind, what, value).
T = {"ssd": [("capped", "iops", "cap", 400), ("gold", "iops", "res", 500)],
     "hdd-cap": [("capped", "bw", "cap", 20 * 1024)],      # KiB/s in fio's log
     "hdd-res": [("gold", "iops", "res", 40)],
     "real": None}
if "real" in scen:
    c = open(out + "/real.conf").read()
    cap = int(c.split("iops_max = ")[1].split()[0])
    res = int(c.split("iops_min = ")[1].split()[0])
    T["real"] = [("capped", "iops", "cap", cap), ("gold", "iops", "res", res)]
loads = [open(f).read().strip() for f in sorted(glob.glob(out + "/r*.load"))]
rows = []
for s in scen:
    for t, kind, what, v in T[s]:
        ws, per = [], []
        for r in range(1, rounds + 1):
            w = log(r, s, t, kind)[:-1]          # the last one is cut short
            if what == "cap":
                w = w[1:]                        # "after the first"
            ws += w
            per.append(w)
        unit = "MiB/s" if kind == "bw" else "IOPS"
        sc = 1024.0 if kind == "bw" else 1.0
        if what == "cap":
            good = [abs(x - v) <= 0.05 * v for x in ws]
            frac = sum(good) / len(ws)
            rows.append(dict(scenario=s, target="cap: every 1 s window after the first within 5%",
                wanted="%s = %g %s, 100%% of windows" % (t, v / sc, unit),
                measured="%.0f%% of %d windows in 5%%; mean %.2f, range %.1f-%.1f" % (
                    100 * frac, len(ws), sum(ws) / len(ws) / sc, min(ws) / sc, max(ws) / sc),
                met=frac == 1.0, fraction=frac, windows=[[x / sc for x in w] for w in per]))
        else:
            good = [x >= 0.98 * v for x in ws]
            frac = sum(good) / len(ws)
            rows.append(dict(scenario=s, target="reservation: >= 98% of it in >= 98% of 1 s windows",
                wanted="%s >= %g %s in >= 98%% of windows" % (t, 0.98 * v / sc, unit),
                measured="%.1f%% of %d windows; mean %.1f, min %.0f" % (
                    100 * frac, len(ws), sum(ws) / len(ws) / sc, min(ws) / sc),
                met=frac >= 0.98, fraction=frac, windows=[[x / sc for x in w] for w in per]))
    # What each tenant got (fio's totals, medians over rounds).
    for r in range(1, rounds + 1):
        j = json.load(open("%s/r%d-%s.json" % (out, r, s)))
        print("%s round %d: %s" % (s, r, ", ".join("%s %.0f IOPS %.1f MiB/s" % (
            x["jobname"], x["read"]["iops"], x["read"]["bw"] / 1024) for x in j["jobs"])))
summ = dict(device=dev, load=" / ".join(sorted(set(loads), key=loads.index))
            if len(loads) < 4 else "%s .. %s" % (min(loads, key=lambda l: float(l.split()[0])),
                max(loads, key=lambda l: float(l.split()[0]))), rows=rows)
for row in rows:
    print("%-8s %-52s %-40s %s  %s" % (row["scenario"], row["target"], row["wanted"],
          row["measured"], "met" if row["met"] else "NOT met"))
    for w in row["windows"]:
        print("   ", " ".join("%g" % round(x, 1) for x in w))
print("load:", ", ".join(loads))
json.dump(summ, open(out + "/summary.json", "w"), indent=1)
EOF
}

# ---- unchanged ------------------------------------------------------------------------
run_unchanged () {
  local dev=$1 rounds=${BENCH_UNCHANGED_ROUNDS:-5} rt=${BENCH_UNCHANGED_RUNTIME:-12}
  local r i b order sp scen extra=()
  [ -f "$BASE" ] || die "no base build at $BASE (BENCH_QOS_BASE): build the plugin to compare with there"
  [ -x "$CFQCTL" ] || die "no $CFQCTL: run make"
  case $dev in
    ssd) truncate -s 64G "$IMG"; scen=ssd ;;
    hdd) truncate -s 1T "$IMG"; scen=hdd-cap ;;
    real) fill_image; read -r -a extra <<<"$CFQ_ARGS"; scen=real ;;
    *) die "unchanged: want ssd, hdd or real, not '$dev'" ;;
  esac
  scenario_conf "$scen" no >"$WORK/u.conf"
  cp "$WORK/u.conf" "$OUT/$dev.conf"
  echo "$BASE_NAME $BASE" >"$OUT/base"
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order=(base this); else order=(this base); fi
    for b in "${order[@]}"; do
      drop_caches
      if [ "$b" = base ]; then i=$BASE; else i=$PLUGIN; fi
      rm -f "$WORK/c.sock"
      serve "$i" "$WORK/u.conf" "$WORK/s.sock" "$OUT/r$r-$b.log" "${extra[@]}" \
        control="$WORK/c.sock"
      echo "$(load)" >"$OUT/r$r-$b.load"
      say "unchanged $dev round $r/$rounds: $b, load $(load)"
      sample_server "$OUT/r$r-$b.cpu" "$WORK/c.sock" "$rt" &
      sp=$!
      run_fio "$WORK/s.sock" "$OUT/r$r-$b" "$rt"
      wait "$sp" || die "no CPU sample of round $r ($b)"
      unserve
    done
  done
  "$PY" - "$OUT" "$dev" "$rounds" "$BASE_NAME" <<'EOF' | tee "$OUT/table.txt" >&2
import glob, json, statistics, sys
out, dev, rounds, bname = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
med = statistics.median
loads = [open(f).read().strip() for f in sorted(glob.glob(out + "/r*.load"))]
SLOW = ("100", "250", "500", "750", "1000", "2000", ">=2000")   # > 50 ms
R = {}
def spread(v):
    return "%.3g-%.3g" % (min(v), max(v))
for b in ("base", "this"):
    tot, share, slow, cpu, cs, siops = [], {}, {}, [], [], []
    for r in range(1, rounds + 1):
        j = json.load(open("%s/r%d-%s.json" % (out, r, b)))
        io = {x["jobname"]: x["read"]["iops"] for x in j["jobs"]}
        t = sum(io.values())
        tot.append(t)
        for n, v in io.items():
            share.setdefault(n, []).append(v / t)
        for x in j["jobs"]:
            slow.setdefault(x["jobname"], []).append(
                sum(x["latency_ms"].get(k, 0) for k in SLOW))
        c = json.load(open("%s/r%d-%s.cpu" % (out, r, b)))
        cpu.append(1e6 * c["cpu_s"] / c["requests"])
        cs.append(c["ctxsw"] / c["requests"])
        siops.append(c["requests"] / c["wall_s"])
    R[b] = dict(total=tot, share=share, slow_pct=slow, cpu_us_per_rq=cpu,
                ctxsw_per_rq=cs, steady_iops=siops)
    name = bname if b == "base" else "this"
    print("%-8s total IOPS per round: %s; median %.0f" % (name, " ".join("%.0f" % x for x in tot), med(tot)))
    for n, v in share.items():
        print("         %-7s share per round: %s; median %.4f" % (n, " ".join("%.4f" % x for x in v), med(v)))
    for n, v in slow.items():
        print("         %-7s %% over 50 ms: %s; median %.2f" % (n, " ".join("%.2f" % x for x in v), med(v)))
    print("         server CPU us/request: %s; median %.2f" % (" ".join("%.2f" % x for x in cpu), med(cpu)))
    print("         context switches/request: %s; median %.3f" % (" ".join("%.3f" % x for x in cs), med(cs)))
    print("         steady-state IOPS (server's count): %s; median %.0f" % (" ".join("%.0f" % x for x in siops), med(siops)))
ratios = {"total IOPS": med(R["this"]["total"]) / med(R["base"]["total"])}
for n in R["base"]["share"]:
    ratios["share of " + n] = med(R["this"]["share"][n]) / med(R["base"]["share"][n])
other = {"CPU/request": med(R["this"]["cpu_us_per_rq"]) / med(R["base"]["cpu_us_per_rq"]),
         "ctxsw/request": med(R["this"]["ctxsw_per_rq"]) / med(R["base"]["ctxsw_per_rq"])}
paired = {k: [a / b for a, b in zip(R["this"][f], R["base"][f])]
          for k, f in (("total IOPS", "total"), ("CPU/request", "cpu_us_per_rq"))}
worst = max(ratios.values(), key=lambda x: abs(x - 1))
rows = [dict(target="nothing set: throughput and shares unchanged (+-2%)",
             wanted="this/%s within 0.98-1.02" % bname,
             measured="; ".join("%s %.3f" % kv for kv in ratios.items()) +
                      "; CPU/request %.3f" % other["CPU/request"] +
                      " (medians of %d alternating rounds; %s %.0f IOPS)" % (rounds, bname, med(R["base"]["total"])),
             met=abs(worst - 1) <= 0.02, ratios=dict(ratios, **other), paired=paired)]
print("this/%s:" % bname, ", ".join("%s %.3f" % kv for kv in list(ratios.items()) + list(other.items())),
      "->", "met" if rows[0]["met"] else "NOT met")
for k, v in paired.items():
    print("paired rounds, %s this/%s: %s; median %.3f, range %s" % (
        k, bname, " ".join("%.3f" % x for x in v), med(v), spread(v)))
print("load:", ", ".join(loads))
json.dump(dict(device=dev + ("" if bname == "base" else " vs " + bname),
               load="%s .. %s" % (min(loads, key=lambda l: float(l.split()[0])),
                max(loads, key=lambda l: float(l.split()[0]))), rows=rows,
               raw=R), open(out + "/summary.json", "w"), indent=1)
EOF
}

# sample_server FILE CTL RUNTIME: the server's ($SRV) CPU, context switches
# and completed requests (its control socket CTL) from 0.5 s after the ramp
# to 0.5 s before the end of the run, as JSON in FILE.
sample_server () {
  "$PY" - "$1" "$SRV" "$2" "$CFQCTL" "$RAMP" "$3" <<'EOF'
import glob, json, os, subprocess, sys, time
out, pid, ctl, cfqctl, ramp, rt = sys.argv[1:7]
def sample():
    t = time.monotonic()
    st = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime
    cs = 0
    for f in glob.glob("/proc/%s/task/*/status" % pid):
        try:
            for l in open(f):
                if "ctxt_switches:" in l:     # voluntary_, nonvoluntary_
                    cs += int(l.split()[1])
        except OSError:
            pass                # a thread that just went
    j = json.loads(subprocess.run([cfqctl, "-s", ctl, "stats", "--json"], check=True,
                                  capture_output=True, text=True).stdout)
    return t, cpu, cs, sum(j["device"]["requests"].values())
time.sleep(float(ramp) + 0.5)
a = sample()
time.sleep(float(rt) - 1.0)
b = sample()
json.dump(dict(wall_s=b[0] - a[0], cpu_s=b[1] - a[1], ctxsw=b[2] - a[2],
               requests=b[3] - a[3]), open(out, "w"))
EOF
}

# ---- qsd ------------------------------------------------------------------------------
run_qsd () {
  local LIMIT=${BENCH_QOS_LIMIT:-2000} DEPTH=${BENCH_QOS_DEPTH:-16}
  local ROUNDS=${BENCH_ROUNDS:-3} RUNTIME=${BENCH_RUNTIME:-10}
  local QSD REG r i SYSTEMS
  QSD=$(command -v qemu-storage-daemon || true)
  [ -n "$QSD" ] || say "no qemu-storage-daemon: its rows are skipped"
  fill_image
  REG=$(($(stat -c %s "$IMG") / 3 / 1048576 * 1048576))
  cat >"$WORK/ours.conf" <<EOF
[device]
file = $IMG
[group capped]
iops_max = $LIMIT
[group a]
[group b]
[export capped]
group = capped
size = $REG
[export a]
group = a
offset = $REG
size = $REG
[export b]
group = b
offset = $((2 * REG))
size = $REG
EOF
  # qsd exports whole-image nodes, so each job reads its region by offset.
  qsd_job () {
    local sock=$1 pre=$2 sys=$3 i=0 e
    printf '[global]\nioengine=nbd\nrw=randread\nbs=4k\niodepth=%s\n' "$DEPTH"
    printf 'time_based=1\nramp_time=%s\nruntime=%s\nlog_avg_msec=1000\n' "$RAMP" "$RUNTIME"
    for e in capped a b; do
      printf '[%s]\nuri=nbd+unix:///%s?socket=%s\nwrite_iops_log=%s-%s\n' \
        "$e" "$e" "$sock" "$pre" "$e"
      if [ "$sys" = qsd ]; then
        printf 'offset=%s\nsize=%s\n' $((i * REG)) "$REG"
      fi
      i=$((i + 1))
    done
  }
  run_one () {  # ROUND SYSTEM
    local r=$1 sys=$2 sock=$WORK/$2.sock pre=$OUT/r$1-$2 log=$OUT/r$1-$2.log
    local extra=()
    rm -f "$sock"
    if [ "$sys" = ours ]; then
      read -r -a extra <<<"$CFQ_ARGS"
      serve "$PLUGIN" "$WORK/ours.conf" "$sock" "$log" "${extra[@]}"
    else
      setpriv --pdeathsig KILL "$QSD" \
        --blockdev driver=file,node-name=f,filename="$IMG",aio=io_uring,cache.direct=on \
        --object throttle-group,id=tg,limits.iops-total="$LIMIT" \
        --blockdev driver=throttle,node-name=t,file=f,throttle-group=tg \
        --nbd-server addr.type=unix,addr.path="$sock" \
        --export type=nbd,id=ec,node-name=t,name=capped \
        --export type=nbd,id=ea,node-name=f,name=a \
        --export type=nbd,id=eb,node-name=f,name=b >"$log" 2>&1 &
      SRV=$!
      wait_sock "$sock" || { cat "$log" >&2; die "$sys did not start"; }
    fi
    qsd_job "$sock" "$pre" "$sys" >"$WORK/job.fio"
    drop_caches
    echo "$(load)" >"$pre.load"
    say "round $r: $sys, load $(load)"
    timeout $((RAMP + RUNTIME + 60)) fio --output-format=json \
      --output="$pre.json" "$WORK/job.fio" >>"$log" 2>&1 || die "fio on $sys failed (see $log)"
    unserve
  }
  SYSTEMS=(ours)
  [ -z "$QSD" ] || SYSTEMS+=(qsd)
  say "limit $LIMIT IOPS on 1 of 3 tenants, 4k randread depth $DEPTH each;" \
      "$ROUNDS round(s) x ${#SYSTEMS[@]} x (${RAMP}s + ${RUNTIME}s)"
  for ((r = 1; r <= ROUNDS; r++)); do
    for ((i = 0; i < ${#SYSTEMS[@]}; i++)); do
      run_one "$r" "${SYSTEMS[$(((i + r - 1) % ${#SYSTEMS[@]}))]}"
    done
  done
  "$PY" - "$OUT" "$LIMIT" "$ROUNDS" "${SYSTEMS[@]}" <<'EOF' | tee "$OUT/table.txt" >&2
import glob, json, statistics, sys
out, limit, rounds, systems = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def log(r, s, t):
    f = glob.glob("%s/r%d-%s-%s_iops*.log" % (out, r, s, t))[0]
    return [int(l.split(",")[1]) for l in open(f) if l.strip()]
def fio_iops(r, s, t):
    j = json.load(open("%s/r%d-%s.json" % (out, r, s)))
    return next(x for x in j["jobs"] if x["jobname"] == t)["read"]["iops"]
med = statistics.median
summary = {}
loads = [open(f).read().strip() for f in sorted(glob.glob(out + "/r*.load"))]
print("cap: iops_max = %d on tenant 'capped'; medians over %d round(s)" % (limit, rounds))
print("%-5s %12s %14s %14s %12s %12s" % ("", "capped IOPS", "windows in 5%",
      "worst window", "a+b IOPS", "total IOPS"))
for s in systems:
    cap, inwin, worst, ab, tot = [], [], [], [], []
    for r in range(1, rounds + 1):
        w = log(r, s, "capped")[1:-1] or log(r, s, "capped")
        cap.append(fio_iops(r, s, "capped"))
        inwin.append(sum(abs(x - limit) <= 0.05 * limit for x in w) / len(w))
        worst.append(max(w, key=lambda x: abs(x - limit)))
        ab.append(fio_iops(r, s, "a") + fio_iops(r, s, "b"))
        tot.append(cap[-1] + ab[-1])
    summary[s] = dict(capped_iops=med(cap), windows_within_5pct=med(inwin),
                      worst_window=med(worst), others_iops=med(ab),
                      total_iops=med(tot), rounds=dict(capped=cap,
                      within=inwin, worst=worst, others=ab))
    print("%-5s %12.0f %13.0f%% %14.0f %12.0f %12.0f" % (s, med(cap),
          100 * med(inwin), med(worst), med(ab), med(tot)))
rows = [dict(target="cap, ours vs qsd (%d IOPS)" % limit, wanted="-",
             measured="; ".join("%s %.0f IOPS, %.0f%% windows in 5%%, others %.0f" % (
                 s, v["capped_iops"], 100 * v["windows_within_5pct"], v["others_iops"])
                 for s, v in summary.items()), met=True)]
if "qsd" in summary:
    print("ours/qsd: a+b IOPS %.2fx, capped IOPS %.2fx" % (
        summary["ours"]["others_iops"] / summary["qsd"]["others_iops"],
        summary["ours"]["capped_iops"] / summary["qsd"]["capped_iops"]))
print("load:", ", ".join(loads))
summary.update(device="real (qsd)", load="%s .. %s" % (min(loads, key=lambda l: float(l.split()[0])),
                max(loads, key=lambda l: float(l.split()[0]))), rows=rows)
json.dump(summary, open(out + "/summary.json", "w"), indent=1)
EOF
}

case $PART in
  targets) run_targets "$ARG" ;;
  unchanged) run_unchanged "$ARG" ;;
  qsd) run_qsd ;;
  *) die "usage: bench/qos.sh [targets ssd|hdd|real | unchanged ssd|hdd|real | qsd | table | report DIR...]" ;;
esac
say "results in $OUT"
echo "$OUT"
