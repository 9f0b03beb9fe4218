#!/usr/bin/env bash
# test-writes-auto.sh: writes=auto, the default, through the server.  NBD
# has no sync flag, so the policy's rule (core/sched.c) decides: a
# connection's plain writes are sync while it reads, flushes or writes FUA
# (they join its own queue), async when it only streams writes (the group's
# writeback queue).  The CFQ trace (-D cfq.trace=1) names the kind of every
# queue it makes active, so each case is checked from what CFQ served.
# (test-writes-sync-async.sh covers writes=async and writes=sync.)
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
plugin_is_ours || skip "needs our plugin's CFQ trace"
requires_python_nbd

img=$TESTDIR/disk.img
truncate -s 64M "$img"

# trace PYTHON: run one client, print the kinds of the queues CFQ made
# active for its writes, in order (the last one: after its reads/flushes).
trace ()
{
  local code=$1 log=$TESTDIR/trace-$RANDOM.log
  nbdkit -U - -f -v -D cfq.trace=1 "$CFQ_PLUGIN" file="$img" scheduler=cfq \
    --run "$PYTHON -c 'import nbd, sys
h = nbd.NBD()
h.connect_unix(sys.argv[1])
$code
h.shutdown()' \"\$unixsocket\"" >"$log" 2>&1 ||
    { cat "$log"; fail "client failed"; }
  sed -n 's/.*cfq\.trace: .*: active: \([a-z]*\) .*/\1/p' "$log"
}

got=$(trace 'h.pwrite(b"x" * 4096, 0)' | sort -u)
echo "writes only: $got"
[ "$got" = async ] || fail "a connection that only writes: queues '$got', want async"

got=$(trace 'h.pread(4096, 8192); h.pwrite(b"y" * 4096, 4096)' | sort -u)
echo "a read, then a write: $got"
[ "$got" = sync ] || fail "a write after a read: queues '$got', want sync"

got=$(trace 'h.pwrite(b"z" * 4096, 0); h.flush(); h.pwrite(b"w" * 4096, 4096)' | tr '\n' ' ')
echo "a write, a flush, a write: $got"
[ "$got" = "async sync " ] || fail "write, flush, write: queues '$got', want 'async sync'"

od -An -c -N1 -j 4096 "$img" | grep -q w || fail "the last write is not on the disk"
echo "writes=auto: sync after reads and flushes, async for a plain writer"
