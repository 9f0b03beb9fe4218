#!/usr/bin/env bash
# test-policy-trace.sh: the scheduler sees the same requests whatever the
# data path, under one clock.
#
# The policy's request path is insert, dispatch, completed.  How a request
# gets to the device between dispatch and completed is the mechanism's
# business: the loop or the worker's direct path, O_DIRECT or the page
# cache (cache=page, done by the worker itself or by io_uring), io_uring
# or nothing (backend=null), a device model
# holding completions (emulate=) waited for by the loop or by the worker.
# None of that may change what the policy is told.  -D cfq.policy=1 logs
# every call of the request path (plugin/tenants.c, hook_policy): the
# call, the connection, op, offset, length, flags and the time it was
# given.  One deterministic client (two connections to two exports in two
# groups, 150 commands of every kind, 4 KiB-aligned, each waiting for its
# reply) runs against each data path, and:
#
#  1. in every run, the times given to the policy never go backwards, in
#     the order of the calls (one clock: a worker's pass and the loop's
#     are serialised by the engine lock, so anything else is a stale now);
#  2. in every run, each request is inserted, dispatched and completed
#     once, in that order, with nothing else in between (one command at a
#     time is in the server);
#  3. the sequence of (call, connection, op, offset, length, flags),
#     dispatches that handed out nothing left out, is the same in every
#     run as in the first (O_DIRECT, direct path on);
#  4. the comparison can fail: the same server with a client of another
#     seed gives a different sequence.
#
# Only aligned commands, one at a time: an unaligned write is a
# read-modify-write under O_DIRECT and one write under cache=page (by
# design), and with several requests in flight the completion order is
# the device's.
# timeout: 600
. "$(dirname "$0")/functions.sh"
requires_plugin
requires_python_nbd
[ "$(basename "$CFQ_PLUGIN")" = nbdkit-cfq-plugin.so ] ||
  skip "the policy trace is our plugin's (-D cfq.policy)"

size=$((32 << 20))
make_image "$TESTDIR/disk.img" $size
cat >"$TESTDIR/t.conf" <<EOF
[device]
file = disk.img
[group small]
weight = 200
[group large]
weight = 800
[export a]
group = small
size = 16M
[export b]
group = large
offset = 16M
EOF

# client SOCKET SEED: the deterministic workload.
client ()
{
  "$PYTHON" - "$1" "$2" <<'EOF'
import random, sys
import nbd

sock, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
hs = []
for name in ("a", "b"):                 # connections 1 and 2, in order
    h = nbd.NBD()
    h.set_export_name(name)
    h.connect_unix(sock)
    hs.append(h)
size = hs[0].get_size()
K = 4096
for i in range(150):
    h = hs[rng.randrange(2)]
    n = rng.choice((1, 1, 2, 16, 64, 256)) * K
    off = rng.randrange((size - n) // K + 1) * K
    what = rng.choice(("read", "read", "read", "write", "write", "fua",
                       "flush", "trim", "zero", "zero-nohole"))
    if what == "read":
        h.pread(n, off)
    elif what == "write":
        h.pwrite(bytes([i & 0xff]) * n, off)
    elif what == "fua":
        h.pwrite(bytes([i & 0xff]) * n, off, nbd.CMD_FLAG_FUA)
    elif what == "flush":
        h.flush()
    elif what == "trim":
        h.trim(n, off)
    elif what == "zero":
        h.zero(n, off)
    else:
        h.zero(n, off, nbd.CMD_FLAG_NO_HOLE)
for h in hs:
    h.shutdown()
EOF
}

# run NAME SEED PLUGIN-ARGS...: serve with the policy trace on, run the
# client, keep the trace in $TESTDIR/NAME.trace ("CALL FIELDS... now=NS").
run ()
{
  local name=$1 seed=$2 opts=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  start_nbdkit "$name" -v -D cfq.policy=1 "${opts[@]}" -- \
    config="$TESTDIR/t.conf" "$@"
  client "${NBDKIT_SOCK[$name]}" "$seed" || fail "$name: the client failed"
  stop_nbdkit "$name" 2>/dev/null
  [ "${NBDKIT_STATUS[$name]}" = 0 ] ||
    fail "$name: nbdkit exited with status ${NBDKIT_STATUS[$name]}"
  sed -n 's/^.*cfq\.policy: //p' "$TESTDIR/$name.log" >"$TESTDIR/$name.trace"
  echo "$name: $(grep -vc ' - ' "$TESTDIR/$name.trace") calls that moved a" \
    "request, $(grep -c ' - ' "$TESTDIR/$name.trace") empty dispatches"
}

# check NAME: properties 1 and 2 of one run's trace.
check ()
{
  awk -v name="$1" '
    { now = $NF; sub(/^now=/, "", now); now += 0 }
    NR > 1 && now < last {
      printf "FAIL: %s: line %d: now=%.0f after now=%.0f: the clock went back\n",
        name, NR, now, last; bad = 1
    }
    { last = now }
    $2 == "-" { next }
    {
      key = $0; sub(/ now=[0-9]+$/, "", key); sub(/^[a-z]+ /, "", key)
      want = state == 0 ? "insert" : state == 1 ? "dispatch" : "completed"
      if ($1 != want || (state > 0 && key != cur)) {
        printf "FAIL: %s: line %d: \"%s\", want %s of [%s]\n",
          name, NR, $0, want, state ? cur : "a new request"; bad = 1; exit
      }
      cur = key; state = (state + 1) % 3; n++
    }
    END {
      if (!bad && state != 0) {
        printf "FAIL: %s: the last request was not completed\n", name; bad = 1
      }
      if (!bad && n < 3 * 150) {
        printf "FAIL: %s: %d calls, want at least %d\n", name, n, 3 * 150
        bad = 1
      }
      exit bad
    }' "$TESTDIR/$1.trace" || fail "$1: the trace is wrong (see $TESTDIR/$1.trace)"
}

# seq NAME: what is compared between runs (no times, no empty dispatches).
seq_of ()
{
  grep -v '^dispatch - ' "$TESTDIR/$1.trace" | sed 's/ now=[0-9]*$//'
}

names=()
variant ()
{
  names+=("$1")
  run "$@"
  check "$1"
}

variant direct 7 --
variant loop 7 -D cfq.direct=0 --
variant page 7 -- cache=page
variant page_loop 7 -D cfq.direct=0 -- cache=page
variant page_ring 7 -D cfq.inline=0 -- cache=page
variant page_loop_ring 7 -D cfq.direct=0 -D cfq.inline=0 -- cache=page
variant null 7 -- backend=null
variant emu 7 -- emulate=ssd
variant emu_loop 7 -D cfq.direct=0 -- emulate=ssd
variant emu_null 7 -- emulate=ssd backend=null
variant emu_page 7 -- emulate=ssd cache=page

# The variants took the paths they name: with cache=page the workers did
# their own reads and writes (the inline path), and with cfq.inline=0 the
# ring did them (engine.c; the dispatcher's counters at exit).
inline_ops ()
{
  sed -n 's/^.* \([0-9][0-9]*\) done inline (.*$/\1/p' "$TESTDIR/$1.log"
}
for n in page page_loop emu_page; do
  [ "$(inline_ops $n)" -gt 0 ] 2>/dev/null ||
    fail "$n: no request was done inline (\"$(inline_ops $n)\")"
done
for n in direct page_ring page_loop_ring; do
  [ "$(inline_ops $n)" = 0 ] ||
    fail "$n: $(inline_ops $n) requests were done inline, want 0"
done
echo "cache=page: $(inline_ops page) requests done inline; page_ring: 0"

# Every kind of request, both connections: the workload covers what it says
# (a FUA write of a writes=auto export is flags 0x13: RQ_AUTO, RQ_FUA, RQ_SYNC).
for w in "op=read" "op=write" "op=flush" "op=trim" "op=zero" "conn=1" \
         "conn=2" "flags=0x13"; do
  grep -q " $w " "$TESTDIR/direct.trace" || fail "the workload has no $w request"
done

seq_of direct >"$TESTDIR/direct.seq"
for n in "${names[@]}"; do
  seq_of "$n" >"$TESTDIR/$n.seq"
  if ! cmp -s "$TESTDIR/direct.seq" "$TESTDIR/$n.seq"; then
    diff "$TESTDIR/direct.seq" "$TESTDIR/$n.seq" | head -20
    fail "$n: the policy saw another sequence than with O_DIRECT and the direct path"
  fi
  echo "$n: the same $(wc -l <"$TESTDIR/$n.seq") calls as direct"
done

# The comparison is not blind: another workload, another sequence.
run other 8 --
check other
seq_of other >"$TESTDIR/other.seq"
! cmp -s "$TESTDIR/direct.seq" "$TESTDIR/other.seq" ||
  fail "seed 8 gave the same sequence as seed 7: the comparison sees nothing"
echo "seed 8: a different sequence, as it should"
