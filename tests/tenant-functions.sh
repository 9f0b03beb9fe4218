# shellcheck shell=bash
# tests/tenant-functions.sh: functions for the tests that serve a config with
# tenants and a control socket, on top of tests/functions.sh (which it
# sources).
#
#   . "$(dirname "$0")/tenant-functions.sh"
#   control_start srv KEY=VALUE...        start_nbdkit with a control
#                                         socket NBDKIT_CTL[srv]
#   tenant_start srv CONF [KEY=VALUE...]  control_start on config=CONF
#   export_uri srv NAME                   nbd+unix:///NAME?socket=...
#   ctl srv COMMAND...                    tools/cfqctl on srv's control
#                                         socket
#   stats_json srv > FILE                 one "stats" answer (JSON)
#   randread_job, fio_start, fio_wait     see below
#   shares_run srv SECONDS EXPORT...      fio on each export, stats
#                                         before and after (check_shares)
#
# Only our plugin has configs, tenants and a control socket: these tests
# skip when CFQ_PLUGIN names one of nbdkit's own plugins.

. "$(dirname "${BASH_SOURCE[0]}")/functions.sh"

CFQCTL=$top/tools/cfqctl
declare -A NBDKIT_CTL=()                # NAME -> its control socket

tenant_requires ()
{
  plugin_is_ours || skip "multi-tenant tests need our plugin (CFQ_PLUGIN=$CFQ_PLUGIN)"
  requires_plugin
  [ -x "$CFQCTL" ] || fail "$CFQCTL is not built (run make)"
}

# control_start NAME KEY=VALUE...: start_nbdkit NAME with a control socket
# NAME.ctl, recorded in NBDKIT_CTL[NAME] for ctl, once it listens.
control_start ()
{
  local name=$1; shift
  start_nbdkit "$name" "$@" control="$TESTDIR/$name.ctl"
  NBDKIT_CTL[$name]=$TESTDIR/$name.ctl
  wait_for "control socket ${NBDKIT_CTL[$name]}" 30 test -S "${NBDKIT_CTL[$name]}"
}

# tenant_start NAME CONF [KEY=VALUE...]: serve CONF on NAME.sock with a control
# socket NAME.ctl; extra arguments are overrides / plugin parameters.
tenant_start ()
{
  local name=$1 conf=$2; shift 2
  control_start "$name" config="$conf" "$@"
}

# export_uri NAME EXPORT: the URI of EXPORT on server NAME's Unix socket.
export_uri ()
{
  echo "nbd+unix:///$2?socket=${NBDKIT_SOCK[$1]}"
}

# ctl NAME ARGS...: cfqctl on server NAME's control socket.
ctl ()
{
  local name=$1; shift
  "$CFQCTL" -s "${NBDKIT_CTL[$name]}" "$@"
}

# stats_json NAME: the "stats" JSON answer on stdout (fails the test if the
# command fails).
stats_json ()
{
  ctl "$1" stats --json || fail "cfqctl stats --json failed"
}

# conns NAME [EXPORT]: how many connections the stats list (of EXPORT
# only, if given); conns_are NAME N [EXPORT]: whether that is N.
conns ()
{
  stats_json "$1" | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(sum(1 for c in d["connections"] if len(sys.argv) < 2 or c["export"] == sys.argv[1]))' "${@:2}"
}
conns_are ()
{
  [ "$(conns "$1" "${@:3}")" = "$2" ]
}

# make_sparse PATH SIZE: a sparse file (for large devices whose contents
# do not matter).
make_sparse ()
{
  rm -f "$1"
  truncate -s "$2" "$1" || fail "cannot make $1"
}

# The python functions every stats check uses, in $TESTDIR/srvstats.py:
#   load(path) -> dict; entries(doc, "groups"|"exports") -> {name: dict}
#   num(entry, "bytes", "read") etc.: tolerant of the two shapes the spec
#   allows ({"bytes": {"read": N}} or {"read_bytes": N} / {"bytes_read": N});
#   check_shares(src, got, weights, band, bad): shares of bytes against
#   the weights' shares.
cat >"$TESTDIR/srvstats.py" <<'EOF'
import json, sys

def load(path):
    with open(path) as f:
        return json.loads(f.read())

def entries(doc, kind):
    """{name: entry} for doc[kind], a list of objects with "name" or a dict."""
    v = doc[kind]
    if isinstance(v, dict):
        return dict(v)
    out = {}
    for e in v:
        out[e["name"]] = e
    return out

# "reqs" is spelt "requests" in the server's JSON.
ALIASES = {"reqs": ("reqs", "requests")}

def has(e, *path):
    try:
        num(e, *path)
        return True
    except KeyError:
        return False

def num(e, *path):
    """num(e, "iops"), num(e, "bytes", "read"), num(e, "p99_ms")."""
    if len(path) == 1:
        k = path[0]
        if k in e:
            return float(e[k])
        for sub in ("lat", "latency", "latency_ms"):
            if isinstance(e.get(sub), dict):
                s = e[sub]
                for kk in (k, k.replace("_ms", "")):
                    if kk in s:
                        return float(s[kk])
        raise KeyError(k)
    a, b = path
    for aa in ALIASES.get(a, (a,)):
        if isinstance(e.get(aa), dict) and b in e[aa]:
            return float(e[aa][b])
    for k in ("%s_%s" % (b, a), "%s_%s" % (a, b)):
        if k in e:
            return float(e[k])
    raise KeyError("%s.%s" % (a, b))

def total(e, what):
    """Total reqs or bytes over every type."""
    v = None
    for w in ALIASES.get(what, (what,)):
        if w in e:
            v = e[w]
    if isinstance(v, dict):
        if "total" in v:
            return float(v["total"])
        return sum(float(x) for x in v.values())
    return sum(num(e, what, t) for t in ("read", "write", "trim", "zero", "flush")
               if has(e, what, t))

def check_shares(src, got, weights, band, bad, label=""):
    """Each key's share of got's sum (bytes) within band (relative) of its
    weight's share: a line printed each, what is off appended to bad."""
    want = {k: w / sum(weights.values()) for k, w in weights.items()}
    s = sum(got.values())
    assert s > 0, "%s: no bytes at all" % src
    for k in weights:
        share = got[k] / s
        rel = abs(share - want[k]) / want[k]
        print("%s%-6s %-7s weight %3d  bytes %12d  share %5.1f%%  want %5.1f%%"
              "  (%+.1f%% rel) %s" % (label, src, k, weights[k], got[k],
                                     100 * share, 100 * want[k],
                                     100 * (share - want[k]) / want[k],
                                     "ok" if rel <= band else "OFF"))
        if rel > band:
            bad.append("%s %s: share %.1f%%, want %.1f%% +-%g%% rel"
                       % (src, k, 100 * share, 100 * want[k], 100 * band))
EOF

# shares_run SRV SECONDS EXPORT...: randread_job on each EXPORT of SRV for
# SECONDS after a 3 s ramp, with SRV's "stats" after the ramp
# ($TESTDIR/s1.json) and 5 s before the end (s2.json); fio's results in
# $TESTDIR/fio.json.  For check_shares.
shares_run ()
{
  local srv=$1 secs=$2 ramp=3; shift 2
  randread_job "$TESTDIR/$srv.fio" "$secs" "$ramp" "$srv" "$@"
  fio_start "$TESTDIR/$srv.fio"
  sleep $((ramp + 2))
  stats_json "$srv" >"$TESTDIR/s1.json"
  sleep $((secs - 5))
  stats_json "$srv" >"$TESTDIR/s2.json"
  fio_wait
}

# randread_job FILE SECONDS RAMP SRV EXPORT...: a fio job file with one
# job per export of server SRV, each 4k random reads 32 deep over NBD,
# time-based, SECONDS measured after RAMP unmeasured (0: none).
randread_job ()
{
  local file=$1 secs=$2 ramp=$3 srv=$4 e; shift 4
  {
    printf '[global]\nioengine=nbd\nrw=randread\nbs=4k\niodepth=32\n'
    printf 'time_based=1\nruntime=%s\n' "$secs"
    [ "$ramp" = 0 ] || printf 'ramp_time=%s\n' "$ramp"
    for e in "$@"; do
      printf '[%s]\nuri=%s\n' "$e" "$(export_uri "$srv" "$e")"
    done
  } >"$file"
}

# fio_start JOBFILE: run fio on JOBFILE in the background, JSON results to
# $TESTDIR/fio.json and its log to $TESTDIR/fio.log; killed on exit.
# fio_wait: wait for it, failing the test with the log's tail if fio failed.
fio_start ()
{
  fio --output-format=json --output="$TESTDIR/fio.json" "$1" \
    >"$TESTDIR/fio.log" 2>&1 &
  fio_pid=$!
  cleanup_fn kill "$fio_pid"
}
fio_wait ()
{
  wait "$fio_pid" || fail "fio failed: $(tail -20 "$TESTDIR/fio.log")"
}

# failing_ext4: an ext4 (no journal, errors=continue: only data
# write-back fails) mounted on $TESTDIR/mnt, whose device refuses every
# write with EIO while $TESTDIR/wtrig exists: nbdkit's memory plugin
# behind its error filter (server "dev"), as a file through nbdfuse, on a
# loop device.  Skips without root, /dev/fuse, nbdfuse, a loop device,
# mkfs.ext4 or the error filter.
failing_ext4 ()
{
  local devsize=$((64 << 20))
  requires_fuse
  requires_loop
  requires_cmd nbdfuse mkfs.ext4
  nbdkit -U - --filter=error memory 1M --run true >/dev/null 2>&1 </dev/null ||
    skip "nbdkit cannot run '--filter=error memory'"
  CFQ_PLUGIN=memory start_nbdkit dev --filter=error -- size="$devsize" \
    error-pwrite=EIO error-pwrite-rate=100% error-pwrite-file="$TESTDIR/wtrig"
  fuse_start "$TESTDIR/fuse/disk" "$devsize" --unix "${NBDKIT_SOCK[dev]}"
  loop_attach "$TESTDIR/fuse/disk"
  mkfs.ext4 -q -F -O ^has_journal "$LOOPDEV" || skip "mkfs.ext4 failed"
  mkdir -p "$TESTDIR/mnt"
  mount -o errors=continue "$LOOPDEV" "$TESTDIR/mnt" ||
    skip "cannot mount ext4 on $LOOPDEV"
  cleanup_fn umount -l "$TESTDIR/mnt"
}
