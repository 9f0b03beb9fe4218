#!/usr/bin/env bash
# test-lab-clients.sh: the lab's own file-system clients (tools/cfqlab
# --client), without a server or a mount: each in a directory whose path
# is long, as the lab's are (RESULTS/runs/r1-cfq/mnt-TENANT/).
#  - fs_mark runs loops and reports files/s: it refuses a directory name of
#    40 bytes or more with its usage, which the lab took for "fs_mark
#    finished no loop" and failed every fs_mark scenario (seed000-fsmark*);
#    the client now gives it a short path to the directory;
#  - fsync-tester and dd write and report their requests.
# Each client runs about a second; nothing here is a speed.
# timeout: 120
. "$(dirname "$0")/functions.sh"
[ -x "$top/tools/cfqlab" ] || fail "tools/cfqlab is missing"

dir=$TESTDIR/results/runs/r1-cfq/mnt-a-tenant-with-a-long-name
mkdir -p "$dir"
[ "${#dir}" -ge 40 ] || fail "the test directory $dir is not long enough"

# client WORKLOAD: run it for about a second; its JSON lines in WORKLOAD.jsonl.
client ()
{
  local w=$1 out=$TESTDIR/$1.jsonl
  "$PYTHON" -c 'import time; print(time.time())' |
    "$PYTHON" "$top/tools/cfqlab" --client "$w" --client-out "$out" \
      --client-dir "$dir" --client-start 0.2 --client-stop 1.5 \
      --client-bs 65536 --client-threads 1 --client-think 0.01 x \
      >"$TESTDIR/$w.stdout" 2>"$TESTDIR/$w.stderr" ||
    { cat "$TESTDIR/$w.stderr"; fail "the $w client failed"; }
  "$PYTHON" - "$out" "$w" <<'EOF' || { cat "$TESTDIR/$w.stderr"; fail "the $w client did no work"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
done = [r for r in recs if r.get("kind") == "done"]
assert done, "no done record"
d = done[-1]
print("%s: %d requests, %d bytes, error %r, metric %r"
      % (sys.argv[2], d["ios"], d["bytes"], d.get("error"), d.get("metric")))
assert d.get("error") is None, d["error"]
assert d["ios"] > 0 and d["bytes"] > 0
EOF
}

if command -v fs_mark >/dev/null; then
  client fs_mark
else
  echo "fs_mark not installed: its client not tested"
fi
client fsync-tester
client dd
echo "== the lab's file-system clients work in a long directory"
