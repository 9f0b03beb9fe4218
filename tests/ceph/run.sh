#!/usr/bin/env bash
# tests/ceph/run.sh: the Ceph suite (make check-ceph): ONE single-node
# cluster (tests/ceph/cluster.sh) for all of tests/ceph/test-*.sh, run by
# tests/run.sh with CFQ_CEPH_CONF naming it, then stopped whatever happened.
#
#   tests/ceph/run.sh [TEST...]     default: every tests/ceph/test-*.sh
#
# CFQ_CEPH_PORT: the mon's port (default 3301).  CFQ_CEPH_CONF already set:
# that cluster is used and left running.  Where no cluster can run here
# (packages missing, not root) every test is reported skipped with the
# reason, as tests/run.sh reports a skip.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/ceph/test-*.sh)

if [ -n "${CFQ_CEPH_CONF:-}" ]; then
  exec tests/run.sh "${tests[@]}"
fi
rc=0
why=$(tests/ceph/cluster.sh check) || rc=$?
if [ "$rc" != 0 ]; then
  for t in "${tests[@]}"; do echo "SKIP: $(basename "$t"): $why"; done
  echo "0 passed, 0 failed, ${#tests[@]} skipped"
  exit 0
fi
dir=$(mktemp -d /tmp/cfq-ceph.XXXXXX)
trap 'tests/ceph/cluster.sh stop "$dir"; rm -rf "$dir"' EXIT
start=$(date +%s)
CFQ_CEPH_CONF=$(tests/ceph/cluster.sh start "$dir" "${CFQ_CEPH_PORT:-3301}") || {
  echo "tests/ceph/run.sh: the cluster did not start; its logs:" >&2
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
}
export CFQ_CEPH_CONF
echo "cluster up in $(( $(date +%s) - start )) s: $CFQ_CEPH_CONF"
tests/run.sh "${tests[@]}"
