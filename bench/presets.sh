#!/usr/bin/env bash
# bench/presets.sh: each device preset, model against datasheet, and the
# server emulating it against the model.
#
# What it answers: does emulate=PRESET behave like the device it names?
# Two steps, one table:
#
#   cfqsim   the model alone (fifo, one job, virtual time): sequential
#            128 KiB reads at depth 32 and 4 KiB random reads over the
#            whole device at depths 1, 32 and any depth a published figure
#            was measured at, against the published figures the preset
#            carries (core/devmodel.c, devmodel_presets; printed by
#            `cfqsim --json --list-models`).  test-devmodel checks the
#            same within 20%.
#   server   nbdkit with scheduler=fifo emulate=PRESET, the same workloads
#            through fio's nbd engine, one connection: how close the
#            emulated device comes to its model.  The real I/O is still
#            done, so a device faster than the disk under the image (or
#            than the NBD round trip) cannot be emulated faster than that;
#            PRESETS_BACKEND=null takes the disk out and leaves the
#            emulation mechanism and the NBD path.
#   base     with PRESETS_BASE_PLUGIN=PATH (another build's
#            nbdkit-cfq-plugin.so, main's say), the same server runs with
#            that build too, in the same rounds, alternating: a change to
#            the emulation's mechanism against its base, both against the
#            model.  The table then gives IOPS (MB/s for seq) and fio's p50
#            completion latency for the model, this build and the base.
#
# Each server run: drop the page cache, start the server, fio with
# PRESETS_RAMP s unmeasured then PRESETS_RUNTIME s measured, stop it.
# Rounds alternate presets and workloads; the table gives medians.  Every
# round holds BENCH_LOCK (default /var/tmp/nbdkit-cfq-bench.lock; empty:
# no lock) so that no other
# benchmark runs at the same time; each holds it for about
# presets x workloads x (runtime + ramp + 2) seconds.
#
# Environment (defaults):
#   PRESETS="sata7200 vertex nvme"   presets (any devmodel name works)
#   PRESETS_ROUNDS=3                 server rounds
#   PRESETS_RUNTIME=5 PRESETS_RAMP=1 seconds per server run
#   PRESETS_SERVER=1                 0: cfqsim only
#   PRESETS_BACKEND=io_uring         or null (no disk I/O: the mechanism)
#   PRESETS_IMAGE_SIZE=2G            image, filled with data once
#   PRESETS_DIR=/var/tmp/presets     image and sockets (a real disk)
#   PRESETS_OUT=bench/results        presets-DATE.md and the raw JSON
#   BENCH_LOCK=/var/tmp/nbdkit-cfq-bench.lock
#   PRESETS_SIM_DURATION=30s         cfqsim's virtual time per workload
#   PRESETS_WORKLOADS=               only these of seq rand1 rand32 ... (all)
#   PRESETS_BASE_PLUGIN=             another build to run side by side (none)
#
# Output: the table on stdout and in PRESETS_OUT/presets-DATE.md.  Exit
# status is non-zero only when the harness fails, never for a ratio.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PLUGIN=$ROOT/plugin/nbdkit-cfq-plugin.so
CFQSIM=$ROOT/tools/cfqsim
PY=/usr/bin/python3

PRESETS=${PRESETS:-sata7200 vertex nvme}
ROUNDS=${PRESETS_ROUNDS:-3}
RUNTIME=${PRESETS_RUNTIME:-5}
RAMP=${PRESETS_RAMP:-1}
SERVER=${PRESETS_SERVER:-1}
BACKEND=${PRESETS_BACKEND:-io_uring}
SIZE=${PRESETS_IMAGE_SIZE:-2G}
DIR=${PRESETS_DIR:-/var/tmp/presets}
OUT=${PRESETS_OUT:-$ROOT/bench/results}
LOCK=${BENCH_LOCK-/var/tmp/nbdkit-cfq-bench.lock}
SIM_DURATION=${PRESETS_SIM_DURATION:-30s}
ONLY=${PRESETS_WORKLOADS:-}
BASE=${PRESETS_BASE_PLUGIN:-}

die() { echo "presets.sh: $*" >&2; exit 1; }

[ -x "$CFQSIM" ] || die "$CFQSIM not built (make)"
stamp=$(date +%Y%m%d-%H%M%S)
raw=$OUT/presets-$stamp
mkdir -p "$raw"
"$CFQSIM" --json --list-models >"$raw/models.json" || die "cfqsim --list-models"

# The workloads of a preset: "seq" and "randDEPTH" for 1, 32 and the
# depths of its published figures.
workloads() {  # PRESET
  local d depths
  depths=$("$PY" - "$raw/models.json" "$1" <<'EOF'
import json, sys
m = {x["name"]: x for x in json.load(open(sys.argv[1]))}
if sys.argv[2] not in m:
    sys.exit("unknown preset %s" % sys.argv[2])
d = {1, 32} | {r["depth"] for r in m[sys.argv[2]].get("published", {}).get("rand", [])}
print(" ".join(str(x) for x in sorted(d)))
EOF
) || die "preset $1: not a device model"
  local all w out=""
  all="seq"
  for d in $depths; do all+=" rand$d"; done
  for w in $all; do
    if [ -z "$ONLY" ] || [[ " $ONLY " == *" $w "* ]]; then out+=" $w"; fi
  done
  echo "${out# }"
}

# ---- the model: cfqsim ------------------------------------------------------

sim_job() {  # PRESET WORKLOAD PATH
  local depth bs rw
  case $2 in
    seq) depth=32; bs=128k; rw="read" ;;
    rand*) depth=${2#rand}; bs=4k; rw="randread" ;;
  esac
  cat >"$3" <<EOF
[sim]
duration = $SIM_DURATION
seed = 1
[device]
emulate = $1
queue_depth = $depth
[scheduler]
scheduler = fifo
[export]
readonly = yes
[tenant $2]
rw = $rw
bs = $bs
iodepth = $depth
EOF
}

for p in $PRESETS; do
  for w in $(workloads "$p"); do
    sim_job "$p" "$w" "$raw/sim-$p-$w.job"
    "$CFQSIM" --json "$raw/sim-$p-$w.job" >"$raw/sim-$p-$w.json" ||
      die "cfqsim $p $w failed"
  done
done

# ---- the server --------------------------------------------------------------

server_run() {  # PRESET WORKLOAD ROUND [BUILD: srv or base]
  local p=$1 w=$2 b=${4:-srv} sock=$DIR/sock.$$ pid fargs plugin=$PLUGIN
  local json=$raw/${4:-srv}-$1-$2-$3.json
  [ "$b" = srv ] || plugin=$BASE
  case $w in
    seq) fargs="--rw=read --bs=128k --iodepth=32" ;;
    rand*) fargs="--rw=randread --bs=4k --iodepth=${w#rand}" ;;
  esac
  sync
  echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
  rm -f "$sock"
  nbdkit -U "$sock" -f --exit-with-parent --threads 64 "$plugin" \
    file="$DIR/image" scheduler=fifo backend="$BACKEND" emulate="$p" &
  pid=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  if [ ! -S "$sock" ]; then
    kill "$pid" 2>/dev/null || true
    die "server for $p did not start"
  fi
  # shellcheck disable=SC2086
  timeout $((RAMP + RUNTIME + 60)) fio --name="$w" --ioengine=nbd \
    --uri="nbd+unix:///?socket=$sock" --size="$SIZE" --time_based \
    --ramp_time="$RAMP" --runtime="$RUNTIME" --randseed="$3" \
    --output-format=json $fargs >"$json.tmp" 2>"$json.err" ||
    echo "presets.sh: fio $p $w round $3 failed (see $json.err)" >&2
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$sock"
  # fio's nbd engine prints a line before the JSON.
  sed -n '/^{/,$p' "$json.tmp" >"$json"
  rm -f "$json.tmp"
}

if [ "$SERVER" = 1 ]; then
  command -v nbdkit >/dev/null || die "nbdkit not installed"
  command -v fio >/dev/null || die "fio not installed"
  [ -f "$PLUGIN" ] || die "$PLUGIN not built (make)"
  [ -z "$BASE" ] || [ -f "$BASE" ] || die "PRESETS_BASE_PLUGIN: no $BASE"
  mkdir -p "$DIR"
  if [ ! -f "$DIR/image" ] ||
     [ "$(stat -c %s "$DIR/image")" != "$(numfmt --from=iec "$SIZE")" ]; then
    rm -f "$DIR/image"
    fio --name=fill --filename="$DIR/image" --size="$SIZE" --rw=write \
      --bs=1M --ioengine=io_uring --direct=1 --iodepth=8 >/dev/null ||
      die "cannot write $DIR/image"
  fi
  for r in $(seq "$ROUNDS"); do
    # One round under the lock; the order rotates from round to round.
    runs=()
    for p in $PRESETS; do
      for w in $(workloads "$p"); do
        # this build and the base, in turns: who goes first alternates
        if [ -z "$BASE" ]; then runs+=("$p $w srv")
        elif [ $((r % 2)) = 1 ]; then runs+=("$p $w srv" "$p $w base")
        else runs+=("$p $w base" "$p $w srv"); fi
      done
    done
    n=${#runs[@]}
    order=()
    for i in $(seq 0 $((n - 1))); do order+=("${runs[$(((i + r) % n))]}"); done
    echo "presets.sh: round $r/$ROUNDS: ${#order[@]} runs" >&2
    if [ -n "$LOCK" ]; then exec 9>"$LOCK"; flock 9; fi
    for pw in "${order[@]}"; do
      # shellcheck disable=SC2086
      set -- $pw
      server_run "$1" "$2" "$r" "$3"
    done
    flock -u 9
  done
fi

# ---- the table ---------------------------------------------------------------

"$PY" - "$raw" "$PRESETS" "$ROUNDS" "$SERVER" "$BACKEND" "$BASE" <<'EOF' | tee "$OUT/presets-$stamp.md"
import glob, json, os, statistics, sys

raw, presets, rounds, server, backend, base = sys.argv[1:7]
models = {m["name"]: m for m in json.load(open(os.path.join(raw, "models.json")))}

def sim(p, w):
    """The model's throughput and p50 latency (us)."""
    d = json.load(open(os.path.join(raw, "sim-%s-%s.json" % (p, w))))
    j = d["tenants"][0]
    return (j["bytes"] / d["duration_s"] / 1e6 if w == "seq" else j["iops"],
            j["lat_us"]["p50"])

def srv(p, w, build="srv"):
    """Median throughput, median p50 completion latency (us), runs."""
    vals, p50s = [], []
    for f in sorted(glob.glob(os.path.join(raw, "%s-%s-%s-*.json" % (build, p, w)))):
        try:
            r = json.load(open(f))["jobs"][0]["read"]
        except (ValueError, KeyError, IndexError):
            continue
        vals.append(r["bw_bytes"] / 1e6 if w == "seq" else r["iops"])
        p50s.append(r["clat_ns"]["percentile"]["50.000000"] / 1e3)
    if not vals:
        return None, None, 0
    return statistics.median(vals), statistics.median(p50s), len(vals)

def fmt(x):
    if x is None:
        return "-"
    return "%.0f" % x if x >= 100 else "%.1f" % x

def ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else "-"

print("## Device presets: model against datasheet, server against model")
print()
print("cfqsim: fifo, one job, %s of virtual time.  server: nbdkit"
      " scheduler=fifo emulate=PRESET backend=%s, fio nbd engine, one"
      " connection, median of %s rounds.  seq = 128 KiB reads at depth 32"
      " (MB/s); randN = 4 KiB random reads at depth N over the whole"
      " device (IOPS)." % (os.environ.get("PRESETS_SIM_DURATION", "30s"),
                           backend, rounds if server == "1" else "0"))
print()
if base:
    print("base: %s, run in the same rounds, alternating with this build."
          "  p50: completion latency in us (cfqsim's, fio's clat)." % base)
    print()
print("| preset | workload | published | cfqsim | cfqsim / published |"
      " server | server / cfqsim | p50 cfqsim | p50 server |" +
      (" base | base / cfqsim | p50 base | server / base |" if base else ""))
print("|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if base else ""))
sources = []
for p in presets.split():
    m = models[p]
    pub = m.get("published", {})
    ws = sorted({os.path.basename(f)[len("sim-%s-" % p):-5]
                           for f in glob.glob(os.path.join(raw, "sim-%s-*.json" % p))},
                key=lambda w: (w != "seq", int(w[4:]) if w != "seq" else 0))
    for w in ws:
        if w == "seq":
            want = pub.get("seq_mbs")
        else:
            want = next((r["iops"] for r in pub.get("rand", [])
                         if r["depth"] == int(w[4:])), None)
        s, sp50 = sim(p, w)
        v, vp50, n = srv(p, w) if server == "1" else (None, None, 0)
        line = "| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p, w, fmt(want), fmt(s), ratio(s, want), fmt(v), ratio(v, s),
            fmt(sp50), fmt(vp50))
        if base:
            bv, bp50, bn = srv(p, w, "base") if server == "1" else (None, None, 0)
            line += " %s | %s | %s | %s |" % (fmt(bv), ratio(bv, s), fmt(bp50),
                                              ratio(v, bv))
        print(line)
    if pub:
        sources.append("- %s (%s): %s" % (p, m["about"], pub["source"]))
print()
print("Sources:")
print("\n".join(sources))
EOF
