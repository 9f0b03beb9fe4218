#!/usr/bin/env bash
# test-control-args.sh: cfqctl takes what its help shows.
#
#  1. "set KEY VALUE", "set KEY=VALUE" and "set KEY 4 ms" (a unit as a
#     word of its own) all change the tunable; so do "qos GROUP KEY VALUE"
#     and "qos GROUP KEY=VALUE", for a cap and for a latency target;
#  2. a command line that is not one is refused in one line saying what is
#     wrong (exit 2, no usage text);
#  3. a mistyped key or command is answered with the nearest valid one,
#     by cfqctl, by the control socket and by the plugin's parameters.
# timeout: 60
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires

make_sparse "$TESTDIR/disk.img" 64M
cat >"$TESTDIR/args.conf" <<'EOF'
[device]
file = disk.img

[group bronze]
weight = 200

[export e]
group = bronze
EOF
tenant_start srv "$TESTDIR/args.conf"

# get_val KEY: the value cfqctl prints for KEY.
get_val () { ctl srv get "$1" | sed -n "s/^$1=//p"; }
# qos_val KEY: KEY's value in "qos bronze".
qos_val () { ctl srv qos bronze | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# said RC WANT ARGS...: cfqctl ARGS exits RC saying exactly the line WANT.
said ()
{
  local want_rc=$1 want=$2 rc=0; shift 2
  ctl srv "$@" >"$TESTDIR/o" 2>"$TESTDIR/e" || rc=$?
  [ "$rc" = "$want_rc" ] || fail "cfqctl $*: exit $rc, want $want_rc"
  [ "$(cat "$TESTDIR/e")" = "$want" ] ||
    fail "cfqctl $*: said '$(cat "$TESTDIR/e")', want '$want'"
  echo "cfqctl $*: $want"
}

# ---- 1. every spelling of KEY VALUE ------------------------------------------
ctl srv set slice_idle 3ms >/dev/null || fail "set slice_idle 3ms refused"
[ "$(get_val slice_idle)" = 3ms ] || fail "slice_idle: $(get_val slice_idle)"
ctl srv set slice_idle=5ms || fail "set slice_idle=5ms refused"
[ "$(get_val slice_idle)" = 5ms ] || fail "slice_idle=5ms: $(get_val slice_idle)"
ctl srv set slice_idle 4 ms || fail "set slice_idle 4 ms refused"
[ "$(get_val slice_idle)" = 4ms ] || fail "slice_idle 4 ms: $(get_val slice_idle)"
ctl srv set slice_idle= 6 ms || fail "set slice_idle= 6 ms refused"
[ "$(get_val slice_idle)" = 6ms ] || fail "slice_idle= 6 ms: $(get_val slice_idle)"
ctl srv qos bronze iops_max=500 || fail "qos bronze iops_max=500 refused"
[ "$(qos_val iops_max)" = 500 ] || fail "iops_max=500: $(ctl srv qos bronze)"
ctl srv qos bronze iops_max 600 || fail "qos bronze iops_max 600 refused"
[ "$(qos_val iops_max)" = 600 ] || fail "iops_max 600: $(ctl srv qos bronze)"
ctl srv qos bronze bps_max 20 MiB/s || fail "qos bronze bps_max 20 MiB/s refused"
[ "$(qos_val bps_max)" = 20Mi ] || fail "bps_max 20 MiB/s: $(ctl srv qos bronze)"
ctl srv qos bronze latency_target 5 ms || fail "qos bronze latency_target 5 ms refused"
ctl srv qos bronze latency_percentile=99 || fail "qos bronze latency_percentile=99 refused"
[ "$(qos_val latency_target)" = 5ms ] && [ "$(qos_val latency_percentile)" = 99 ] ||
  fail "latency_target 5 ms, latency_percentile=99: $(ctl srv qos bronze)"
echo "set and qos: KEY VALUE, KEY=VALUE and a unit word all taken"

# ---- 2. what is wrong, in one line ---------------------------------------------
said 2 "cfqctl: set: 'x' after the value (want KEY VALUE or KEY=VALUE)" \
  set slice_idle 4 ms x
said 2 "cfqctl: set: 'ms' after the value 'x4' (want KEY VALUE or KEY=VALUE, a unit written as in 4ms)" \
  set slice_idle x4 ms
said 2 "cfqctl: set: slice_idle: missing value" set slice_idle
said 2 "cfqctl: set: missing KEY VALUE" set
said 2 "cfqctl: qos: iops_max: missing value" qos bronze iops_max
said 2 "cfqctl: weight: want weight GROUP WEIGHT" weight bronze
said 2 "cfqctl: unknown command 'stast' (did you mean 'stats'?)" stast

# ---- 3. did you mean --------------------------------------------------------------
said 1 "cfqctl: slice_idel: unknown key (did you mean 'slice_idle'?)" set slice_idel 4ms
said 1 "cfqctl: slice_idel: unknown key (did you mean 'slice_idle'?)" get slice_idel
said 1 "cfqctl: qos iopsmax: unknown key (did you mean 'iops_max'?)" qos bronze iopsmax 5
said 1 "cfqctl: qos latency_targte: unknown key (did you mean 'latency_target'?)" \
  qos bronze latency_targte 5ms

# ---- the stats table ----------------------------------------------------------------
# Nothing moved: no share beside an IOPS of 0; the latency says what it
# covers; the device's fields come one group a line.
ctl srv stats >"$TESTDIR/t" || fail "stats failed"
cat "$TESTDIR/t"
awk '$1 == "group" && $2 == "bronze" { exit !($4 == "0.0" && $6 == "-") }' \
  "$TESTDIR/t" || fail "stats: an idle group has a share: $(grep bronze "$TESTDIR/t")"
grep -q "the NBD round trip" "$TESTDIR/t" || fail "stats: latency not explained"
grep -qE '^device +scheduler=cfq ' "$TESTDIR/t" &&
  grep -qE '^buffers +buffers_in_use=' "$TESTDIR/t" ||
  fail "stats: the device line is not in groups"
[ "$(awk 'length > 120' "$TESTDIR/t" | wc -l)" = 0 ] ||
  fail "stats: lines over 120 columns: $(awk 'length > 120' "$TESTDIR/t")"
stop_nbdkit srv
[ "${NBDKIT_STATUS[srv]}" = 0 ] || fail "nbdkit exited with status ${NBDKIT_STATUS[srv]}"

# The plugin's own parameters, mistyped on nbdkit's command line.
rc=0
${NBDKIT_WRAPPER:-} nbdkit -f -U "$TESTDIR/x.sock" "$CFQ_PLUGIN" \
  file="$TESTDIR/disk.img" controll="$TESTDIR/x.ctl" --run true \
  >"$TESTDIR/o" 2>"$TESTDIR/e" || rc=$?
[ "$rc" != 0 ] || fail "controll= accepted"
grep -qF "controll=$TESTDIR/x.ctl: unknown key (did you mean 'control'?)" "$TESTDIR/e" ||
  fail "controll=: $(cat "$TESTDIR/e")"
echo "controll=: $(cat "$TESTDIR/e")"
echo "== cfqctl takes KEY VALUE and KEY=VALUE and says what is wrong in one line"
