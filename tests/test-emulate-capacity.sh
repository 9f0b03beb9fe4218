#!/usr/bin/env bash
# test-emulate-capacity.sh: an emulated disk's capacity is the device's
# size unless model.capacity gives one, in the config file or on the
# command line (the seeks between the exports' regions depend on it: a
# region of a 1 TiB disk, as cfqsim models it, seeks far less than the
# same region spanning a disk of its own size).  The server says which
# in its stats (device "model").
# timeout: 60
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires

make_sparse "$TESTDIR/disk.img" 64M
cat >"$TESTDIR/size.conf" <<EOF2
[device]
file = $TESTDIR/disk.img
emulate = hdd
[export a]
size = 32M
EOF2
sed 's/^emulate = hdd$/&\nmodel.capacity = 1T/' "$TESTDIR/size.conf" \
  >"$TESTDIR/file.conf"
grep -q '^model.capacity = 1T$' "$TESTDIR/file.conf" || fail "file.conf"

failures=0
# model NAME: the device's model line in server NAME's stats.
model ()
{
  stats_json "$1" | /usr/bin/python3 -c \
    'import json, sys; print(json.load(sys.stdin)["device"]["model"])'
}
# expect NAME CAPACITY
expect ()
{
  local m
  m=$(model "$1")
  echo "-- $1: $m"
  case " $m " in
    *" capacity=$2 "*) ;;
    *) echo "   WRONG: want capacity=$2"; failures=$((failures + 1)) ;;
  esac
  stop_nbdkit "$1"
}

tenant_start size "$TESTDIR/size.conf"
expect size 64M
tenant_start file "$TESTDIR/file.conf"
expect file 1T
tenant_start cmdline "$TESTDIR/size.conf" model.capacity=2T
expect cmdline 2T
tenant_start both "$TESTDIR/file.conf" model.capacity=2T
expect both 2T

[ "$failures" = 0 ] || fail "$failures wrong"
echo "ok"
