#!/usr/bin/env bash
# test-writes-sync-async.sh: how an export's plain writes are classified.
#
# [export] writes=async sends a connection's plain writes to
# its group's shared async queue; writes=sync keeps them on the
# connection's own sync queue; FUA writes and flushes are sync either way.
# The CFQ trace (-D cfq.trace=1) names the kind of every queue it makes
# active, so each case is checked from what the scheduler actually served.
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
plugin_is_ours || skip "needs our plugin's CFQ trace"
requires_python_nbd

img=$TESTDIR/disk.img
truncate -s 64M "$img"
cat >"$TESTDIR/w.conf" <<CONF
[device]
file = $img
[scheduler]
scheduler = cfq
[group g]
[export a]
group = g
size = 32M
[export s]
group = g
offset = 32M
writes = sync
CONF

# trace EXPORT PYTHON: run one client on EXPORT, print the kinds of the
# queues CFQ made active, in order, one per line.
trace ()
{
  local exp=$1 code=$2 log=$TESTDIR/trace-$1-$RANDOM.log
  nbdkit -U - -f -v -D cfq.trace=1 "$CFQ_PLUGIN" config="$TESTDIR/w.conf" \
    --run "$PYTHON -c 'import nbd, sys
h = nbd.NBD(); h.set_export_name(\"$exp\")
h.connect_unix(sys.argv[1])
$code
h.shutdown()' \"\$unixsocket\"" >"$log" 2>&1 ||
    { cat "$log"; fail "client on export $exp failed"; }
  sed -n 's/.*cfq\.trace: .*: active: \([a-z]*\) .*/\1/p' "$log"
}

got=$(trace a 'h.pwrite(b"x" * 4096, 0)' | sort -u)
echo "export a (writes=async), plain write: $got"
[ "$got" = async ] || fail "plain write on a writes=async export: queues '$got', want async"

got=$(trace s 'h.pwrite(b"y" * 4096, 0)' | sort -u)
echo "export s (writes=sync), plain write: $got"
[ "$got" = sync ] || fail "plain write on a writes=sync export: queues '$got', want sync"

got=$(trace a 'h.pwrite(b"z" * 4096, 0, nbd.CMD_FLAG_FUA)' | sort -u)
echo "export a (writes=async), FUA write: $got"
[ "$got" = sync ] || fail "FUA write on a writes=async export: queues '$got', want sync"

got=$(trace a 'h.pread(4096, 0)' | sort -u)
echo "export a, read: $got"
[ "$got" = sync ] || fail "read: queues '$got', want sync"

# The data went where it should: a's first block and s's first block.
od -An -c -N1 "$img" | grep -q z || fail "export a's write is not at offset 0"
od -An -c -N1 -j $((32 << 20)) "$img" | grep -q y ||
  fail "export s's write is not at its region's start"
echo "writes= classifies plain writes; FUA writes and reads are sync"
