# shellcheck shell=bash
# tests/sim/functions.sh: functions for the tests/test-sim-*.sh scenario tests.
#
# Each scenario runs tools/cfqsim --json on a scenario in tests/sim/ (the
# server's config format with [tenant NAME] and [sim] sections) with
# command-line overrides, then checks numbers with /usr/bin/python3.
# Sourced by the tests; sets $top, $SIM, $tmp (removed on exit).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SIM=$top/tools/cfqsim
JOBS=$top/tests/sim
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$SIM" ] || { echo "tools/cfqsim not built (run make)"; exit 1; }

# The scenario tests judge the CFQ policy: skip while it is not built in.
requires_cfq () {
  if ! "$SIM" --list-scheds | grep -qx cfq; then
    echo "cfq not built"
    exit 77
  fi
}

# simf OUT.json FILE [cfqsim options...]: run FILE (any path) and keep
# the JSON; sim OUT.json JOBFILE ...: the same for a job of tests/sim.
simf () {
  local out=$1 file=$2
  shift 2
  echo "+ cfqsim --json $* $(basename "$file") > $(basename "$out")"
  "$SIM" --json "$@" "$file" > "$out" 2> "$out.err" || {
    cat "$out.err"; echo "FAIL: cfqsim $* $file failed"; exit 1; }
}
sim () {
  local out=$1 job=$2
  shift 2
  simf "$out" "$JOBS/$job" "$@"
}

# check <<'PY' ... PY: run the Python checks read from stdin, after a
# prelude: J(name) loads $tmp/name.json, job(j, name) (a tenant) and
# group(j, name) pick entries, ok(cond, msg) asserts and prints.  Fails if
# any ok() failed.
check () {
  cat > "$tmp/check.py" <<'PYEOF'
import json, sys
tmp = sys.argv[1]
failed = []
def J(name):
    with open(f"{tmp}/{name}.json") as f:
        return json.load(f)
def job(j, name):
    return next(x for x in j["tenants"] if x["name"] == name)
def group(j, name):
    return next(x for x in j["groups"] if x["name"] == name)
def ok(cond, msg):
    print(("ok:   " if cond else "FAIL: ") + msg)
    if not cond:
        failed.append(msg)
PYEOF
  cat >> "$tmp/check.py"
  echo 'sys.exit(1 if failed else 0)' >> "$tmp/check.py"
  "$PY" "$tmp/check.py" "$tmp"
}
